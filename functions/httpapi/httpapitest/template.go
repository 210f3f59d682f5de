package httpapitest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Template is template.yaml as plain values: maps, lists, strings,
// numbers and booleans. A CloudFormation short-form tag becomes its long
// form: !Ref X is {"Ref": "X"}, !GetAtt A.B is {"Fn::GetAtt": ["A", "B"]},
// !Sub s is {"Fn::Sub": s}, and so on.
type Template map[string]any

// LoadTemplate reads template.yaml.
func LoadTemplate(t testing.TB) Template {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := ParseTemplate(raw)
	if err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return tpl
}

// ParseTemplate parses a CloudFormation template in YAML.
func ParseTemplate(raw []byte) (Template, error) {
	f, err := parser.ParseBytes(raw, 0)
	if err != nil {
		return nil, err
	}
	if len(f.Docs) != 1 {
		return nil, fmt.Errorf("want one YAML document, got %d", len(f.Docs))
	}
	v, err := plain(f.Docs[0].Body)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the template is not a mapping")
	}
	return m, nil
}

func plain(n ast.Node) (any, error) {
	switch n := n.(type) {
	case nil, *ast.NullNode:
		return nil, nil
	case *ast.DocumentNode:
		return plain(n.Body)
	case *ast.AnchorNode:
		return plain(n.Value)
	case *ast.MappingNode:
		m := map[string]any{}
		for _, mv := range n.Values {
			if err := addPair(m, mv); err != nil {
				return nil, err
			}
		}
		return m, nil
	case *ast.MappingValueNode:
		m := map[string]any{}
		return m, addPair(m, n)
	case *ast.SequenceNode:
		out := make([]any, 0, len(n.Values))
		for _, x := range n.Values {
			v, err := plain(x)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *ast.TagNode:
		v, err := plain(n.Value)
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(n.Start.Value, "!")
		switch {
		case strings.HasPrefix(name, "!"): // A standard tag such as !!str.
			return v, nil
		case name == "Ref" || name == "Condition":
			return map[string]any{name: v}, nil
		case name == "GetAtt":
			if s, ok := v.(string); ok {
				res, attr, _ := strings.Cut(s, ".")
				return map[string]any{"Fn::GetAtt": []any{res, attr}}, nil
			}
		}
		return map[string]any{"Fn::" + name: v}, nil
	case *ast.LiteralNode:
		return n.Value.Value, nil
	case ast.ScalarNode:
		return n.GetValue(), nil
	}
	return nil, fmt.Errorf("%s: unexpected YAML node %T", n.GetToken().Position, n)
}

func addPair(m map[string]any, mv *ast.MappingValueNode) error {
	k, err := plain(mv.Key)
	if err != nil {
		return err
	}
	v, err := plain(mv.Value)
	if err != nil {
		return err
	}
	m[fmt.Sprint(k)] = v
	return nil
}

// Resources returns the template's resources by logical ID.
func (tpl Template) Resources() map[string]map[string]any {
	out := map[string]map[string]any{}
	res, _ := tpl["Resources"].(map[string]any)
	for id, r := range res {
		if m, ok := r.(map[string]any); ok {
			out[id] = m
		}
	}
	return out
}

// Functions returns the logical IDs of the AWS::Serverless::Function
// resources, sorted.
func (tpl Template) Functions() []string {
	var out []string
	for id, r := range tpl.Resources() {
		if r["Type"] == "AWS::Serverless::Function" {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Route is an HTTP API route of the template.
type Route struct {
	// Key is the route key, "GET /v1/me/facts".
	Key string
	// Function is the logical ID of the function that serves it.
	Function string
	// Scopes are the route's authorization scopes, as template values.
	Scopes []any
	// Authorizer names the route's authorizer.
	Authorizer string
}

// Routes returns the HttpApi routes of every function, sorted by key.
func (tpl Template) Routes() []Route {
	var out []Route
	for _, id := range tpl.Functions() {
		props, _ := tpl.Resources()[id]["Properties"].(map[string]any)
		evs, _ := props["Events"].(map[string]any)
		for _, e := range evs {
			ev, _ := e.(map[string]any)
			if ev["Type"] != "HttpApi" {
				continue
			}
			p, _ := ev["Properties"].(map[string]any)
			auth, _ := p["Auth"].(map[string]any)
			scopes, _ := auth["AuthorizationScopes"].([]any)
			authorizer, _ := auth["Authorizer"].(string)
			out = append(out, Route{
				Key:      fmt.Sprintf("%s %s", strings.ToUpper(fmt.Sprint(p["Method"])), p["Path"]),
				Function: id, Scopes: scopes, Authorizer: authorizer,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// CheckRoutes fails t unless the function logicalID of template.yaml
// serves exactly the route keys served, and each is in api/openapi.yaml.
func CheckRoutes(t testing.TB, logicalID string, served []string) {
	t.Helper()
	var inTemplate []string
	for _, r := range LoadTemplate(t).Routes() {
		if r.Function == logicalID {
			inTemplate = append(inTemplate, r.Key)
		}
	}
	got := slices.Sorted(slices.Values(served))
	if !slices.Equal(got, inTemplate) {
		t.Errorf("%s serves %q, template.yaml routes %q to it", logicalID, got, inTemplate)
	}
	spec := LoadSpec(t)
	for _, k := range served {
		if spec.Operation(k) == nil {
			t.Errorf("route %q is served but not in api/openapi.yaml", k)
		}
	}
}
