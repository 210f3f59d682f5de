package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/internal/fakebedrock"
)

// op is one operation of a scripted model answer, in the operations
// tool's JSON form: evidence (the user's words), validUntil and category.
type op = fakebedrock.Operation

// answer is a scripted step whose tool input holds ops, held delay first.
func answer(delay time.Duration, ops ...op) fakebedrock.Step {
	input, _ := json.Marshal(map[string]any{"operations": ops}) // Plain structs always marshal.
	return fakebedrock.Step{DelayMS: int(delay.Milliseconds()), Input: input}
}

// glassFact is a fact or a pending fact as GET /v1/me/facts returns it.
type glassFact struct {
	Key          string `json:"key"`
	Value        string `json:"value"`
	Origin       string `json:"origin"`
	Evidence     string `json:"evidence"`
	ValidUntil   string `json:"validUntil"`
	Category     string `json:"category"`
	PendingUntil string `json:"pendingUntil"`
}

// memoryOf reads the facts and the pending facts of the holder of tok, by
// key; the answer must have both lists.
func memoryOf(t *testing.T, tok string) (facts, pending map[string]glassFact) {
	t.Helper()
	r := api.Call(t, http.MethodGet, "/v1/me/facts", tok, nil)
	var body struct {
		Facts   []glassFact  `json:"facts"`
		Pending *[]glassFact `json:"pending"`
	}
	if err := json.Unmarshal(r.Body, &body); r.Status != http.StatusOK || err != nil || body.Pending == nil {
		t.Fatalf("GET /v1/me/facts = %d %s (%v), want 200 with facts and pending", r.Status, r.Body, err)
	}
	facts, pending = map[string]glassFact{}, map[string]glassFact{}
	for _, f := range body.Facts {
		facts[f.Key] = f
	}
	for _, f := range *body.Pending {
		pending[f.Key] = f
	}
	return facts, pending
}

// extractionRecord returns the extractor's record line of the one
// extraction of user that called the model, waiting for it.
func extractionRecord(t *testing.T, user string) map[string]any {
	t.Helper()
	ref := logref.User(tenant, user)
	var rec map[string]any
	waitFor(t, "the extractor's record line", func() bool {
		rec = nil
		f, err := os.Open(filepath.Join(st.Info.LogDir, "ExtractorFunction.log"))
		if err != nil {
			return false
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "extraction record" && m["userRef"] == ref && m["modelCalls"] != nil {
				rec = m
			}
		}
		return rec != nil
	})
	return rec
}

// count is a count of a record line, -1 when it is missing.
func count(rec map[string]any, name string) int {
	v, ok := rec[name].(float64)
	if !ok {
		return -1
	}
	return int(v)
}

// TestEvidenceNotInAUserTurnIsRefused: a SET that quotes the assistant,
// or nothing, is not stored and is counted as unsupported on the
// extractor's record line; a SET holding a card number is never stored
// (secrets), nor one whose last day has passed (ended); a SET that quotes
// the user is stored with its evidence, which GET returns.
func TestEvidenceNotInAUserTurnIsRefused(t *testing.T) {
	st.Converse().Reset()
	user := newUser("evidence")
	tok := userToken(t, tenant, user)
	st.Converse().Script(answer(0,
		op{Op: "SET", Key: "name", Value: "Ana", Evidence: "I'm Ana"},
		op{Op: "SET", Key: "role", Value: "nurse", Evidence: "you are a nurse"},
		op{Op: "SET", Key: "employer", Value: "Acme"},
		op{Op: "SET", Key: "card", Value: "4111 1111 1111 1111", Evidence: "my card is 4111 1111 1111 1111"},
		op{Op: "SET", Key: "trip", Value: "Rome", Evidence: "I was in Rome until yesterday",
			ValidUntil: time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)}))
	sendTurns(t, user, "th-1", 0, 2, "Hi, I'm Ana, my card is 4111 1111 1111 1111. I was in Rome until yesterday.", "Hello Ana! I guess you are a nurse?")
	waitFacts(t, tok, map[string]string{"name": "Ana"})
	waitQueueEmpty(t, st.Info.QueueURL)
	facts, _ := memoryOf(t, tok)
	if f := facts["name"]; f.Evidence != "I'm Ana" || f.Origin != "conversation" {
		t.Errorf("name = %+v, want the evidence I'm Ana and origin conversation", f)
	}
	if len(facts) != 1 {
		t.Errorf("facts = %v, want name only", facts)
	}
	rec := extractionRecord(t, user)
	want := map[string]int{"sets": 1, "unsupported": 2, "secrets": 1, "ended": 1, "pending": 0}
	for name, n := range want {
		if got := count(rec, name); got != n {
			t.Errorf("record line: %s = %d, want %d (%v)", name, got, n, rec)
		}
	}
}

// TestSensitiveFactWaitsAndTemporaryFactEnds: a fact about health waits as
// pending, out of the facts, until the user keeps it; a temporary fact is
// returned with its last day; the record line counts the pending one.
func TestSensitiveFactWaitsAndTemporaryFactEnds(t *testing.T) {
	st.Converse().Reset()
	user := newUser("pending")
	tok := userToken(t, tenant, user)
	friday := time.Now().UTC().AddDate(0, 0, 3).Format(time.DateOnly)
	st.Converse().Script(answer(0,
		op{Op: "SET", Key: "health_condition", Value: "asthma", Evidence: "I have asthma", Category: "health"},
		op{Op: "SET", Key: "current_city", Value: "Paris", Evidence: "I'm in Paris until Friday", ValidUntil: friday}))
	sendTurns(t, user, "th-1", 0, 2, "I have asthma, and I'm in Paris until Friday.", "Take care!")
	waitFacts(t, tok, map[string]string{"current_city": "Paris"})
	facts, pending := memoryOf(t, tok)
	if f := facts["current_city"]; f.ValidUntil != friday || f.Evidence != "I'm in Paris until Friday" {
		t.Errorf("current_city = %+v, want validUntil %s and its evidence", f, friday)
	}
	p, ok := pending["health_condition"]
	if _, in := facts["health_condition"]; in || !ok {
		t.Fatalf("facts %v, pending %v: want health_condition pending only", facts, pending)
	}
	if until, err := time.Parse(time.RFC3339, p.PendingUntil); err != nil || !until.After(time.Now()) || p.Category != "health" || p.Evidence != "I have asthma" {
		t.Errorf("pending fact = %+v, want a future pendingUntil, category health and its evidence", p)
	}
	if rec := extractionRecord(t, user); count(rec, "pending") != 1 || count(rec, "unsupported") != 0 {
		t.Errorf("record line: pending %d, unsupported %d; want 1 and 0 (%v)", count(rec, "pending"), count(rec, "unsupported"), rec)
	}

	r := api.Call(t, http.MethodPost, "/v1/me/pending/health_condition/keep", tok, nil)
	var kept struct{ Fact glassFact }
	if err := json.Unmarshal(r.Body, &kept); r.Status != http.StatusOK || err != nil || kept.Fact.Value != "asthma" || kept.Fact.Evidence != "I have asthma" {
		t.Fatalf("keep = %d %s, want 200 with the fact and its evidence", r.Status, r.Body)
	}
	facts, pending = memoryOf(t, tok)
	if facts["health_condition"].Value != "asthma" || len(pending) != 0 {
		t.Errorf("after keep: facts %v, pending %v; want health_condition kept and nothing pending", facts, pending)
	}
	if r := api.Call(t, http.MethodPost, "/v1/me/pending/health_condition/keep", tok, nil); r.Status != http.StatusNotFound {
		t.Errorf("a second keep = %d %s, want 404", r.Status, r.Body)
	}
}
