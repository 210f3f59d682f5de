package samtemplate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// noValue is what AWS::NoValue resolves to: the property or list element
// holding it is dropped.
type noValue struct{}

// Intrinsics are the intrinsic functions the reader evaluates: those
// template.yaml uses (Ref, Fn::GetAtt, Fn::Sub, Fn::Join; Fn::Select and
// Fn::Split to take the stack's unique ID for the queue names), and the
// conditions and mappings of a region-dependent setting (Condition, Fn::If,
// Fn::Equals, Fn::Not, Fn::And, Fn::FindInMap, with the DefaultValue of
// AWS::LanguageExtensions; as CloudFormation does, every Fn::FindInMap is
// evaluated in both branches of an Fn::If), and in the assertions of Rules,
// which [Template.Check] evaluates, Fn::Contains and Fn::EachMemberEquals.
// Any other fails the template's resolution, naming the function.
var Intrinsics = []string{"Ref", "Fn::GetAtt", "Fn::Sub", "Fn::Join", "Fn::Select", "Fn::Split", "Condition", "Fn::If", "Fn::Equals", "Fn::Not", "Fn::And", "Fn::FindInMap", "Fn::Contains", "Fn::EachMemberEquals"}

// evaluator resolves CloudFormation intrinsic functions against parameter
// values, conditions and the local names of resources.
type evaluator struct {
	t          *Template
	params     map[string]any // string, or []string for list parameters
	conditions map[string]bool
	evaluating map[string]bool
	// rules is set while the Rules are evaluated: they refer to
	// parameters and pseudo parameters only, and alone take Fn::Contains.
	rules bool
}

func (e *evaluator) pseudo(name string) (any, bool) {
	o := e.t.opts
	switch name {
	case "AWS::Region":
		return o.Region, true
	case "AWS::AccountId":
		return o.AccountID, true
	case "AWS::StackName":
		return o.StackName, true
	case "AWS::StackId":
		if o.StackID != "" {
			return o.StackID, true
		}
		// The last part of a real stack ID is a UUID; "local" keeps the
		// names built from it short and the same on every run.
		return fmt.Sprintf("arn:aws:cloudformation:%s:%s:stack/%s/local", o.Region, o.AccountID, o.StackName), true
	case "AWS::Partition":
		return "aws", true
	case "AWS::URLSuffix":
		return "amazonaws.com", true
	case "AWS::NoValue":
		return noValue{}, true
	}
	return nil, false
}

// resolve returns v with every intrinsic function evaluated.
func (e *evaluator) resolve(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 1 {
			for k, arg := range v {
				if k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::") {
					return e.intrinsic(k, arg)
				}
			}
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			r, err := e.resolve(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if _, drop := r.(noValue); !drop {
				out[k] = r
			}
		}
		return out, nil
	case []any:
		out := make([]any, 0, len(v))
		for _, x := range v {
			r, err := e.resolve(x)
			if err != nil {
				return nil, err
			}
			if _, drop := r.(noValue); !drop {
				out = append(out, r)
			}
		}
		return out, nil
	default:
		return v, nil
	}
}

func (e *evaluator) intrinsic(name string, arg any) (any, error) {
	if f, ok := intrinsicFuncs[name]; ok {
		return f(e, name, arg)
	}
	return nil, fmt.Errorf("%s is not evaluated by the local template reader, which knows %s only: "+
		"if the template needs it, add it to internal/samtemplate/eval.go with a test", name, strings.Join(Intrinsics, ", "))
}

// intrinsicFuncs evaluate each of [Intrinsics], given its name and its
// argument as written. It is filled by init: its functions call back into
// the evaluator, which reads it.
var intrinsicFuncs map[string]func(e *evaluator, name string, arg any) (any, error)

func init() {
	intrinsicFuncs = map[string]func(e *evaluator, name string, arg any) (any, error){
		"Ref": func(e *evaluator, _ string, arg any) (any, error) {
			s, ok := arg.(string)
			if !ok {
				return nil, fmt.Errorf("a Ref wants a name, not %v", arg)
			}
			return e.ref(s)
		},
		"Condition": func(e *evaluator, _ string, arg any) (any, error) {
			s, ok := arg.(string)
			if !ok {
				return nil, fmt.Errorf("a Condition wants a name, not %v", arg)
			}
			return e.condition(s)
		},
		"Fn::GetAtt": func(e *evaluator, _ string, arg any) (any, error) {
			a, err := e.resolve(arg)
			if err != nil {
				return nil, err
			}
			l, ok := a.([]any)
			if !ok || len(l) != 2 {
				return nil, fmt.Errorf("Fn::GetAtt wants [resource, attribute], not %v", arg)
			}
			return e.getAtt(fmt.Sprint(l[0]), fmt.Sprint(l[1]))
		},
		"Fn::Sub":              func(e *evaluator, _ string, arg any) (any, error) { return e.sub(arg) },
		"Fn::Select":           (*evaluator).selectItem,
		"Fn::Split":            (*evaluator).split,
		"Fn::If":               func(e *evaluator, _ string, arg any) (any, error) { return e.ifThen(arg) },
		"Fn::Equals":           (*evaluator).equals,
		"Fn::Not":              (*evaluator).not,
		"Fn::Contains":         (*evaluator).contains,
		"Fn::Join":             (*evaluator).join,
		"Fn::And":              (*evaluator).and,
		"Fn::EachMemberEquals": (*evaluator).eachMemberEquals,
		"Fn::FindInMap":        func(e *evaluator, _ string, arg any) (any, error) { return e.findInMap(arg) },
	}
}

// selectItem evaluates Fn::Select: [index, list].
func (e *evaluator) selectItem(name string, arg any) (any, error) {
	l, err := e.list(arg, 2, name)
	if err != nil {
		return nil, err
	}
	i, err := strconv.Atoi(fmt.Sprint(l[0]))
	items, ok := l[1].([]any)
	if err != nil || !ok || i < 0 || i >= len(items) {
		return nil, fmt.Errorf("Fn::Select wants [index, list] with the index in the list, not %v", l)
	}
	return items[i], nil
}

// split evaluates Fn::Split: [delimiter, string].
func (e *evaluator) split(name string, arg any) (any, error) {
	l, err := e.list(arg, 2, name)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(fmt.Sprint(l[1]), fmt.Sprint(l[0]))
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

// ifThen evaluates Fn::If: [condition, then, else]. CloudFormation
// resolves Fn::FindInMap in both branches: a key missing from the branch
// not taken fails the stack too, and fails here.
func (e *evaluator) ifThen(arg any) (any, error) {
	raw, ok := arg.([]any)
	if !ok || len(raw) != 3 {
		return nil, fmt.Errorf("Fn::If wants [condition, then, else]")
	}
	c, err := e.condition(fmt.Sprint(raw[0]))
	if err != nil {
		return nil, err
	}
	taken, other := raw[1], raw[2]
	if !c {
		taken, other = other, taken
	}
	if err := e.checkMaps(other); err != nil {
		return nil, fmt.Errorf("Fn::If on %v, the branch not taken: %w", raw[0], err)
	}
	return e.resolve(taken)
}

// equals evaluates Fn::Equals: [a, b].
func (e *evaluator) equals(name string, arg any) (any, error) {
	l, err := e.list(arg, 2, name)
	if err != nil {
		return nil, err
	}
	return fmt.Sprint(l[0]) == fmt.Sprint(l[1]), nil
}

// not evaluates Fn::Not: [condition].
func (e *evaluator) not(name string, arg any) (any, error) {
	l, err := e.list(arg, 1, name)
	if err != nil {
		return nil, err
	}
	b, ok := l[0].(bool)
	if !ok {
		return nil, fmt.Errorf("Fn::Not: %v is not a condition", l[0])
	}
	return !b, nil
}

// join evaluates Fn::Join: [delimiter, list].
func (e *evaluator) join(name string, arg any) (any, error) {
	l, err := e.list(arg, 2, name)
	if err != nil {
		return nil, err
	}
	items, err := strings_(l[1])
	if err != nil {
		return nil, fmt.Errorf("Fn::Join wants [delimiter, list], not %v", l)
	}
	return strings.Join(items, fmt.Sprint(l[0])), nil
}

// and evaluates Fn::And: [condition, …], 2 to 10 of them.
func (e *evaluator) and(name string, arg any) (any, error) {
	raw, ok := arg.([]any)
	if !ok || len(raw) < 2 || len(raw) > 10 {
		return nil, fmt.Errorf("Fn::And wants 2 to 10 conditions, not %v", arg)
	}
	all := true
	for _, c := range raw {
		b, err := e.boolean(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		all = all && b
	}
	return all, nil
}

// eachMemberEquals evaluates Fn::EachMemberEquals: [list, value], in the
// assertions of Rules only: true when every member of the list is value
// (an empty list too).
func (e *evaluator) eachMemberEquals(name string, arg any) (any, error) {
	if !e.rules {
		return nil, fmt.Errorf("Fn::EachMemberEquals belongs in the assertions of Rules only")
	}
	l, err := e.list(arg, 2, name)
	if err != nil {
		return nil, err
	}
	items, err := strings_(l[0])
	if err != nil {
		return nil, fmt.Errorf("Fn::EachMemberEquals wants [list, value], not %v", l)
	}
	for _, x := range items {
		if x != fmt.Sprint(l[1]) {
			return false, nil
		}
	}
	return true, nil
}

// contains evaluates Fn::Contains: [list, value], in the assertions of
// Rules only, as CloudFormation allows it.
func (e *evaluator) contains(name string, arg any) (any, error) {
	if !e.rules {
		return nil, fmt.Errorf("Fn::Contains belongs in the assertions of Rules only")
	}
	l, err := e.list(arg, 2, name)
	if err != nil {
		return nil, err
	}
	items, ok := l[0].([]any)
	if !ok {
		return nil, fmt.Errorf("Fn::Contains wants [list, value], not %v", l)
	}
	for _, x := range items {
		if fmt.Sprint(x) == fmt.Sprint(l[1]) {
			return true, nil
		}
	}
	return false, nil
}

// findInMap evaluates Fn::FindInMap [map, top key, second key] and, with
// the AWS::LanguageExtensions transform, [map, top key, second key,
// {DefaultValue: v}], which returns v when a key is missing.
func (e *evaluator) findInMap(arg any) (any, error) {
	raw, ok := arg.([]any)
	if !ok || (len(raw) != 3 && len(raw) != 4) {
		return nil, fmt.Errorf("Fn::FindInMap wants [map, top key, second key] and an optional {DefaultValue}, not %v", arg)
	}
	l, err := e.list(raw[:3], 3, "Fn::FindInMap")
	if err != nil {
		return nil, err
	}
	m, _ := e.t.raw["Mappings"].(map[string]any)
	top, _ := m[fmt.Sprint(l[0])].(map[string]any)
	second, _ := top[fmt.Sprint(l[1])].(map[string]any)
	if v, ok := second[fmt.Sprint(l[2])]; ok {
		return e.resolve(v)
	}
	if len(raw) == 3 {
		return nil, fmt.Errorf("Fn::FindInMap: no %v (CloudFormation: Unable to get mapping)", l)
	}
	if !e.t.HasTransform(LanguageExtensions) {
		return nil, fmt.Errorf("Fn::FindInMap with a DefaultValue needs the %s transform", LanguageExtensions)
	}
	opts, _ := raw[3].(map[string]any)
	d, ok := opts["DefaultValue"]
	if !ok || len(opts) != 1 {
		return nil, fmt.Errorf("Fn::FindInMap: the fourth argument is {DefaultValue: v}, not %v", raw[3])
	}
	return e.resolve(d)
}

// checkMaps evaluates every Fn::FindInMap in v, as CloudFormation does in
// a branch of Fn::If it does not take, and returns the first failure.
func (e *evaluator) checkMaps(v any) error {
	switch v := v.(type) {
	case map[string]any:
		if arg, ok := v["Fn::FindInMap"]; ok && len(v) == 1 {
			_, err := e.findInMap(arg)
			return err
		}
		for _, x := range v {
			if err := e.checkMaps(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := e.checkMaps(x); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *evaluator) list(arg any, n int, name string) ([]any, error) {
	v, err := e.resolve(arg)
	if err != nil {
		return nil, err
	}
	l, ok := v.([]any)
	if !ok || len(l) != n {
		return nil, fmt.Errorf("%s wants a list of %d, not %v", name, n, arg)
	}
	return l, nil
}

func strings_(v any) ([]string, error) {
	switch v := v.(type) {
	case []string:
		return v, nil
	case []any:
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = fmt.Sprint(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%v is not a list", v)
}

func (e *evaluator) ref(name string) (any, error) {
	if v, ok := e.pseudo(name); ok {
		return v, nil
	}
	if v, ok := e.params[name]; ok {
		if l, isList := v.([]string); isList {
			out := make([]any, len(l))
			for i, s := range l {
				out[i] = s
			}
			return out, nil
		}
		return v, nil
	}
	if e.rules {
		return nil, fmt.Errorf("a Ref to %s: Rules refer to parameters and pseudo parameters only", name)
	}
	r, ok := e.t.resources[name]
	if !ok {
		return nil, fmt.Errorf("a Ref to %s: no such parameter or resource", name)
	}
	return e.t.refOf(r), nil
}

func (e *evaluator) getAtt(res, attr string) (any, error) {
	if e.rules {
		return nil, fmt.Errorf("Fn::GetAtt on %s: Rules refer to parameters and pseudo parameters only", res)
	}
	r, ok := e.t.resources[res]
	if !ok {
		return nil, fmt.Errorf("Fn::GetAtt on %s: no such resource", res)
	}
	return e.t.attOf(r, attr), nil
}

var subVar = regexp.MustCompile(`\$\{([^}]*)\}`)

func (e *evaluator) sub(arg any) (any, error) {
	var format string
	vars := map[string]any{}
	switch a := arg.(type) {
	case string:
		format = a
	case []any:
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Sub wants a string or [string, variables]")
		}
		format = fmt.Sprint(a[0])
		m, ok := a[1].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Fn::Sub: variables are not a mapping")
		}
		for k, v := range m {
			r, err := e.resolve(v)
			if err != nil {
				return nil, err
			}
			vars[k] = r
		}
	default:
		return nil, fmt.Errorf("Fn::Sub wants a string, not %v", arg)
	}
	var failed error
	out := subVar.ReplaceAllStringFunc(format, func(m string) string {
		name := m[2 : len(m)-1]
		if strings.HasPrefix(name, "!") {
			return "${" + name[1:] + "}"
		}
		var v any
		var err error
		if x, ok := vars[name]; ok {
			v = x
		} else if res, attr, dotted := strings.Cut(name, "."); dotted && e.t.resources[res] != nil {
			v, err = e.getAtt(res, attr)
		} else {
			v, err = e.ref(name)
		}
		if err != nil && failed == nil {
			failed = fmt.Errorf("Fn::Sub %q: %w", format, err)
		}
		if l, ok := v.([]any); ok {
			s, _ := strings_(l)
			return strings.Join(s, ",")
		}
		return fmt.Sprint(v)
	})
	if failed != nil {
		return nil, failed
	}
	return out, nil
}

// boolean evaluates v, which must come out true or false.
func (e *evaluator) boolean(v any) (bool, error) {
	r, err := e.resolve(v)
	if err != nil {
		return false, err
	}
	b, ok := r.(bool)
	if !ok {
		return false, fmt.Errorf("%v is not true or false", r)
	}
	return b, nil
}

func (e *evaluator) condition(name string) (bool, error) {
	if b, ok := e.conditions[name]; ok {
		return b, nil
	}
	if e.evaluating[name] {
		return false, fmt.Errorf("condition %s refers to itself", name)
	}
	conds, _ := e.t.raw["Conditions"].(map[string]any)
	raw, ok := conds[name]
	if !ok {
		return false, fmt.Errorf("no condition %s", name)
	}
	e.evaluating[name] = true
	defer delete(e.evaluating, name)
	v, err := e.resolve(raw)
	if err != nil {
		return false, fmt.Errorf("condition %s: %w", name, err)
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("condition %s is not true or false: %v", name, v)
	}
	e.conditions[name] = b
	return b, nil
}
