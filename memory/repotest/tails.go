package repotest

import (
	"context"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// testTailsRoundTrip: the unread tails of the idle read are stored by
// Save, kept by SetFact and DeleteFact, removed by ClearFacts and Erase.
func testTailsRoundTrip(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	tails := map[string]memory.Tail{"th-1": {TurnCount: 4, SentAt: t0}, "th-2": {TurnCount: 9, SentAt: t1}}
	v := save(t, r, ana, memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}, Tombstones: map[string]time.Time{}, Tails: tails})
	same(t, "after Save", memory.Record{Version: v, Facts: []memory.Fact{fact("a", "1", t0)}, Tails: tails}, get(t, r, ana))

	if ok, _ := setFact(t, r, ana, fact("b", "2", t1), 10); !ok {
		t.Fatal("SetFact did not apply")
	}
	if ok, _ := deleteFact(t, r, ana, "a", t2, 10); !ok {
		t.Fatal("DeleteFact did not apply")
	}
	if got := get(t, r, ana).Tails; len(got) != 2 || got["th-1"] != tails["th-1"] || got["th-2"] != tails["th-2"] {
		t.Errorf("tails after SetFact and DeleteFact = %v, want %v", got, tails)
	}
	if err := r.ClearFacts(ctx, ana, t2); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, ana).Tails; got != nil {
		t.Errorf("tails after ClearFacts = %v, want none: a clear fences the idle read", got)
	}

	save(t, r, bob, memory.Record{Facts: []memory.Fact{}, Tombstones: map[string]time.Time{}, Tails: tails})
	if _, err := r.Erase(ctx, bob, t2); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, bob).Tails; got != nil {
		t.Errorf("tails after Erase = %v, want none", got)
	}
}

// idleStore returns a store over r with a scripted model that sets
// role=nurse at every call, and a clock that moves on a second a call.
func idleStore(t *testing.T, r memory.Repository, m memory.Model) *memory.Store {
	t.Helper()
	clock := t0
	s, err := memory.New(r, memory.Config{}, memory.WithModel(m), memory.WithClock(func() time.Time {
		clock = clock.Add(time.Second)
		return clock
	}))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// countingModel is a model that answers role=nurse, quoting the user, and
// counts its calls.
type countingModel struct{ calls int }

func (m *countingModel) Extract(context.Context, memory.ModelRequest) (memory.ModelAnswer, error) {
	m.calls++
	return memory.ModelAnswer{Operations: []memory.Operation{{Op: memory.OpSet, Key: "role", Value: "nurse", Evidence: "I work as a nurse"}}}, nil
}

// idleRequest is the request of a message of ana's thread with counts
// prev → count, sent at sentAt.
func idleRequest(thread string, prev, count int, sentAt time.Time) memory.ExtractRequest {
	return userRequest(ana, thread, prev, count, sentAt)
}

// userRequest is idleRequest for the user of sc.
func userRequest(sc memory.Scope, thread string, prev, count int, sentAt time.Time) memory.ExtractRequest {
	return memory.ExtractRequest{Scope: sc, ThreadID: thread, PreviousTurnCount: prev, TurnCount: count, SentAt: sentAt,
		Turns: []memory.Turn{{Role: memory.RoleUser, Text: "I work as a nurse."}, {Role: memory.RoleAssistant, Text: "Noted."}}}
}

// testIdleReadOnce: a tail noted is read once by its copy, superseded by a
// newer message of the thread, and read by a due extraction; the
// repository stores what the store needs for each.
func testIdleReadOnce(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	m := &countingModel{}
	s := idleStore(t, r, m)
	check := func(what string, got, want memory.Outcome, err error) {
		t.Helper()
		if err != nil || got != want {
			t.Fatalf("%s = %q, %v; want %q", what, got, err, want)
		}
	}
	sent := t0.Add(-time.Hour)
	o, err := s.NoteTail(ctx, idleRequest("th-1", 2, 4, sent))
	check("NoteTail of turn 4", o, memory.OutcomeNoted, err)
	v := get(t, r, ana).Version
	o, err = s.NoteTail(ctx, idleRequest("th-1", 2, 4, sent))
	check("NoteTail of turn 4 again", o, memory.OutcomeNoted, err)
	if get(t, r, ana).Version != v {
		t.Error("noting the same tail again wrote")
	}
	o, err = s.NoteTail(ctx, idleRequest("th-1", 4, 5, sent.Add(time.Second)))
	check("NoteTail of turn 5", o, memory.OutcomeNoted, err)
	if got := get(t, r, ana).Tails["th-1"]; got.TurnCount != 5 || !got.SentAt.Equal(sent.Add(time.Second)) {
		t.Errorf("tail = %+v, want turn 5 sent at %s", got, sent.Add(time.Second))
	}

	res, err := s.ReadIdle(ctx, idleRequest("th-1", 2, 4, sent))
	check("ReadIdle of turn 4", res.Outcome, memory.OutcomeSuperseded, err)
	res, err = s.ReadIdle(ctx, idleRequest("th-1", 4, 5, sent.Add(time.Second)))
	check("ReadIdle of turn 5", res.Outcome, memory.OutcomeChanged, err)
	rec := get(t, r, ana)
	if _, ok := rec.Tails["th-1"]; ok || rec.Threads["th-1"].TurnCount != 5 || len(rec.Facts) != 1 {
		t.Errorf("after the idle read: tails %v, watermark %+v, facts %v; want no tail, turn 5, role", rec.Tails, rec.Threads["th-1"], rec.Facts)
	}
	res, err = s.ReadIdle(ctx, idleRequest("th-1", 4, 5, sent.Add(time.Second)))
	check("ReadIdle of turn 5 again", res.Outcome, memory.OutcomeAlreadyRead, err)
	if m.calls != 1 {
		t.Errorf("model calls = %d, want 1 for one idle thread", m.calls)
	}

	// A due extraction reads the tail: its copy then reads nothing.
	o, err = s.NoteTail(ctx, idleRequest("th-2", 2, 4, sent))
	check("NoteTail of th-2", o, memory.OutcomeNoted, err)
	ex, err := s.Extract(ctx, idleRequest("th-2", 4, 6, sent.Add(time.Second)))
	// th-2 confirms role = nurse, learned in th-1: it becomes its source.
	check("Extract of turn 6", ex.Outcome, memory.OutcomeChanged, err)
	if _, ok := get(t, r, ana).Tails["th-2"]; ok {
		t.Error("a due extraction left the tail it read")
	}
	res, err = s.ReadIdle(ctx, idleRequest("th-2", 2, 4, sent))
	check("ReadIdle after the due extraction", res.Outcome, memory.OutcomeAlreadyRead, err)
	if m.calls != 2 {
		t.Errorf("model calls = %d, want 2", m.calls)
	}
}

// testIdleReadFenced: a clear, an erasure or a forget of the thread
// between the note and the idle read wins: nothing is read, nothing comes back.
func testIdleReadFenced(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	m := &countingModel{}
	s := idleStore(t, r, m)
	sent := t0.Add(-time.Hour)
	for _, c := range []struct {
		name   string
		user   memory.Scope
		delete func(memory.Scope) error
		want   memory.Outcome
	}{
		{"clear", ana, func(sc memory.Scope) error { return s.Clear(ctx, sc) }, memory.OutcomeCleared},
		{"erasure", bob, func(sc memory.Scope) error { _, err := s.DeleteByUser(ctx, sc, memory.Retention{}); return err }, memory.OutcomeFenced},
		{"forget of the thread", otherAna, func(sc memory.Scope) error { _, err := s.ForgetThread(ctx, sc, "th-1"); return err }, memory.OutcomeThreadForgotten},
	} {
		if o, err := s.NoteTail(ctx, userRequest(c.user, "th-1", 2, 4, sent)); err != nil || o != memory.OutcomeNoted {
			t.Fatalf("%s: NoteTail = %q, %v", c.name, o, err)
		}
		if err := c.delete(c.user); err != nil {
			t.Fatal(err)
		}
		res, err := s.ReadIdle(ctx, userRequest(c.user, "th-1", 2, 4, sent))
		if err != nil || res.Outcome != c.want || len(res.Facts) != 0 {
			t.Errorf("%s: ReadIdle = %q, %v, facts %v; want %q and none", c.name, res.Outcome, err, res.Facts, c.want)
		}
		// A copy that carried a later send time still finds no tail.
		res, err = s.ReadIdle(ctx, userRequest(c.user, "th-1", 2, 4, t0.Add(time.Hour)))
		if err != nil || res.Outcome != memory.OutcomeAlreadyRead {
			t.Errorf("%s: ReadIdle after it with a later send time = %q, %v; want %q", c.name, res.Outcome, err, memory.OutcomeAlreadyRead)
		}
		if got, _ := s.GetFacts(ctx, c.user); len(got) != 0 {
			t.Errorf("%s: facts after the idle read = %v, want none", c.name, got)
		}
	}
	if m.calls != 0 {
		t.Errorf("model calls = %d, want 0", m.calls)
	}
}
