package httpapi

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/samtemplate"
)

// TestAuditActionsDoc writes docs/api.md's list of the audit line's
// actions from the routes template.yaml gives the fact API: each audited
// route's action (parseRoute, the code's one source of them), with the
// routes that carry it. A route added with a new action, or a route that
// starts or stops being audited, makes the block stale.
func TestAuditActionsDoc(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := tmpl.Resolve(samtemplate.Options{Region: "us-east-1", AccountID: "123456789012", StackName: "usermemory",
		StackID: "arn:aws:cloudformation:us-east-1:123456789012:stack/usermemory/0f5b7c40-3bb5-11f0-9a4b-0a1b2c3d4e5f"})
	if err != nil {
		t.Fatal(err)
	}
	api := app.APIs["HttpApi"]
	if api == nil || len(api.Routes) == 0 {
		t.Fatal("template.yaml: no routes of HttpApi")
	}
	routes := map[string][]string{} // audited action → its route keys
	for _, r := range api.Routes {
		key := r.Method + " " + r.Path
		rt, err := parseRoute(key)
		if err != nil {
			t.Fatal(err)
		}
		if rt.audited() {
			routes[rt.action] = append(routes[rt.action], "`"+key+"`")
		}
	}
	if len(routes) < 2 {
		t.Fatalf("audited actions: %v; the routes test nothing", routes)
	}
	lines := []string{"| `action` | the routes that write it |", "|---|---|"}
	for _, a := range slices.Sorted(maps.Keys(routes)) {
		lines = append(lines, "| `"+a+"` | "+strings.Join(routes[a], ", ")+" |")
	}
	docblock.Check(t, filepath.Join(root, "docs", "api.md"), "audit-actions", strings.Join(lines, "\n"))
}
