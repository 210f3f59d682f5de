package repotest

import (
	"context"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// testForgetFenceRoundTrip: a thread's forget fence (ThreadMark.ForgottenAt)
// is stored by Save, on a counted and an uncounted watermark, and kept by
// SetFact, DeleteFact and ClearFacts, which keep the watermarks.
func testForgetFenceRoundTrip(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	threads := map[string]memory.ThreadMark{
		"th-1": {TurnCount: 4, At: t0, ForgottenAt: t1},
		"th-2": {Digest: memory.TurnsDigest([]memory.Turn{{Role: memory.RoleUser, Text: "hi"}}), At: t0, ForgottenAt: t2},
		"th-3": {TurnCount: 2, At: t1},
	}
	v := save(t, r, ana, memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}, Tombstones: map[string]time.Time{}, Threads: threads})
	same(t, "after Save", memory.Record{Version: v, Facts: []memory.Fact{fact("a", "1", t0)}, Threads: threads}, get(t, r, ana))
	if ok, _ := setFact(t, r, ana, fact("b", "2", t1), 10); !ok {
		t.Fatal("SetFact did not apply")
	}
	if ok, _ := deleteFact(t, r, ana, "a", t2, 10); !ok {
		t.Fatal("DeleteFact did not apply")
	}
	if err := r.ClearFacts(ctx, ana, t2); err != nil {
		t.Fatal(err)
	}
	got := get(t, r, ana).Threads
	for k, want := range threads {
		if m := got[k]; m.TurnCount != want.TurnCount || m.Digest != want.Digest || !m.At.Equal(want.At) || !m.ForgottenAt.Equal(want.ForgottenAt) {
			t.Errorf("watermark of %s after SetFact, DeleteFact and ClearFacts = %+v, want %+v", k, m, want)
		}
	}
}

// holdingModel is countingModel that runs during, when set, while it holds
// a request.
type holdingModel struct {
	countingModel
	during func()
}

func (m *holdingModel) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	if d := m.during; d != nil {
		m.during = nil
		d()
	}
	return m.countingModel.Extract(ctx, req)
}

// testForgetThread: the store's ForgetThread over the repository forgets
// the thread's facts only, and its fence refuses a message of the thread
// sent before it, also one the model holds during the forget; a message
// sent after it writes.
func testForgetThread(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	m := &holdingModel{}
	s := idleStore(t, r, m)
	sent := t0.Add(-time.Hour)
	if _, err := s.Put(ctx, ana, memory.FactInput{Key: "language", Value: "pt"}); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Extract(ctx, idleRequest("th-1", 0, 2, sent)); err != nil || res.Outcome != memory.OutcomeChanged {
		t.Fatalf("Extract of th-1 = %+v, %v", res, err)
	}
	got, err := s.ForgetThread(ctx, ana, "th-1")
	if err != nil || len(got.Facts) != 1 || got.Facts[0].Key != "role" {
		t.Fatalf("ForgetThread = %+v, %v; want role forgotten", got, err)
	}
	facts, _ := s.GetFacts(ctx, ana)
	if len(facts) != 1 || facts[0].Key != "language" {
		t.Errorf("facts after the forget = %v, want language alone", facts)
	}
	if f := get(t, r, ana).Threads["th-1"]; f.TurnCount != 2 || f.ForgottenAt.IsZero() || f.ForgottenAt.Before(got.At) {
		t.Errorf("th-1 watermark = %+v, want turn count 2 and a fence at or after %v", f, got.At)
	}

	// A later message of th-1, sent before the forget: refused, no call.
	res, err := s.Extract(ctx, idleRequest("th-1", 2, 4, got.At))
	if err != nil || res.Outcome != memory.OutcomeThreadForgotten || m.calls != 1 {
		t.Errorf("th-1 sent at the forget = %q, %v, model calls %d; want %q and no call", res.Outcome, err, m.calls, memory.OutcomeThreadForgotten)
	}

	// Held in the model while th-2 is forgotten: nothing is written.
	m.during = func() {
		if _, err := s.ForgetThread(ctx, ana, "th-2"); err != nil {
			t.Error(err)
		}
	}
	res, err = s.Extract(ctx, idleRequest("th-2", 0, 2, sent))
	if err != nil || res.Outcome != memory.OutcomeThreadForgotten || m.calls != 2 {
		t.Errorf("th-2 held during its forget = %q, %v, model calls %d; want %q after one call", res.Outcome, err, m.calls, memory.OutcomeThreadForgotten)
	}
	if facts, _ := s.GetFacts(ctx, ana); len(facts) != 1 {
		t.Errorf("facts after the held message = %v, want language alone", facts)
	}

	// Sent after the forget: written.
	res, err = s.Extract(ctx, idleRequest("th-1", 2, 4, t0.Add(time.Hour)))
	if err != nil || res.Outcome != memory.OutcomeChanged {
		t.Errorf("th-1 sent after the forget = %q, %v; want %q", res.Outcome, err, memory.OutcomeChanged)
	}
}
