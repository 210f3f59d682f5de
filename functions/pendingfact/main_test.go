package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// seedPending stores, besides the standard users, what an extraction
// makes of Ana saying she has diabetes: a pending fact of the health
// category, health_condition, and nothing in her facts.
func seedPending(t testing.TB, repo memory.Repository) {
	t.Helper()
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-9", "By the way, I have diabetes.",
		memory.Operation{Op: memory.OpSet, Key: "health_condition", Value: "diabetes", Evidence: "I have diabetes"})
}

// anas are Ana's seeded facts, and anasKept the same with the pending
// fact kept.
var (
	anas     = map[string]string{"language": "Portuguese", "city": "Lisbon"}
	anasKept = map[string]string{"language": "Portuguese", "city": "Lisbon", "health_condition": "diabetes"}
)

// fixture is this function over the standard users and Ana's pending
// fact: only the user answers, for herself, keep moves the fact, discard
// drops it, and a refused request changes nothing.
var fixture = httpapitest.Fixture{NewHandler: newHandler, Function: "PendingFactFunction", Events: "pendingfact-", Seed: seedPending,
	Cases: []httpapitest.Case{
		{Event: "pendingfact-keep.json", Status: 200, Stored: httpapitest.UserFacts{httpapitest.Ana: anasKept}},
		{Event: "pendingfact-discard.json", Status: 204, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "keep of a key that waits for nothing", Route: routeKeep, Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "language"}, Status: 404, Code: memory.CodePendingNotFound, Stored: httpapitest.SeededFacts()},
		{Name: "keep by the key's other spelling", Route: routeKeep, Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "Health Condition"}, Status: 200, Stored: httpapitest.UserFacts{httpapitest.Ana: anasKept}},
		{Name: "discard of a key that waits for nothing", Route: routeDiscard, Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "language"}, Status: 204, Stored: httpapitest.SeededFacts()},
		{Name: "another user keeps nothing of Ana's", Route: routeKeep,
			Token:  &httpapitest.Token{Sub: httpapitest.Bob.UserID, Tenant: httpapitest.Bob.TenantID, Scope: "memory/user"},
			Params: map[string]string{"key": "health_condition"}, Status: 404, Code: memory.CodePendingNotFound, Stored: httpapitest.SeededFacts()},
		{Name: "Ana's user ID in another tenant keeps nothing", Route: routeKeep,
			Token:  &httpapitest.Token{Sub: httpapitest.OtherAna.UserID, Tenant: httpapitest.OtherAna.TenantID, Scope: "memory/user"},
			Params: map[string]string{"key": "health_condition"}, Status: 404, Code: memory.CodePendingNotFound, Stored: httpapitest.SeededFacts()},
		{Name: "an admin token may not answer for the user", Route: routeKeep, Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"key": "health_condition"}, Status: 403, Code: httpapi.CodeForbidden, Stored: httpapitest.SeededFacts()},
		{Name: "no token", Route: routeDiscard, Params: map[string]string{"key": "health_condition"}, Status: 401, Stored: httpapitest.SeededFacts()},
		{Name: "a key with a character a key may not hold", Route: routeKeep, Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "health!"}, Status: 400, Code: memory.CodeInvalidKeyChars, Stored: httpapitest.SeededFacts()},
		{Name: "route this function does not serve", Route: "DELETE /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "city"}, Status: 404},
	},
}

func TestFunction(t *testing.T) { fixture.Run(t) }

// TestAnswers follows Ana's pending fact through a keep and through a
// discard: keep answers the fact with its evidence and category and
// leaves nothing pending; discard leaves nothing pending and no fact;
// each answer leaves an audit line with hashed references only.
func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		event, action, answer string
		facts                 map[string]string
	}{
		{"pendingfact-keep.json", "keep", `{"fact":{"key":"health_condition","value":"diabetes","updatedAt":"2026-11-29T22:00:00Z",` +
			`"origin":"conversation","sourceThreadId":"th-9","evidence":"I have diabetes","category":"health","saidAt":"2026-11-29T22:00:00Z"}}`, anasKept},
		{"pendingfact-discard.json", "discard", "", anas},
	} {
		t.Run(tc.action, func(t *testing.T) {
			repo := fixture.Repo(t)
			var log bytes.Buffer
			h, err := newHandler(httpapitest.NewStore(t, repo), httpapi.RequestConfig{}, httpapi.NewLogger(&log))
			if err != nil {
				t.Fatal(err)
			}
			resp := httpapitest.Invoke(t, h.Handle, httpapitest.ReadEvent(t, tc.event))
			if resp.Body != tc.answer {
				t.Errorf("got %d %s, want %s", resp.StatusCode, resp.Body, tc.answer)
			}
			m, err := httpapitest.NewStore(t, repo).GetFactsAndPending(context.Background(), httpapitest.Ana)
			if err != nil || len(m.Pending) != 0 || len(m.Facts) != len(tc.facts) {
				t.Errorf("afterwards: %+v, %v; want nothing pending and the facts %v", m, err, tc.facts)
			}
			audit := auditLine(t, log.String())
			if audit["action"] != tc.action || audit["outcome"] != "ok" || audit["targetRef"] == nil ||
				strings.Contains(log.String(), httpapitest.Ana.UserID) || strings.Contains(log.String(), "diabetes") {
				t.Errorf("audit line %v in log %s: want action %s, outcome ok, hashed references only", audit, log.String(), tc.action)
			}
		})
	}
}

// auditLine returns the one audit line of log, decoded.
func auditLine(t *testing.T, log string) map[string]any {
	t.Helper()
	var found map[string]any
	for line := range strings.Lines(log) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == "audit" {
			if found != nil {
				t.Fatalf("two audit lines in %s", log)
			}
			found = m
		}
	}
	if found == nil {
		t.Fatalf("no audit line in %s", log)
	}
	return found
}
