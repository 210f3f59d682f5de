package dynamorepo_test

import (
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestUncountedExtractionOnDynamoDB runs an uncounted extraction (no turn
// counts) against DynamoDB: it stores the digest of its turns as the
// thread's watermark, a redelivery is a duplicate for one read and no
// model call, new turns are read, and a counted request after them
// replaces the digest with its count.
func TestUncountedExtractionOnDynamoDB(t *testing.T) {
	f := newFixture(t)
	model := memorytest.NewModel()
	s := newStore(t, f, memory.Config{}, memory.WithModel(model), memory.WithClock(memorytest.StepClock(t0)))
	uncounted := func(texts ...string) memory.ExtractRequest {
		req := extractReq("th-u", 0, 0, time.Time{})
		req.Uncounted = true
		for i, text := range texts {
			req.Turns = append(req.Turns, memory.Turn{Role: []string{memory.RoleUser, memory.RoleAssistant}[i%2], Text: text})
		}
		return req
	}
	first := uncounted(userSaid, "Olá Ana!")
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon")}})
	var res memory.ExtractResult
	f.step(t, "Extract uncounted", reqReadSave, func() (err error) { res, err = s.Extract(ctx, first); return err })
	if res.Outcome != memory.OutcomeChanged {
		t.Fatalf("outcome %s, want changed", res.Outcome)
	}
	mark := mustGet(t, f.repo, scope).Threads["th-u"]
	f.count.take()
	if mark.Digest != memory.TurnsDigest(first.Turns) || mark.TurnCount != 0 || mark.At.IsZero() {
		t.Errorf("watermark %+v, want the digest %s", mark, memory.TurnsDigest(first.Turns))
	}
	f.step(t, "Extract uncounted redelivered", reqRead, func() (err error) { res, err = s.Extract(ctx, first); return err })
	if res.Outcome != memory.OutcomeDuplicate || model.Calls() != 1 {
		t.Errorf("redelivery: outcome %s after %d model calls, want duplicate after 1", res.Outcome, model.Calls())
	}
	model.Push(memorytest.Answer{})
	f.step(t, "Extract uncounted, new turns", reqReadSave, func() (err error) {
		res, err = s.Extract(ctx, uncounted(userSaid, "Olá Ana!", "And you?"))
		return err
	})
	if res.Outcome != memory.OutcomeUnchanged || model.Calls() != 2 {
		t.Errorf("new turns: outcome %s after %d model calls, want unchanged after 2", res.Outcome, model.Calls())
	}
	model.Push(memorytest.Answer{})
	f.step(t, "Extract counted after uncounted", reqReadSave, func() (err error) {
		res, err = s.Extract(ctx, extractReq("th-u", 0, 2, time.Time{}))
		return err
	})
	if m := mustGet(t, f.repo, scope).Threads["th-u"]; res.Outcome != memory.OutcomeUnchanged || m.TurnCount != 2 || m.Digest != "" {
		t.Errorf("counted after uncounted: outcome %s, watermark %+v; want unchanged, turn count 2", res.Outcome, m)
	}
	f.count.take()
}
