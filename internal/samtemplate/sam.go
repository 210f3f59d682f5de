// Package samtemplate reads the SAM template (template.yaml) into what the local
// stack runs: functions with their environment, timeout and memory, the
// HTTP API's routes, JWT authorizers and CORS, DynamoDB tables, SQS queues
// with their redrive policies, and SQS event sources.
//
// It decodes every CloudFormation short-form tag, and evaluates the
// intrinsic functions template.yaml uses (!Ref, !GetAtt, !Sub, !Join,
// !Select, !Split) and those of Conditions and Mappings (!If, !Equals,
// !Not, !And, !FindInMap, Condition): see [Intrinsics]. Any other intrinsic fails the
// resolution with an error that names it. It also knows parameter
// defaults and overrides, the pseudo parameters AWS::Region, AccountId,
// StackName, StackId, Partition, URLSuffix and NoValue, and SAM's Globals
// section. Resources are given local names and ARNs, the way
// CloudFormation would name them in a stack.
//
// [Template.Check] says whether CloudFormation would accept a set of
// parameter values in a Region: the parameters' constraints and the
// template's Rules.
//
// Why this package and not a library (goformation, cfn-lint):
// docs/decisions.md, "Libraries not taken".
package samtemplate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Resource types the local stack runs.
const (
	TypeFunction = "AWS::Serverless::Function"
	TypeHTTPAPI  = "AWS::Serverless::HttpApi"
	TypeTable    = "AWS::DynamoDB::Table"
	TypeQueue    = "AWS::SQS::Queue"
)

// Cognito resource types, which the local stack does not run: their Ref
// and attributes take the forms Cognito gives them, so that what is built
// from them (the JWT authorizer's issuer and audience) reads as deployed.
const (
	TypeUserPool       = "AWS::Cognito::UserPool"
	TypeUserPoolClient = "AWS::Cognito::UserPoolClient"
)

// ImplicitHTTPAPI is the logical ID SAM gives the HTTP API it makes for
// HttpApi events that name no ApiId.
const ImplicitHTTPAPI = "ServerlessHttpApi"

// Options say where the template is deployed: the local account, region
// and stack name, and the values of parameters that differ from their
// defaults.
type Options struct {
	Region    string
	AccountID string
	StackName string
	// StackID is the value of AWS::StackId. Empty means
	// arn:aws:cloudformation:REGION:ACCOUNT:stack/NAME/local: a real ID
	// ends in a UUID, 36 characters where "local" has 5.
	StackID string
	// Parameters overrides parameter defaults, by parameter name. A list
	// parameter takes a comma-separated value.
	Parameters map[string]string
	// QueueURL returns the URL of the queue called name; the Ref of a
	// queue. Nil means http://sqs.local/ACCOUNT/name.
	QueueURL func(name string) string
}

// Template is a parsed template, not yet resolved.
type Template struct {
	// Dir is the folder holding the template; CodeUri is relative to it.
	Dir  string
	raw  map[string]any
	base map[string]*resource // as parsed
	// resources and opts are those of the Resolve under way: the
	// resources whose condition holds, with their names.
	resources map[string]*resource
	opts      Options
}

type resource struct {
	id        string
	typ       string
	props     map[string]any // raw, with Globals merged for functions and APIs
	condition string
	name      string // physical name
}

// LanguageExtensions is the transform that lets Fn::FindInMap take a
// DefaultValue, which the evaluator honours only when the template
// declares it.
const LanguageExtensions = "AWS::LanguageExtensions"

// HasTransform reports whether the template declares the transform name,
// alone or in its list of transforms.
func (t *Template) HasTransform(name string) bool {
	switch v := t.raw["Transform"].(type) {
	case string:
		return v == name
	case []any:
		for _, x := range v {
			if fmt.Sprint(x) == name {
				return true
			}
		}
	}
	return false
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("sam: %s: %w", path, err)
	}
	t.Dir = filepath.Dir(path)
	return t, nil
}

// Parse parses a template. Errors in intrinsic functions show only when
// [Template.Resolve] evaluates them.
func Parse(src []byte) (*Template, error) {
	raw, err := Decode(src)
	if err != nil {
		return nil, err
	}
	t := &Template{Dir: ".", raw: raw, base: map[string]*resource{}}
	t.resources = t.base
	globals, _ := raw["Globals"].(map[string]any)
	res, _ := raw["Resources"].(map[string]any)
	if len(res) == 0 {
		return nil, fmt.Errorf("no Resources")
	}
	for id, v := range res {
		m, _ := v.(map[string]any)
		typ, _ := m["Type"].(string)
		props, _ := m["Properties"].(map[string]any)
		cond, _ := m["Condition"].(string)
		switch typ {
		case TypeFunction:
			props = mergeGlobals(globals["Function"], props)
		case TypeHTTPAPI:
			props = mergeGlobals(globals["HttpApi"], props)
		}
		t.resources[id] = &resource{id: id, typ: typ, props: props, condition: cond}
	}
	// SAM makes an HTTP API when an HttpApi event names none.
	if _, ok := t.resources[ImplicitHTTPAPI]; !ok {
		for _, r := range t.resources {
			if r.typ != TypeFunction {
				continue
			}
			for _, ev := range mapOf(r.props["Events"]) {
				em := mapOf(ev)
				if em["Type"] == "HttpApi" && mapOf(em["Properties"])["ApiId"] == nil {
					t.resources[ImplicitHTTPAPI] = &resource{id: ImplicitHTTPAPI, typ: TypeHTTPAPI, props: mergeGlobals(globals["HttpApi"], nil)}
				}
			}
		}
	}
	t.resources = nil
	return t, nil
}

// mergeGlobals merges a Globals section under props the way SAM does:
// maps merge key by key, the resource's own value wins otherwise.
func mergeGlobals(g any, props map[string]any) map[string]any {
	gm, _ := g.(map[string]any)
	out := map[string]any{}
	for k, v := range gm {
		out[k] = v
	}
	for k, v := range props {
		if gv, ok := out[k].(map[string]any); ok {
			if pv, ok := v.(map[string]any); ok && !isIntrinsic(pv) && !isIntrinsic(gv) {
				out[k] = mergeGlobals(gv, pv)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func isIntrinsic(m map[string]any) bool {
	if len(m) != 1 {
		return false
	}
	for k := range m {
		return k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::")
	}
	return false
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// ParameterDefault returns the default of the parameter called name and
// whether the template declares it.
func (t *Template) ParameterDefault(name string) (string, bool) {
	p, ok := mapOf(t.raw["Parameters"])[name]
	if !ok {
		return "", false
	}
	d := mapOf(p)["Default"]
	if d == nil {
		return "", true
	}
	if l, ok := d.([]any); ok {
		s, _ := strings_(l)
		return strings.Join(s, ","), true
	}
	return fmt.Sprint(d), true
}

// JWTParameters returns the names of the parameters that the JWT
// authorizers of the HTTP APIs take their issuer and audience from, so
// that a local stack can override them with its own issuer. Only declared
// parameters count: an issuer that is a parameter or, through Fn::If, a
// resource of the template (a user pool the stack creates when the
// parameter is empty) gives the parameter's name.
func (t *Template) JWTParameters() (issuer, audience []string) {
	declared := mapOf(t.raw["Parameters"])
	params := func(v any) []string {
		var out []string
		for _, n := range refs(v) {
			if _, ok := declared[n]; ok && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
	for _, r := range t.base {
		if r.typ != TypeHTTPAPI {
			continue
		}
		for _, a := range mapOf(mapOf(mapOf(r.props["Auth"])["Authorizers"])) {
			jc := mapOf(mapOf(a)["JwtConfiguration"])
			issuer = append(issuer, params(jc["issuer"])...)
			audience = append(audience, params(jc["audience"])...)
		}
	}
	return issuer, audience
}

// refs returns the parameter names v refers to with Ref or in a Sub.
func refs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "Ref" {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
				continue
			}
			if k == "Fn::Sub" {
				if s, ok := x.(string); ok {
					for _, m := range subVar.FindAllStringSubmatch(s, -1) {
						out = append(out, m[1])
					}
				}
			}
			out = append(out, refs(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, refs(x)...)
		}
	}
	return out
}

func (t *Template) refOf(r *resource) any {
	switch r.typ {
	case TypeQueue:
		return t.opts.QueueURL(r.name)
	case TypeTable, TypeFunction:
		return r.name
	case TypeHTTPAPI:
		return strings.ToLower(r.id)
	case TypeUserPool:
		// A pool ID is REGION_ and letters and digits.
		return t.opts.Region + "_" + alnum(r.id)
	case TypeUserPoolClient:
		return strings.ToLower(alnum(r.id)) + "clientid"
	}
	return r.id
}

// alnum returns the letters and digits of s.
func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

func (t *Template) attOf(r *resource, attr string) any {
	o := t.opts
	switch {
	case r.typ == TypeQueue && attr == "Arn":
		return fmt.Sprintf("arn:aws:sqs:%s:%s:%s", o.Region, o.AccountID, r.name)
	case r.typ == TypeQueue && attr == "QueueName":
		return r.name
	case r.typ == TypeQueue && attr == "QueueUrl":
		return o.QueueURL(r.name)
	case r.typ == TypeTable && attr == "Arn":
		return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", o.Region, o.AccountID, r.name)
	case r.typ == TypeTable && attr == "StreamArn":
		return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s/stream/local", o.Region, o.AccountID, r.name)
	case r.typ == TypeFunction && attr == "Arn":
		return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", o.Region, o.AccountID, r.name)
	case r.typ == TypeUserPool && attr == "Arn":
		return fmt.Sprintf("arn:aws:cognito-idp:%s:%s:userpool/%s", o.Region, o.AccountID, t.refOf(r))
	case r.typ == TypeUserPool && attr == "ProviderURL":
		return fmt.Sprintf("https://cognito-idp.%s.amazonaws.com/%s", o.Region, t.refOf(r))
	case r.typ == TypeUserPool && attr == "ProviderName":
		return fmt.Sprintf("cognito-idp.%s.amazonaws.com/%s", o.Region, t.refOf(r))
	}
	// Resources the local stack does not run (roles, alarms, topics) get a
	// recognisable local ARN.
	return fmt.Sprintf("arn:aws:local:%s:%s:%s/%s", o.Region, o.AccountID, r.id, attr)
}

// physicalName is the name CloudFormation gives a resource: the one its
// properties set, or stack-LogicalID (with .fifo for a FIFO queue).
func (t *Template) physicalName(e *evaluator, r *resource) (string, error) {
	prop := map[string]string{TypeQueue: "QueueName", TypeTable: "TableName", TypeFunction: "FunctionName"}[r.typ]
	if prop != "" && r.props[prop] != nil {
		v, err := e.resolve(r.props[prop])
		if err != nil {
			return "", fmt.Errorf("%s.%s: %w", r.id, prop, err)
		}
		if _, none := v.(noValue); !none {
			return fmt.Sprint(v), nil
		}
	}
	name := t.opts.StackName + "-" + r.id
	if r.typ == TypeQueue {
		fifo, err := e.resolve(r.props["FifoQueue"])
		if err != nil {
			return "", err
		}
		if truthy(fifo) {
			name += ".fifo"
		}
	}
	return name, nil
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		b, _ := strconv.ParseBool(v)
		return b
	}
	return false
}

func intOf(v any, what string) (int, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case int:
		return v, nil
	case int64:
		return int(v), nil
	case uint64:
		return int(v), nil
	case float64:
		return int(v), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a whole number", what, v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%s: %v is not a whole number", what, v)
}

func stringOf(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case []any:
		s, _ := strings_(v)
		return strings.Join(s, ",")
	}
	return fmt.Sprint(v)
}

func seconds(v any, what string) (time.Duration, error) {
	n, err := intOf(v, what)
	return time.Duration(n) * time.Second, err
}
