package httpapi_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/httpapitest"
)

// docRoute is one row of docs/api.md's table of routes.
type docRoute struct {
	scope, status, as string
}

// routeRow matches a row of the table: route, function, scope, and
// either the success status or "as <route>".
var routeRow = regexp.MustCompile(`(?m)^\| ((?:GET|PUT|POST|DELETE) /\S+)[^|]*(?:\\\|[^|]*)*\| [a-z]+ \| (user|admin) \| (?:as ((?:GET|PUT|POST|DELETE) \S+) \||([0-9]{3}))`)

// scopeOf maps the table's scope column to the scope's default name.
var scopeOf = map[string]string{"user": setup.DefaultUserScope, "admin": setup.DefaultAdminScope}

// TestAPIDocRoutesAreTheDocument holds docs/api.md's table of routes to
// api/openapi.yaml: the same routes, each with the scope the document's
// security asks for and a success status the document lists ("as
// <route>" rows take that route's status).
func TestAPIDocRoutesAreTheDocument(t *testing.T) {
	spec := httpapitest.LoadSpec(t)
	raw, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]docRoute{}
	for _, m := range routeRow.FindAllStringSubmatch(string(raw), -1) {
		rows[m[1]] = docRoute{scope: m[2], as: m[3], status: m[4]}
	}
	var keys []string
	for k := range rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, spec.Routes()) {
		t.Fatalf("docs/api.md's table lists the routes\n%v\napi/openapi.yaml has\n%v", keys, spec.Routes())
	}
	for _, key := range keys {
		r := rows[key]
		if r.as != "" {
			r.status = rows[r.as].status
		}
		method, path, _ := strings.Cut(key, " ")
		op := spec.Doc().Paths.Find(path).GetOperation(method)
		if op.Responses.Value(r.status) == nil {
			t.Errorf("docs/api.md: %s answers %s; api/openapi.yaml lists no %s for it", key, r.status, r.status)
		}
		var scopes []string
		if op.Security != nil {
			for _, req := range *op.Security {
				scopes = append(scopes, req["jwt"]...)
			}
		}
		if want := scopeOf[r.scope]; !slices.Equal(scopes, []string{want}) {
			t.Errorf("docs/api.md: %s needs the %s scope; api/openapi.yaml asks for %v", key, r.scope, scopes)
		}
	}
}
