package samtemplate

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
)

// parameterKeys are the keys of a parameter declaration that [Template.Check]
// knows; any other (MinLength, MaxLength) fails the check, naming it, so
// that a constraint is not skipped in silence.
var parameterKeys = map[string]bool{
	"Type": true, "Default": true, "Description": true, "ConstraintDescription": true, "NoEcho": true,
	"AllowedValues": true, "AllowedPattern": true, "MinValue": true, "MaxValue": true,
}

// Check returns nil when CloudFormation would accept the parameter values
// of o in o.Region, or an error saying why not: a parameter without a
// value, a value outside its parameter's constraints (the Type Number,
// MinValue, MaxValue, AllowedValues, and AllowedPattern, which the whole
// value must match), or a rule of the Rules section whose RuleCondition
// holds and one of whose assertions fails; the error then names the rule
// and gives the assertion's AssertDescription.
//
// Rules take Ref of parameters and pseudo parameters, Fn::Equals,
// Fn::Not and Fn::Contains; any other function, or a constraint Check
// does not know, fails the check with an error naming it.
func (t *Template) Check(o Options) error {
	t.opts = o
	e, values, err := t.newEvaluator(o)
	if err != nil {
		return err
	}
	decls := mapOf(t.raw["Parameters"])
	for _, name := range slices.Sorted(maps.Keys(decls)) {
		if err := checkParameter(name, mapOf(decls[name]), values[name]); err != nil {
			return fmt.Errorf("sam: %w", err)
		}
	}
	e.rules = true
	rules := mapOf(t.raw["Rules"])
	for _, name := range slices.Sorted(maps.Keys(rules)) {
		r := mapOf(rules[name])
		if c, ok := r["RuleCondition"]; ok {
			on, err := e.boolean(c)
			if err != nil {
				return fmt.Errorf("sam: rule %s: RuleCondition: %w", name, err)
			}
			if !on {
				continue
			}
		}
		for i, a := range listAny(r["Assertions"]) {
			ok, err := e.boolean(mapOf(a)["Assert"])
			if err != nil {
				return fmt.Errorf("sam: rule %s: assertion %d: %w", name, i+1, err)
			}
			if !ok {
				return fmt.Errorf("sam: rule %s: %s", name, or(stringOf(mapOf(a)["AssertDescription"]), fmt.Sprintf("assertion %d fails", i+1)))
			}
		}
	}
	return nil
}

// checkParameter checks the value v of the parameter name declared by p.
func checkParameter(name string, p map[string]any, v string) error {
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !parameterKeys[k] {
			return fmt.Errorf("parameter %s: %s is not checked by the local template reader: "+
				"if the template needs it, add it to internal/samtemplate/check.go with a test", name, k)
		}
	}
	typ := stringOf(p["Type"])
	refused := func(why string) error {
		if d := stringOf(p["ConstraintDescription"]); d != "" {
			why += ": " + d
		}
		return fmt.Errorf("parameter %s=%q %s", name, v, why)
	}
	switch typ {
	case "Number":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return refused("is not a number")
		}
		for _, bound := range []string{"MinValue", "MaxValue"} {
			b, ok := p[bound]
			if !ok {
				continue
			}
			limit, err := strconv.ParseFloat(stringOf(b), 64)
			if err != nil {
				return fmt.Errorf("parameter %s: %s %v is not a number", name, bound, b)
			}
			if bound == "MinValue" && n < limit || bound == "MaxValue" && n > limit {
				return refused(fmt.Sprintf("is outside its %s %v", bound, b))
			}
		}
	case "String", "CommaDelimitedList":
		if p["MinValue"] != nil || p["MaxValue"] != nil {
			return fmt.Errorf("parameter %s: MinValue and MaxValue are for a Number", name)
		}
	default:
		return fmt.Errorf("parameter %s: the type %q is not checked by the local template reader: "+
			"if the template needs it, add it to internal/samtemplate/check.go with a test", name, typ)
	}
	if allowed, ok := p["AllowedValues"]; ok {
		if typ == "CommaDelimitedList" {
			return fmt.Errorf("parameter %s: AllowedValues of a list is not checked by the local template reader", name)
		}
		if !slices.Contains(listOf(allowed), v) {
			return refused(fmt.Sprintf("is not one of its AllowedValues %v", listOf(allowed)))
		}
	}
	if pat, ok := p["AllowedPattern"]; ok {
		if typ != "String" {
			return fmt.Errorf("parameter %s: AllowedPattern of a %s is not checked by the local template reader", name, typ)
		}
		re, err := regexp.Compile("^(?:" + stringOf(pat) + ")$")
		if err != nil {
			return fmt.Errorf("parameter %s: AllowedPattern: %w", name, err)
		}
		if !re.MatchString(v) {
			return refused(fmt.Sprintf("does not match its AllowedPattern %s", pat))
		}
	}
	return nil
}
