package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestSaidAtIsWhenTheUserSaidIt: an extracted fact, stored or pending,
// carries the request's SentAt as SaidAt; a pending fact kept later keeps
// it, its UpdatedAt the time of the keep; a fact set by hand has none; a
// request without SentAt, or one stamped after the store's clock, says
// the time of the extraction.
func TestSaidAtIsWhenTheUserSaidIt(t *testing.T) {
	ctx := context.Background()
	said := time.Date(2026, 12, 3, 19, 31, 0, 0, time.UTC)
	now := said.Add(30 * time.Second)
	clock := func() time.Time { return now }
	model := memorytest.NewModel(
		memorytest.Answer{Operations: []memory.Operation{
			{Op: memory.OpSet, Key: "role", Value: "nurse", Evidence: "I'm a nurse"},
			{Op: memory.OpSet, Key: "condition", Value: "diabetes", Evidence: "I have diabetes", Category: "health"},
		}},
		memorytest.Answer{Operations: []memory.Operation{{Op: memory.OpSet, Key: "city", Value: "Porto", Evidence: "I live in Porto"}}},
		memorytest.Answer{Operations: []memory.Operation{{Op: memory.OpSet, Key: "pet", Value: "cat", Evidence: "my cat"}}},
	)
	s, err := memory.New(memorytest.NewRepo(), memory.Config{}, memory.WithClock(clock), memory.WithModel(model))
	if err != nil {
		t.Fatal(err)
	}
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I'm a nurse and I have diabetes", "Noted.")
	req.SentAt = said
	if _, err := s.Extract(ctx, req); err != nil {
		t.Fatal(err)
	}
	m, err := s.GetFactsAndPending(ctx, memorytest.Ana)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Facts) != 1 || !m.Facts[0].SaidAt.Equal(said) || !m.Facts[0].UpdatedAt.Equal(now) {
		t.Fatalf("facts %+v, want role said at %v, updated at %v", m.Facts, said, now)
	}
	if len(m.Pending) != 1 || !m.Pending[0].SaidAt.Equal(said) {
		t.Fatalf("pending %+v, want condition said at %v", m.Pending, said)
	}

	now = said.Add(4 * time.Minute)
	kept, err := s.KeepPending(ctx, memorytest.Ana, "condition")
	if err != nil {
		t.Fatal(err)
	}
	if !kept.SaidAt.Equal(said) || !kept.UpdatedAt.Equal(now) {
		t.Errorf("kept: said %v, updated %v; want said %v, kept at %v", kept.SaidAt, kept.UpdatedAt, said, now)
	}

	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "name", Value: "Ana"}); err != nil {
		t.Fatal(err)
	}
	byHand := mustFacts(t, s, memorytest.Ana)[indexOf(mustFacts(t, s, memorytest.Ana), "name")]
	if !byHand.SaidAt.IsZero() {
		t.Errorf("a fact set by hand has SaidAt %v, want none", byHand.SaidAt)
	}

	for i, sentAt := range []time.Time{{}, now.Add(time.Hour)} {
		req := extractReq(memorytest.Ana, "th-"+string(rune('2'+i)), 0, 2, "I live in Porto with my cat", "Nice.")
		req.SentAt = sentAt
		res, err := s.Extract(ctx, req)
		if err != nil || res.Sets != 1 {
			t.Fatalf("extraction %d: %+v, %v", i, res, err)
		}
		for _, f := range res.Facts {
			if (f.Key == "city" || f.Key == "pet") && f.UpdatedAt.Equal(now) && !f.SaidAt.Equal(now) {
				t.Errorf("request sent at %v: %s said at %v, want the extraction's time %v", sentAt, f.Key, f.SaidAt, now)
			}
		}
	}
}
