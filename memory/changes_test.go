package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestUndoAThreadsChanges: after th-2 changed home_city and added pet,
// ThreadChanges lists both, with the value home_city had; UndoChange sets
// Lisbon back and removes pet; neither a redelivery of th-2's turns nor
// a message of newer turns sent before the undo brings them back, the
// restored value is th-1's again, and an undo of what the thread did not
// set does nothing.
func TestUndoAThreadsChanges(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(
		memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon")}},
		memorytest.Answer{Operations: []memory.Operation{set("home_city", "Porto"), set("pet", "cat")}},
		memorytest.Answer{Operations: []memory.Operation{set("home_city", "Porto"), set("pet", "cat")}},
	)
	s, _ := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	first := extractReq(memorytest.Ana, "th-1", 0, 2, "I live in Lisbon")
	first.SentAt = t0
	moving := extractReq(memorytest.Ana, "th-2", 0, 2, "I moved to Porto with my cat")
	moving.SentAt = t0
	extractAll(t, s, first)
	since := time.Now().AddDate(-1, 0, 0)
	if got, err := s.ThreadChanges(ctx, memorytest.Ana, "th-2", since); err != nil || len(got) != 0 {
		t.Fatalf("changes of th-2 before it ran = %+v, %v; want none", got, err)
	}
	extractAll(t, s, moving)
	got, err := s.ThreadChanges(ctx, memorytest.Ana, "th-2", since)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].At = time.Time{}
	}
	want := []memory.Change{{Key: "home_city", Value: "Porto", Previous: "Lisbon", HadPrevious: true}, {Key: "pet", Value: "cat"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes of th-2 (-want +got):\n%s", diff)
	}

	for key, want := range map[string]memory.Undo{
		"home city": {Key: "home_city", Restored: "Lisbon"},
		"pet":       {Key: "pet", Removed: true},
	} {
		if got, err := s.UndoChange(ctx, memorytest.Ana, "th-2", key); err != nil || got != want {
			t.Errorf("UndoChange(%s) = %+v, %v; want %+v", key, got, err, want)
		}
	}
	wantFacts := map[string]string{"home_city": "Lisbon"}
	check := func(when string) {
		t.Helper()
		facts, err := s.GetFacts(ctx, memorytest.Ana)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, f := range facts {
			m[f.Key] = f.Value
		}
		if diff := cmp.Diff(wantFacts, m); diff != "" {
			t.Errorf("facts %s (-want +got):\n%s", when, diff)
		}
	}
	check("after the undo")
	if res, err := s.Extract(ctx, moving); err != nil || res.Outcome != memory.OutcomeDuplicate {
		t.Errorf("redelivery of th-2's turns = %+v, %v; want a duplicate", res, err)
	}
	check("after a redelivery")
	inFlight := extractReq(memorytest.Ana, "th-2", 2, 4, "Porto, and the cat")
	inFlight.SentAt = t0
	if _, err := s.Extract(ctx, inFlight); err != nil {
		t.Fatal(err)
	}
	check("after a message of newer turns sent before the undo")
	facts, err := s.GetFacts(ctx, memorytest.Ana)
	if err != nil || len(facts) != 1 || facts[0].Origin != memory.OriginConversation || facts[0].SourceThreadID != "th-1" {
		t.Errorf("restored facts %+v, %v; want home_city as th-1 taught it", facts, err)
	}
	if got, err := s.UndoChange(ctx, memorytest.Ana, "th-3", "home_city"); err != nil || got != (memory.Undo{Key: "home_city"}) {
		t.Errorf("UndoChange by th-3 of a fact th-1 set = %+v, %v; want nothing undone", got, err)
	}
	check("after an undo of nothing")
}
