package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/httpapi/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

func TestMain(m *testing.M) { httpapitest.Main(m) }

var (
	ana       = memory.Scope{TenantID: "acme", UserID: "u-123"}
	bob       = memory.Scope{TenantID: "acme", UserID: "u-456"}
	otherAna  = memory.Scope{TenantID: "globex", UserID: "u-123"}
	userToken = &httpapitest.Token{Sub: "u-123", Tenant: "acme", Scope: "memory/user"}
)

func seeded(t testing.TB) *memorytest.Repo {
	repo := memorytest.NewRepo()
	httpapitest.Seed(t, repo, ana, "language", "Portuguese", "city", "Lisbon")
	httpapitest.Seed(t, repo, bob, "language", "German")
	httpapitest.Seed(t, repo, otherAna, "language", "Finnish")
	return repo
}

func handlerOn(t testing.TB, repo memory.Repository) httpapitest.HandlerFunc {
	t.Helper()
	h, err := newHandler(httpapitest.NewStore(t, repo), httpapi.Auth{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h.Handle
}

func TestEvents(t *testing.T) {
	httpapitest.RunEvents(t, "getfacts-", map[string]httpapitest.Want{
		"getfacts-me.json":                        {Status: http.StatusOK},
		"getfacts-admin.json":                     {Status: http.StatusOK},
		"getfacts-scp-array-claim.json":           {Status: http.StatusOK},
		"getfacts-no-tenant-claim.json":           {Status: http.StatusUnauthorized, Code: httpapi.CodeUnauthenticated},
		"getfacts-tenant-array-claim.json":        {Status: http.StatusUnauthorized, Code: httpapi.CodeUnauthenticated},
		"getfacts-user-scope-on-admin-route.json": {Status: http.StatusForbidden, Code: httpapi.CodeForbidden},
		"getfacts-admin-invalid-user-id.json":     {Status: http.StatusBadRequest, Code: memory.CodeInvalidID},
	}, func(t *testing.T) httpapitest.HandlerFunc { return handlerOn(t, seeded(t)) })
}

func TestRoutesMatchTemplateAndDocument(t *testing.T) {
	httpapitest.CheckRoutes(t, "GetFactsFunction", routes)
}

func facts(t *testing.T, body string) map[string]string {
	t.Helper()
	var got httpapi.FactsBody
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	out := map[string]string{}
	for _, f := range got.Facts {
		out[f.Key] = f.Value
	}
	return out
}

// TestScope shows that a token reads only its own user's facts in its own
// tenant, whatever the path says, and that an admin reads in the token's
// tenant only.
func TestScope(t *testing.T) {
	spec := httpapitest.LoadSpec(t)
	adminOf := func(tenant string) *httpapitest.Token {
		return &httpapitest.Token{Sub: "admin-7", Tenant: tenant, Scope: "memory/admin"}
	}
	tests := []struct {
		name   string
		route  string
		tok    *httpapitest.Token
		params map[string]string
		status int
		want   map[string]string
	}{
		{"own facts", "GET /v1/me/facts", userToken, nil, 200,
			map[string]string{"language": "Portuguese", "city": "Lisbon"}},
		{"a userId in the path of a /me route is ignored", "GET /v1/me/facts", userToken,
			map[string]string{"userId": "u-456", "tenantId": "globex"}, 200,
			map[string]string{"language": "Portuguese", "city": "Lisbon"}},
		{"same user ID, other tenant", "GET /v1/me/facts",
			&httpapitest.Token{Sub: "u-123", Tenant: "globex", Scope: "memory/user"}, nil, 200,
			map[string]string{"language": "Finnish"}},
		{"user without facts", "GET /v1/me/facts",
			&httpapitest.Token{Sub: "u-789", Tenant: "acme", Scope: "memory/user"}, nil, 200, map[string]string{}},
		{"admin reads a user of the token's tenant", "GET /v1/users/{userId}/facts", adminOf("acme"),
			map[string]string{"userId": "u-456"}, 200, map[string]string{"language": "German"}},
		{"admin of another tenant reads that tenant only", "GET /v1/users/{userId}/facts", adminOf("globex"),
			map[string]string{"userId": "u-123"}, 200, map[string]string{"language": "Finnish"}},
		{"user scope on the admin route", "GET /v1/users/{userId}/facts", userToken,
			map[string]string{"userId": "u-456"}, 403, nil},
		{"admin scope only on a /me route", "GET /v1/me/facts", adminOf("acme"), nil, 403, nil},
		{"no token", "GET /v1/me/facts", nil, nil, 401, nil},
		{"no sub", "GET /v1/me/facts", &httpapitest.Token{Tenant: "acme", Scope: "memory/user"}, nil, 401, nil},
		{"sub that is not an ID", "GET /v1/me/facts",
			&httpapitest.Token{Sub: "acme#u-456", Tenant: "acme", Scope: "memory/user"}, nil, 401, nil},
		{"scope in a JSON array scp", "GET /v1/me/facts",
			&httpapitest.Token{Sub: "u-123", Tenant: "acme", Claims: map[string]string{"scp": `["memory/user"]`}}, nil, 200,
			map[string]string{"language": "Portuguese", "city": "Lisbon"}},
		{"a scope that only starts like the right one", "GET /v1/me/facts",
			&httpapitest.Token{Sub: "u-123", Tenant: "acme", Scope: "memory/users"}, nil, 403, nil},
		{"route this function does not serve", "PUT /v1/me/facts/{key}", userToken,
			map[string]string{"key": "city"}, 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := seeded(t)
			ev := httpapitest.NewEvent(tt.route, tt.tok, tt.params, "")
			resp := httpapitest.Invoke(t, handlerOn(t, repo), httpapitest.Marshal(t, ev))
			if tt.status != 404 {
				spec.Check(t, ev, resp)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, resp.Body, tt.status)
			}
			if tt.status != 200 {
				if n := repo.Calls("Get"); n != 0 {
					t.Errorf("a refused request read the repository %d times", n)
				}
				return
			}
			if diff := cmp.Diff(tt.want, facts(t, resp.Body)); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBody(t *testing.T) {
	repo := memorytest.NewRepo()
	httpapitest.Seed(t, repo, ana, "language", "Portuguese")
	resp := httpapitest.Invoke(t, handlerOn(t, repo), httpapitest.ReadEvent(t, "getfacts-me.json"))
	want := `{"facts":[{"key":"language","value":"Portuguese","updatedAt":"2026-11-29T22:00:00Z"}],"limits":{"maxFacts":30,"maxFactChars":200}}`
	if resp.Body != want || resp.Headers["content-type"] != "application/json" {
		t.Errorf("got %s (%s), want %s", resp.Body, resp.Headers["content-type"], want)
	}
	empty := httpapitest.Invoke(t, handlerOn(t, memorytest.NewRepo()), httpapitest.ReadEvent(t, "getfacts-me.json"))
	if want := `{"facts":[],"limits":{"maxFacts":30,"maxFactChars":200}}`; empty.Body != want {
		t.Errorf("got %s, want %s", empty.Body, want)
	}
}

func TestRepositoryFailureSaysNothingOfItsCause(t *testing.T) {
	repo := memorytest.NewRepo()
	repo.Fail = memorytest.ErrInjected
	resp := httpapitest.Exchange(t, httpapitest.LoadSpec(t), handlerOn(t, repo), httpapitest.ReadEvent(t, "getfacts-me.json"))
	want := `{"type":"urn:usermemory:error:5380000000108","title":"Internal Server Error","status":500,"detail":"internal error","code":5380000000108}`
	if resp.StatusCode != 500 || resp.Body != want {
		t.Errorf("got %d %s, want 500 %s", resp.StatusCode, resp.Body, want)
	}
}

func TestOnDynamoDB(t *testing.T) {
	repo := httpapitest.MotoRepo(t, httpapitest.Endpoint)
	httpapitest.Seed(t, repo, ana, "language", "Portuguese", "Home City", "Lisbon")
	httpapitest.Seed(t, repo, bob, "language", "German")
	resp := httpapitest.Exchange(t, httpapitest.LoadSpec(t), handlerOn(t, repo), httpapitest.ReadEvent(t, "getfacts-me.json"))
	if resp.StatusCode != 200 {
		t.Fatalf("got %d %s", resp.StatusCode, resp.Body)
	}
	if diff := cmp.Diff(map[string]string{"language": "Portuguese", "home_city": "Lisbon"}, facts(t, resp.Body)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
}
