package httpapitest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// SAMTemplate is the SAM template (template.yaml) as plain values: maps,
// lists, strings, numbers and booleans, read by [samtemplate.Decode], the
// local stack's reader, so that the tests and the stack read it alike. A
// CloudFormation short-form tag becomes its long form: !Ref X is
// {"Ref": "X"}, !GetAtt A.B is {"Fn::GetAtt": ["A", "B"]}, !Sub s is
// {"Fn::Sub": s}, and so on.
type SAMTemplate map[string]any

// LoadSAMTemplate reads the SAM template (template.yaml) of the
// repository, failing t when it cannot.
func LoadSAMTemplate(t testing.TB) SAMTemplate {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := samtemplate.Decode(raw)
	if err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return m
}

// Resources returns the template's resources by logical ID.
func (tpl SAMTemplate) Resources() map[string]map[string]any {
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
func (tpl SAMTemplate) Functions() []string {
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
func (tpl SAMTemplate) Routes() []Route {
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
			key := fmt.Sprintf("%s %s", strings.ToUpper(fmt.Sprint(p["Method"])), p["Path"])
			if p["Method"] == nil && p["Path"] == nil {
				key = "$default" // SAM's default path: no Path, no Method
			}
			out = append(out, Route{
				Key:      key,
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
	for _, r := range LoadSAMTemplate(t).Routes() {
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
		if !spec.Operation(k) {
			t.Errorf("route %q is served but not in api/openapi.yaml", k)
		}
	}
}
