package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// duringModel is a model that runs during, when set, while it holds a
// request, before it answers as next does.
type duringModel struct {
	next   *memorytest.Model
	during func()
}

func (m *duringModel) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	if d := m.during; d != nil {
		m.during = nil
		d()
	}
	return m.next.Extract(ctx, req)
}

func pendingSet(k, v, category string) memory.Operation {
	return memory.Operation{Op: memory.OpSet, Key: k, Value: v, Category: category}
}

func TestForgetThreadForgetsExactlyItsFacts(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(
		memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon"), set("pet", "cat"), pendingSet("condition", "asthma", memory.CategoryHealth)}},
		memorytest.Answer{Operations: []memory.Operation{set("role", "nurse"), set("pet", "cat")}},
		memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}},
	)
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "pt"}); err != nil {
		t.Fatal(err)
	}
	for _, req := range []memory.ExtractRequest{
		extractReq(memorytest.Ana, "th-1", 0, 2, "I live in Lisbon with my cat; I have asthma"),
		extractReq(memorytest.Ana, "th-2", 0, 2, "I'm a nurse, and yes, still the cat"),
		extractReq(memorytest.Ana, "th-1", 2, 4, "I'm Ana"),
	} {
		if _, err := s.Extract(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	// By hand, the same value as th-1's: a manual fact is no thread's.
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "name", Value: "Ana"}); err != nil {
		t.Fatal(err)
	}

	got, err := s.ForgetThread(ctx, memorytest.Ana, "th-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"home_city": "Lisbon"}, values(got.Facts)); diff != "" {
		t.Errorf("forgotten facts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"condition": "asthma"}, values(got.Pending)); diff != "" {
		t.Errorf("discarded pending facts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"language": "pt", "name": "Ana", "pet": "cat", "role": "nurse"}, values(mustFacts(t, s, memorytest.Ana))); diff != "" {
		t.Errorf("facts kept (-want +got):\n%s", diff)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if len(rec.Pending) != 0 || !rec.Threads["th-1"].ForgottenAt.Equal(got.At) || rec.Threads["th-1"].TurnCount != 4 || !rec.Threads["th-2"].ForgottenAt.IsZero() {
		t.Errorf("record after the forget: pending %v, watermarks %+v; want none pending, th-1 fenced at %v with its count", rec.Pending, rec.Threads, got.At)
	}

	// Again: nothing left to forget, the fence moves on.
	again, err := s.ForgetThread(ctx, memorytest.Ana, "th-1")
	if err != nil || len(again.Facts)+len(again.Pending) != 0 || !again.At.After(got.At) {
		t.Errorf("second forget = %+v, %v; want nothing, a later fence", again, err)
	}
}

func TestForgetThreadFencesOlderExtractionsOfTheThread(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	// A thread never extracted gets its fence too.
	got, err := s.ForgetThread(ctx, memorytest.Ana, "th-1")
	if err != nil || len(got.Facts) != 0 {
		t.Fatalf("forget = %+v, %v", got, err)
	}

	// Sent at the forget: no model call, no write.
	before, _ := repo.Record(memorytest.Ana)
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I live in Lisbon")
	req.SentAt = got.At
	res, err := s.Extract(ctx, req)
	if err != nil || res.Outcome != memory.OutcomeThreadForgotten || model.Calls() != 0 {
		t.Fatalf("res = %+v, %v, model calls %d; want thread_forgotten without a call", res, err, model.Calls())
	}
	if after, _ := repo.Record(memorytest.Ana); after.Version != before.Version {
		t.Error("a fenced extraction wrote")
	}
	// Another thread's message of the same time is not fenced.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("role", "nurse")}})
	other := extractReq(memorytest.Ana, "th-2", 0, 2, "I'm a nurse")
	other.SentAt = got.At
	if res, err := s.Extract(ctx, other); err != nil || res.Outcome != memory.OutcomeChanged {
		t.Fatalf("th-2 at the forget: %+v, %v; want changed", res, err)
	}
	// A message of the thread sent after the forget writes.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Porto")}})
	later := extractReq(memorytest.Ana, "th-1", 0, 2, "I moved to Porto")
	later.SentAt = got.At.Add(time.Millisecond)
	if res, err := s.Extract(ctx, later); err != nil || res.Outcome != memory.OutcomeChanged {
		t.Fatalf("th-1 after the forget: %+v, %v; want changed", res, err)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if m := rec.Threads["th-1"]; m.TurnCount != 2 || !m.ForgottenAt.Equal(got.At) {
		t.Errorf("th-1 mark after a later extraction = %+v; want turn count 2, the fence kept", m)
	}
}

func TestForgetThreadWhileTheModelHoldsAMessage(t *testing.T) {
	ctx := context.Background()
	inner := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon")}})
	model := &duringModel{next: inner}
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "pt"}); err != nil {
		t.Fatal(err)
	}
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I live in Lisbon")
	req.SentAt = t0.Add(1500 * time.Millisecond) // after the upsert, before the forget
	var forgot memory.ThreadForgetting
	model.during = func() {
		var err error
		if forgot, err = s.ForgetThread(ctx, memorytest.Ana, "th-1"); err != nil {
			t.Error(err)
		}
	}
	res, err := s.Extract(ctx, req)
	if err != nil || res.Outcome != memory.OutcomeThreadForgotten || inner.Calls() != 1 {
		t.Fatalf("res = %+v, %v, model calls %d; want thread_forgotten after the call", res, err, inner.Calls())
	}
	if forgot.At.IsZero() || !req.SentAt.Before(forgot.At) {
		t.Fatalf("forget at %v, message sent at %v", forgot.At, req.SentAt)
	}
	if diff := cmp.Diff(map[string]string{"language": "pt"}, values(mustFacts(t, s, memorytest.Ana))); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if rec, _ := repo.Record(memorytest.Ana); rec.Threads["th-1"].TurnCount != 0 {
		t.Errorf("watermark %+v; want none set by the fenced extraction", rec.Threads["th-1"])
	}
}

func TestForgetFenceFoldsIntoClearedAtWhenItsMarkIsDropped(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(
		memorytest.Answer{Operations: []memory.Operation{set("a", "1")}},
		memorytest.Answer{Operations: []memory.Operation{set("b", "2")}},
	)
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true, MaxThreads: 2}, memory.WithModel(model))
	got, err := s.ForgetThread(ctx, memorytest.Ana, "th-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []string{"th-2", "th-3"} {
		if _, err := s.Extract(ctx, extractReq(memorytest.Ana, th, 0, 2, "x")); err != nil {
			t.Fatal(err)
		}
	}
	rec, _ := repo.Record(memorytest.Ana)
	if _, ok := rec.Threads["th-1"]; ok || !rec.ClearedAt.Equal(got.At) {
		t.Fatalf("watermarks %+v, cleared at %v; want th-1 dropped and its fence folded into ClearedAt %v", rec.Threads, rec.ClearedAt, got.At)
	}
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I live in Lisbon")
	req.SentAt = got.At
	if res, err := s.Extract(ctx, req); err != nil || res.Outcome != memory.OutcomeCleared {
		t.Errorf("th-1 sent at the forget after its mark was dropped: %+v, %v; want cleared", res, err)
	}
}

func TestForgetFenceExpires(t *testing.T) {
	ctx := context.Background()
	clock := t0
	s, repo := newStore(t, memory.Config{}, memory.WithClock(func() time.Time { return clock }))
	if _, err := s.ForgetThread(ctx, memorytest.Ana, "th-1"); err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(memory.DeletionFenceLifetime + time.Hour)
	if _, err := s.ForgetThread(ctx, memorytest.Ana, "th-2"); err != nil {
		t.Fatal(err)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if !rec.Threads["th-1"].ForgottenAt.IsZero() || !rec.Threads["th-2"].ForgottenAt.Equal(clock) {
		t.Errorf("watermarks %+v; want th-1's fence expired, th-2's kept", rec.Threads)
	}
}

func TestForgetThreadRefusesBadIDs(t *testing.T) {
	s, _ := newStore(t, memory.Config{})
	for _, c := range []struct {
		sc     memory.Scope
		thread string
	}{{memorytest.Ana, ""}, {memorytest.Ana, "th/1"}, {memory.Scope{TenantID: "acme"}, "th-1"}} {
		if _, err := s.ForgetThread(context.Background(), c.sc, c.thread); memory.ErrorCode(err) != memory.CodeInvalidID {
			t.Errorf("ForgetThread(%+v, %q) = %v; want %v", c.sc, c.thread, err, memory.CodeInvalidID)
		}
	}
}
