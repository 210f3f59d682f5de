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
	httpapitest.RunEvents(t, "eraseuser-", map[string]httpapitest.Want{
		"eraseuser-admin.json":      {Status: http.StatusOK},
		"eraseuser-user-scope.json": {Status: http.StatusForbidden, Code: httpapi.CodeForbidden},
	}, func(t *testing.T) httpapitest.HandlerFunc {
		repo := memorytest.NewRepo()
		seeded(t, repo)
		return handlerOn(t, repo)
	})
}

func TestRoutesMatchTemplateAndDocument(t *testing.T) {
	httpapitest.CheckRoutes(t, "EraseUserFunction", routes)
}

func TestErasure(t *testing.T) {
	spec := httpapitest.LoadSpec(t)
	repo := memorytest.NewRepo()
	seeded(t, repo)
	h := handlerOn(t, repo)
	resp := httpapitest.Exchange(t, spec, h, httpapitest.ReadEvent(t, "eraseuser-admin.json"))
	if resp.StatusCode != 200 || resp.Body != `{"removedFacts":2}` {
		t.Fatalf("got %d %s, want 200 {\"removedFacts\":2}", resp.StatusCode, resp.Body)
	}
	rec, ok := repo.Record(ana)
	if !ok || len(rec.Facts) != 0 || !rec.ErasedAt.Equal(httpapitest.Now) {
		t.Errorf("ana's record after erasure: %+v, want a fence at %v", rec, httpapitest.Now)
	}
	if diff := cmp.Diff(map[string]string{"language": "German"}, httpapitest.Facts(t, repo, bob)); diff != "" {
		t.Errorf("bob (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"language": "Finnish"}, httpapitest.Facts(t, repo, otherAna)); diff != "" {
		t.Errorf("the same user ID in another tenant (-want +got):\n%s", diff)
	}
	again := httpapitest.Exchange(t, spec, h, httpapitest.ReadEvent(t, "eraseuser-admin.json"))
	if again.StatusCode != 200 || again.Body != `{"removedFacts":0}` {
		t.Errorf("second erasure: got %d %s", again.StatusCode, again.Body)
	}
}

func TestRefusals(t *testing.T) {
	spec := httpapitest.LoadSpec(t)
	tests := []struct {
		name   string
		tok    *httpapitest.Token
		params map[string]string
		status int
	}{
		{"user scope", user, map[string]string{"userId": "u-123"}, 403},
		{"user erasing themselves with both scopes in another tenant's name",
			&httpapitest.Token{Sub: "u-123", Tenant: "globex", Scope: "memory/user"}, map[string]string{"userId": "u-123"}, 403},
		{"no tenant claim", &httpapitest.Token{Sub: "admin-7", Scope: "memory/admin"}, map[string]string{"userId": "u-123"}, 401},
		{"invalid user ID", admin, map[string]string{"userId": "u-123/../u-456"}, 400},
		{"empty user ID", admin, map[string]string{"userId": ""}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := memorytest.NewRepo()
			seeded(t, repo)
			ev := httpapitest.NewEvent("DELETE /v1/users/{userId}", tt.tok, tt.params, "")
			resp := httpapitest.Invoke(t, handlerOn(t, repo), httpapitest.Marshal(t, ev))
			spec.Check(t, ev, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, resp.Body, tt.status)
			}
			if n := repo.Calls("Erase"); n != 0 {
				t.Errorf("a refused erasure called Erase %d times", n)
			}
		})
	}
}

func TestOnDynamoDB(t *testing.T) {
	repo := httpapitest.MotoRepo(t, httpapitest.Endpoint)
	seeded(t, repo)
	resp := httpapitest.Exchange(t, httpapitest.LoadSpec(t), handlerOn(t, repo), httpapitest.ReadEvent(t, "eraseuser-admin.json"))
	if resp.StatusCode != 200 || resp.Body != `{"removedFacts":2}` {
		t.Fatalf("got %d %s", resp.StatusCode, resp.Body)
	}
	if got := httpapitest.Facts(t, repo, ana); len(got) != 0 {
		t.Errorf("ana's facts after erasure: %v", got)
	}
	if diff := cmp.Diff(map[string]string{"language": "Finnish"}, httpapitest.Facts(t, repo, otherAna)); diff != "" {
		t.Errorf("other tenant (-want +got):\n%s", diff)
	}
}
