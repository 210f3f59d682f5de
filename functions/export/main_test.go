package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// anas is Ana's export as the seeded repository holds it, read at
// httpapitest.Now.
const anas = `{"format":1,"exportedAt":"2026-11-29T22:00:00Z","tenantId":"acme","userId":"u-123",` +
	`"facts":[{"key":"city","value":"Lisbon","updatedAt":"2026-11-29T22:00:00Z","origin":"manual"},{"key":"language","value":"Portuguese","updatedAt":"2026-11-29T22:00:00Z","origin":"manual"}],` +
	`"pending":[],"forgotten":[],"threads":[],"imports":[]}`

// fixture is this function with the standard users seeded, and its table:
// a token exports only its own user in its own tenant, an admin any user
// of the token's tenant.
var fixture = httpapitest.Fixture{NewHandler: newHandler, Function: "ExportFunction", Events: "export-",
	Cases: []httpapitest.Case{
		{Event: "export-me.json", Status: 200, Answer: anas},
		{Event: "export-admin.json", Status: 200, Answer: anas},
		{Name: "a userId in the path of a /me route is ignored", Route: "GET /v1/me/export", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-456"}, Status: 200, Answer: anas},
		{Name: "user without a record", Route: "GET /v1/me/export", Token: &httpapitest.Token{Sub: "u-789", Tenant: "acme", Scope: "memory/user"},
			Status: 200, Answer: `{"format":1,"exportedAt":"2026-11-29T22:00:00Z","tenantId":"acme","userId":"u-789","facts":[],"pending":[],"forgotten":[],"threads":[],"imports":[]}`},
		{Name: "admin of another tenant exports that tenant's namesake", Route: "GET /v1/users/{userId}/export", Token: httpapitest.AdminToken("globex"),
			Params: map[string]string{"userId": "u-123"}, Status: 200,
			Answer: `{"format":1,"exportedAt":"2026-11-29T22:00:00Z","tenantId":"globex","userId":"u-123","facts":[{"key":"language","value":"Finnish","updatedAt":"2026-11-29T22:00:00Z","origin":"manual"}],"pending":[],"forgotten":[],"threads":[],"imports":[]}`},
		{Name: "user scope on the admin route", Route: "GET /v1/users/{userId}/export", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-456"}, Status: 403, Code: httpapi.CodeForbidden},
		{Name: "admin scope only on the /me route", Route: "GET /v1/me/export", Token: httpapitest.AdminToken("acme"), Status: 403},
		{Name: "no token", Route: "GET /v1/me/export", Status: 401},
		{Name: "invalid user ID", Route: "GET /v1/users/{userId}/export", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"userId": "u-123/../u-456"}, Status: 400, Code: memory.CodeInvalidID},
	},
	OnDynamoDB: []httpapitest.Case{{Event: "export-me.json", Status: 200, Answer: anas}},
}

func TestFunction(t *testing.T) { fixture.Run(t) }

// TestExportHoldsTombstonesTimesAndWatermarks shows the members a plain
// record lacks: a forgotten key with its time, the clear's and the
// erasure's times, and the watermarks of a counted and of an uncounted
// extraction (the first with a thread's forget fence), as the repository
// holds them.
func TestExportHoldsTombstonesTimesAndWatermarks(t *testing.T) {
	repo := fixture.Repo(t)
	at := httpapitest.Now.Add(-time.Hour)
	rec, _ := repo.Record(httpapitest.Ana)
	rec.Tombstones = map[string]time.Time{"pet": at}
	rec.ClearedAt, rec.ErasedAt = at.Add(-time.Hour), at.Add(-2*time.Hour)
	digest := memory.TurnsDigest([]memory.Turn{{Role: memory.RoleUser, Text: "I live in Lisbon."}})
	rec.Threads = map[string]memory.ThreadMark{"th-9": {TurnCount: 6, At: at, ForgottenAt: at}, "th-u": {Digest: digest, At: at}}
	repo.Put(httpapitest.Ana, rec)
	httpapitest.Send(t, fixture.Handler(t, repo), repo, httpapitest.Case{Event: "export-me.json", Status: 200,
		Answer: strings.Replace(anas, `"forgotten":[],"threads":[]`, `"forgotten":[{"key":"pet","forgottenAt":"2026-11-29T21:00:00Z"}],`+
			`"clearedAt":"2026-11-29T20:00:00Z","erasedAt":"2026-11-29T19:00:00Z","threads":[{"threadKey":"th-9","turnCount":6,"extractedAt":"2026-11-29T21:00:00Z","forgottenAt":"2026-11-29T21:00:00Z"},`+
			`{"threadKey":"th-u","turnCount":0,"turnsDigest":"`+digest+`","extractedAt":"2026-11-29T21:00:00Z"}]`, 1)})
}

// TestExportLeavesAnAuditLine shows that every export, by the user or by
// an admin, leaves one audit line (action export) naming users by their
// references only, and that neither log line holds a user ID, a key or a
// value.
func TestExportLeavesAnAuditLine(t *testing.T) {
	repo := fixture.Repo(t)
	var out bytes.Buffer
	h, err := newHandler(httpapitest.NewStore(t, repo), httpapi.RequestConfig{}, httpapi.NewLogger(&out))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"export-me.json", "export-admin.json"} {
		out.Reset()
		httpapitest.Invoke(t, h.Handle, httpapitest.ReadEvent(t, ev))
		for _, secret := range []string{`"u-123"`, "admin-7", "Lisbon", "language"} {
			if strings.Contains(out.String(), secret) {
				t.Errorf("%s: the log holds %s:\n%s", ev, secret, out.String())
			}
		}
		var audits []map[string]any
		for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			if m["msg"] == "audit" {
				audits = append(audits, m)
			}
		}
		if len(audits) != 1 || audits[0]["action"] != "export" || audits[0]["outcome"] != "ok" ||
			audits[0]["targetRef"] != logref.User("acme", "u-123") || audits[0]["callerRef"] == nil {
			t.Errorf("%s: audit lines %v, want one export of %s with its caller", ev, audits, logref.User("acme", "u-123"))
		}
	}
}

// TestExportHoldsEvidenceAndPending shows an extracted fact with the
// user's words it rests on, and a pending fact with its category and the
// time it is dropped.
func TestExportHoldsEvidenceAndPending(t *testing.T) {
	repo := memorytest.NewRepo()
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-9", "I moved to Porto. I have asthma.",
		memory.Operation{Op: memory.OpSet, Key: "home_city", Value: "Porto", Evidence: "I moved to Porto"},
		memory.Operation{Op: memory.OpSet, Key: "health_condition", Value: "asthma", Evidence: "I have asthma"})
	want := `{"format":1,"exportedAt":"2026-11-29T22:00:00Z","tenantId":"acme","userId":"u-123",` +
		`"facts":[{"key":"home_city","value":"Porto","updatedAt":"2026-11-29T22:00:00Z","origin":"conversation","sourceThreadId":"th-9","evidence":"I moved to Porto","saidAt":"2026-11-29T22:00:00Z"}],` +
		`"pending":[{"key":"health_condition","value":"asthma","updatedAt":"2026-11-29T22:00:00Z","origin":"conversation","sourceThreadId":"th-9","evidence":"I have asthma","category":"health","saidAt":"2026-11-29T22:00:00Z","pendingUntil":"2026-12-06T22:00:00Z"}],` +
		`"forgotten":[],"threads":[{"threadKey":"th-9","turnCount":2,"extractedAt":"2026-11-29T22:00:00Z"}],"imports":[]}`
	httpapitest.Send(t, fixture.Handler(t, repo), repo, httpapitest.Case{Event: "export-me.json", Status: 200, Answer: want})
}

// TestExportHoldsHistory shows a fact's previous value with the change
// that replaced it, and that removing the fact leaves no trace of it in
// the export (forget means forget).
func TestExportHoldsHistory(t *testing.T) {
	repo := fixture.Repo(t)
	at := httpapitest.Now.Add(-time.Hour)
	rec, _ := repo.Record(httpapitest.Ana)
	rec.History = map[string][]memory.PreviousValue{"city": {{Value: "Braga", ReplacedAt: at, Origin: memory.OriginConversation,
		ThreadID: "th-9", ThreadTitle: "Moving house", Evidence: "I moved to Lisbon", ValueThreadID: "th-1"}}}
	repo.Put(httpapitest.Ana, rec)
	h := fixture.Handler(t, repo)
	httpapitest.Send(t, h, repo, httpapitest.Case{Event: "export-me.json", Status: 200,
		Answer: strings.Replace(anas, `"origin":"manual"}`, `"origin":"manual","history":[{"value":"Braga","replacedAt":"2026-11-29T21:00:00Z",`+
			`"origin":"conversation","threadId":"th-9","threadTitle":"Moving house","evidence":"I moved to Lisbon","valueThreadId":"th-1"}]}`, 1)})
	s := httpapitest.NewStore(t, repo)
	if err := s.RemoveFact(t.Context(), httpapitest.Ana, "city"); err != nil {
		t.Fatal(err)
	}
	e, err := s.Export(t.Context(), httpapitest.Ana)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(documentOf(s, httpapitest.Ana, e))
	if strings.Contains(string(b), "Braga") || strings.Contains(string(b), "history") {
		t.Errorf("the export after removing city holds its history: %s", b)
	}
}

// TestExportShowsImports: the export lists the user's imports, what was
// imported from which source and when, as GET /v1/me/imports/{importId}
// shows each.
func TestExportShowsImports(t *testing.T) {
	repo := fixture.Repo(t)
	rec, _ := repo.Record(httpapitest.Ana)
	at := httpapitest.Now.Add(-time.Hour)
	rec.Imports = []memory.ImportMark{{ID: "imp-1795986000000-ab", Source: "ChatGPT", RequestedAt: at, DoneAt: at.Add(time.Minute),
		Status: memory.ImportDone, Parts: 1, Statements: 4, Proposed: 2, LeftOut: memory.ImportLeftOut{Secrets: 1, Skipped: 1}}}
	repo.Put(httpapitest.Ana, rec)
	httpapitest.Send(t, fixture.Handler(t, repo), repo, httpapitest.Case{Event: "export-me.json", Status: 200,
		Answer: strings.Replace(anas, `"imports":[]`, `"imports":[{"importId":"imp-1795986000000-ab","source":"ChatGPT","status":"done",`+
			`"requestedAt":"2026-11-29T21:00:00Z","doneAt":"2026-11-29T21:01:00Z","parts":1,"statements":4,"proposed":2,`+
			`"leftOut":{"secrets":1,"instructions":0,"unsupported":0,"ended":0,"known":0,"declined":0,"deletes":0,"skipped":1,"overCap":0,"noRoom":0}}]`, 1)})
}
