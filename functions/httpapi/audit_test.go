package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// loggedAPI serves the fact API as its functions do, one handler per
// function over one real store, all logging to one buffer in the
// functions' JSON format.
type loggedAPI struct {
	handlers map[string]*httpapi.Handler // by route key
	log      bytes.Buffer
}

func newLoggedAPI(t *testing.T) *loggedAPI {
	t.Helper()
	a := &loggedAPI{handlers: map[string]*httpapi.Handler{}}
	store := httpapitest.NewStore(t, memorytest.NewRepo())
	log := httpapi.NewLogger(&a.log)
	add := func(op httpapi.Op, routes ...string) {
		h, err := httpapi.New(httpapi.RequestConfig{}, log, op, routes...)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range routes {
			a.handlers[r] = h
		}
	}
	add(func(ctx context.Context, r httpapi.Request) (int, any, error) {
		m, err := store.GetFactsAndPending(ctx, r.Scope)
		return http.StatusOK, httpapi.NewFactsBody(store, m), err
	}, "GET /v1/me/facts", "GET /v1/users/{userId}/facts")
	add(func(ctx context.Context, r httpapi.Request) (int, any, error) {
		f, err := store.Put(ctx, r.Scope, memory.FactInput{Key: r.Key, Value: r.Value})
		return http.StatusOK, httpapi.FactBody{Fact: httpapi.FactOf(f)}, err
	}, "PUT /v1/me/facts/{key}", "PUT /v1/users/{userId}/facts/{key}")
	add(func(ctx context.Context, r httpapi.Request) (int, any, error) {
		return http.StatusNoContent, nil, store.RemoveFact(ctx, r.Scope, r.Key)
	}, "DELETE /v1/me/facts/{key}", "DELETE /v1/users/{userId}/facts/{key}")
	add(func(ctx context.Context, r httpapi.Request) (int, any, error) {
		return http.StatusNoContent, nil, store.Clear(ctx, r.Scope)
	}, "DELETE /v1/me/facts", "DELETE /v1/users/{userId}/facts")
	add(func(ctx context.Context, r httpapi.Request) (int, any, error) {
		e, err := store.DeleteByUser(ctx, r.Scope, memory.Retention{})
		return http.StatusOK, httpapi.ErasedBody{RemovedFacts: e.RemovedFacts}, err
	}, "DELETE /v1/users/{userId}")
	return a
}

func (a *loggedAPI) send(t *testing.T, route string, tok *httpapitest.Token, params map[string]string, body string) int {
	t.Helper()
	ev := httpapitest.NewEvent(route, tok, params, body)
	resp, err := a.handlers[route].Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// lines returns the log's lines, decoded, and empties the log.
func (a *loggedAPI) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(a.log.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	a.log.Reset()
	return out
}

// TestLogNamesNoUser sends every route, as a user and as an admin, and
// finds no user ID, no key from the path and no fact value in the log;
// each line names the user by its logref.User reference.
func TestLogNamesNoUser(t *testing.T) {
	a := newLoggedAPI(t)
	ana := &httpapitest.Token{Sub: "ana-7f3k", Tenant: "acme", Scope: "memory/user"}
	boss := &httpapitest.Token{Sub: "boss-q2w9", Tenant: "acme", Scope: "memory/admin"}
	me := map[string]string{"key": "favourite_colour"}
	them := map[string]string{"key": "favourite_colour", "userId": "ana-7f3k"}
	a.send(t, "PUT /v1/me/facts/{key}", ana, me, `{"value":"vermilion-zq"}`)
	a.send(t, "GET /v1/me/facts", ana, nil, "")
	a.send(t, "PUT /v1/me/facts/{key}", ana, me, `{"value":"vermilion-zq","value":"x"}`)
	a.send(t, "PUT /v1/users/{userId}/facts/{key}", boss, them, `{"value":"vermilion-zq"}`)
	a.send(t, "GET /v1/users/{userId}/facts", boss, them, "")
	a.send(t, "DELETE /v1/users/{userId}/facts/{key}", boss, them, "")
	a.send(t, "DELETE /v1/users/{userId}/facts", boss, them, "")
	a.send(t, "DELETE /v1/users/{userId}", boss, them, "")
	a.send(t, "DELETE /v1/users/{userId}", ana, them, "") // Refused: no admin scope.
	out := a.log.String()
	for _, secret := range []string{"ana-7f3k", "boss-q2w9", "vermilion-zq", "favourite_colour"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
	anaRef, bossRef := logref.User("acme", "ana-7f3k"), logref.User("acme", "boss-q2w9")
	for _, l := range a.lines(t) {
		if l["tenantId"] != "acme" {
			t.Errorf("line without its tenant: %v", l)
		}
		if l["msg"] == "request" && l["userRef"] != anaRef {
			t.Errorf("request line: userRef = %v, want %s: %v", l["userRef"], anaRef, l)
		}
		if l["admin"] == true && l["callerRef"] != bossRef && l["route"] != "DELETE /v1/users/{userId}" {
			t.Errorf("admin request line: callerRef = %v, want %s: %v", l["callerRef"], bossRef, l)
		}
	}
}

// TestAuditLine checks the one audit line of each admin route: action,
// tenant, hashed caller and target, outcome, status and code, and for an
// erasure the facts removed. A refused attempt leaves one too; a /v1/me
// route none.
func TestAuditLine(t *testing.T) {
	a := newLoggedAPI(t)
	boss := &httpapitest.Token{Sub: "boss-1", Tenant: "acme", Scope: "memory/admin"}
	user := &httpapitest.Token{Sub: "mallory-1", Tenant: "acme", Scope: "memory/user"}
	bob := map[string]string{"userId": "bob-1", "key": "city"}
	a.send(t, "PUT /v1/me/facts/{key}", &httpapitest.Token{Sub: "bob-1", Tenant: "acme", Scope: "memory/user"}, bob, `{"value":"Oslo"}`)
	a.send(t, "PUT /v1/me/facts/{key}", &httpapitest.Token{Sub: "bob-1", Tenant: "acme", Scope: "memory/user"}, map[string]string{"key": "role"}, `{"value":"pilot"}`)
	for _, l := range a.lines(t) {
		if l["msg"] == "audit" {
			t.Errorf("a /v1/me route wrote an audit line: %v", l)
		}
	}
	bossRef, bobRef, malloryRef := logref.User("acme", "boss-1"), logref.User("acme", "bob-1"), logref.User("acme", "mallory-1")
	tests := []struct {
		route string
		tok   *httpapitest.Token
		body  string
		key   string
		want  map[string]any
	}{
		{"GET /v1/users/{userId}/facts", boss, "", "city", map[string]any{"action": "read", "outcome": "ok", "status": 200.0}},
		{"PUT /v1/users/{userId}/facts/{key}", boss, `{"value":"Bergen"}`, "city", map[string]any{"action": "put", "outcome": "ok", "status": 200.0}},
		{"PUT /v1/users/{userId}/facts/{key}", boss, `{"value":"a","value":"b"}`, "city",
			map[string]any{"action": "put", "outcome": "refused", "status": 400.0, "code": float64(httpapi.CodeDuplicateMember)}},
		{"DELETE /v1/users/{userId}/facts/{key}", boss, "", "city", map[string]any{"action": "delete", "outcome": "ok", "status": 204.0}},
		{"DELETE /v1/users/{userId}", user, "", "", map[string]any{"action": "erase", "outcome": "refused", "status": 403.0,
			"code": float64(httpapi.CodeForbidden), "callerRef": malloryRef}},
		{"DELETE /v1/users/{userId}/facts", boss, "", "", map[string]any{"action": "clear", "outcome": "ok", "status": 204.0}},
		{"DELETE /v1/users/{userId}", boss, "", "", map[string]any{"action": "erase", "outcome": "ok", "status": 200.0, "removedFacts": 0.0}},
	}
	for _, tt := range tests {
		a.send(t, tt.route, tt.tok, map[string]string{"userId": "bob-1", "key": tt.key}, tt.body)
		var audits []map[string]any
		for _, l := range a.lines(t) {
			if l["msg"] == "audit" {
				audits = append(audits, l)
			}
		}
		if len(audits) != 1 {
			t.Errorf("%s: %d audit lines, want 1: %v", tt.route, len(audits), audits)
			continue
		}
		want := map[string]any{"tenantId": "acme", "callerRef": bossRef, "targetRef": bobRef, "level": "INFO"}
		for k, v := range tt.want {
			want[k] = v
		}
		for k, v := range want {
			if audits[0][k] != v {
				t.Errorf("%s: audit %s = %v, want %v: %v", tt.route, k, audits[0][k], v, audits[0])
			}
		}
		if audits[0]["time"] == nil || audits[0]["requestId"] == "" {
			t.Errorf("%s: audit line without time or requestId: %v", tt.route, audits[0])
		}
	}
}

// TestAuditLineOfAnErasure: an erasure of a user with facts names the
// number removed, and a token with no valid identity still leaves an
// audit line, without a caller.
func TestAuditLineOfAnErasure(t *testing.T) {
	a := newLoggedAPI(t)
	boss := &httpapitest.Token{Sub: "boss-1", Tenant: "acme", Scope: "memory/admin"}
	them := map[string]string{"userId": "bob-1", "key": "city"}
	a.send(t, "PUT /v1/users/{userId}/facts/{key}", boss, them, `{"value":"Oslo"}`)
	a.lines(t)
	if got := a.send(t, "DELETE /v1/users/{userId}", boss, them, ""); got != http.StatusOK {
		t.Fatalf("erase = %d", got)
	}
	audit := a.lines(t)[1]
	if audit["msg"] != "audit" || audit["action"] != "erase" || audit["removedFacts"] != 1.0 {
		t.Errorf("audit line = %v, want an erase that removed 1 fact", audit)
	}
	noSub := &httpapitest.Token{Tenant: "acme", Scope: "memory/admin"}
	a.send(t, "DELETE /v1/users/{userId}", noSub, them, "")
	audit = a.lines(t)[1]
	if audit["outcome"] != "refused" || audit["code"] != float64(httpapi.CodeUnauthenticated) || audit["callerRef"] != nil {
		t.Errorf("audit line of a request without sub = %v", audit)
	}
}
