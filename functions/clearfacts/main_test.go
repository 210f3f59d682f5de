package main

import (
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
	ana      = memory.Scope{TenantID: "acme", UserID: "u-123"}
	bob      = memory.Scope{TenantID: "acme", UserID: "u-456"}
	otherAna = memory.Scope{TenantID: "globex", UserID: "u-123"}
	user     = &httpapitest.Token{Sub: "u-123", Tenant: "acme", Scope: "memory/user"}
	admin    = &httpapitest.Token{Sub: "admin-7", Tenant: "acme", Scope: "memory/admin"}
)

func seeded(t testing.TB, repo memory.Repository) {
	httpapitest.Seed(t, repo, ana, "language", "Portuguese", "city", "Lisbon")
	httpapitest.Seed(t, repo, bob, "language", "German")
	httpapitest.Seed(t, repo, otherAna, "language", "Finnish")
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
	httpapitest.RunEvents(t, "clearfacts-", map[string]httpapitest.Want{
		"clearfacts-me.json":    {Status: http.StatusNoContent},
		"clearfacts-admin.json": {Status: http.StatusNoContent},
	}, func(t *testing.T) httpapitest.HandlerFunc {
		repo := memorytest.NewRepo()
		seeded(t, repo)
		return handlerOn(t, repo)
	})
}

func TestRoutesMatchTemplateAndDocument(t *testing.T) {
	httpapitest.CheckRoutes(t, "ClearFactsFunction", routes)
}

func TestScope(t *testing.T) {
	spec := httpapitest.LoadSpec(t)
	untouched := map[memory.Scope]map[string]string{
		ana: {"language": "Portuguese", "city": "Lisbon"}, bob: {"language": "German"}, otherAna: {"language": "Finnish"},
	}
	tests := []struct {
		name   string
		route  string
		tok    *httpapitest.Token
		params map[string]string
		status int
		want   map[memory.Scope]map[string]string
	}{
		{"own facts", "DELETE /v1/me/facts", user, nil, 204,
			map[memory.Scope]map[string]string{ana: {}, bob: {"language": "German"}, otherAna: {"language": "Finnish"}}},
		{"a userId in the path of a /me route is ignored", "DELETE /v1/me/facts", user,
			map[string]string{"userId": "u-456"}, 204,
			map[memory.Scope]map[string]string{ana: {}, bob: {"language": "German"}, otherAna: {"language": "Finnish"}}},
		{"admin clears in the token's tenant", "DELETE /v1/users/{userId}/facts", admin,
			map[string]string{"userId": "u-456"}, 204,
			map[memory.Scope]map[string]string{ana: {"language": "Portuguese", "city": "Lisbon"}, bob: {}, otherAna: {"language": "Finnish"}}},
		{"user scope on the admin route", "DELETE /v1/users/{userId}/facts", user,
			map[string]string{"userId": "u-456"}, 403, untouched},
		{"admin scope on a /me route", "DELETE /v1/me/facts", admin, nil, 403, untouched},
		{"tenant claim as an array", "DELETE /v1/me/facts",
			&httpapitest.Token{Sub: "u-123", Tenant: "[acme globex]", Scope: "memory/user"}, nil, 401, untouched},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := memorytest.NewRepo()
			seeded(t, repo)
			ev := httpapitest.NewEvent(tt.route, tt.tok, tt.params, "")
			resp := httpapitest.Invoke(t, handlerOn(t, repo), httpapitest.Marshal(t, ev))
			spec.Check(t, ev, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, resp.Body, tt.status)
			}
			for s, want := range tt.want {
				if diff := cmp.Diff(want, httpapitest.Facts(t, repo, s)); diff != "" {
					t.Errorf("facts of %v (-want +got):\n%s", s, diff)
				}
			}
		})
	}
}

func TestOnDynamoDB(t *testing.T) {
	repo := httpapitest.MotoRepo(t, httpapitest.Endpoint)
	seeded(t, repo)
	resp := httpapitest.Exchange(t, httpapitest.LoadSpec(t), handlerOn(t, repo), httpapitest.ReadEvent(t, "clearfacts-me.json"))
	if resp.StatusCode != 204 {
		t.Fatalf("got %d %s", resp.StatusCode, resp.Body)
	}
	if got := httpapitest.Facts(t, repo, ana); len(got) != 0 {
		t.Errorf("ana's facts after clear: %v", got)
	}
	if diff := cmp.Diff(map[string]string{"language": "German"}, httpapitest.Facts(t, repo, bob)); diff != "" {
		t.Errorf("bob's facts (-want +got):\n%s", diff)
	}
}
