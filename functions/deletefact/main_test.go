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
	httpapitest.RunEvents(t, "deletefact-", map[string]httpapitest.Want{
		"deletefact-me.json":    {Status: http.StatusNoContent},
		"deletefact-admin.json": {Status: http.StatusNoContent},
	}, func(t *testing.T) httpapitest.HandlerFunc {
		repo := memorytest.NewRepo()
		seeded(t, repo)
		return handlerOn(t, repo)
	})
}

func TestRoutesMatchTemplateAndDocument(t *testing.T) {
	httpapitest.CheckRoutes(t, "DeleteFactFunction", routes)
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
		{"own fact", "DELETE /v1/me/facts/{key}", user, map[string]string{"key": "Language"}, 204,
			map[memory.Scope]map[string]string{ana: {"city": "Lisbon"}, bob: {"language": "German"}, otherAna: {"language": "Finnish"}}},
		{"absent key is 204", "DELETE /v1/me/facts/{key}", user, map[string]string{"key": "nickname"}, 204, untouched},
		{"a userId in the path of a /me route is ignored", "DELETE /v1/me/facts/{key}", user,
			map[string]string{"key": "city", "userId": "u-456"}, 204,
			map[memory.Scope]map[string]string{ana: {"language": "Portuguese"}, bob: {"language": "German"}, otherAna: {"language": "Finnish"}}},
		{"admin deletes in the token's tenant", "DELETE /v1/users/{userId}/facts/{key}",
			&httpapitest.Token{Sub: "admin-9", Tenant: "globex", Scope: "memory/admin"},
			map[string]string{"userId": "u-123", "key": "language"}, 204,
			map[memory.Scope]map[string]string{ana: {"language": "Portuguese", "city": "Lisbon"}, otherAna: {}}},
		{"user scope on the admin route", "DELETE /v1/users/{userId}/facts/{key}", user,
			map[string]string{"userId": "u-456", "key": "language"}, 403, untouched},
		{"admin scope on a /me route", "DELETE /v1/me/facts/{key}", admin, map[string]string{"key": "language"}, 403, untouched},
		{"empty key", "DELETE /v1/me/facts/{key}", user, map[string]string{"key": "--"}, 400, untouched},
		{"no token", "DELETE /v1/me/facts/{key}", nil, map[string]string{"key": "language"}, 401, untouched},
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
	h := handlerOn(t, repo)
	spec := httpapitest.LoadSpec(t)
	for range 2 { // The second time the key is absent: 204 again.
		resp := httpapitest.Exchange(t, spec, h, httpapitest.ReadEvent(t, "deletefact-me.json"))
		if resp.StatusCode != 204 {
			t.Fatalf("got %d %s", resp.StatusCode, resp.Body)
		}
	}
	if diff := cmp.Diff(map[string]string{"city": "Lisbon"}, httpapitest.Facts(t, repo, ana)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"language": "German"}, httpapitest.Facts(t, repo, bob)); diff != "" {
		t.Errorf("bob's facts (-want +got):\n%s", diff)
	}
}
