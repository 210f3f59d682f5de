package repotest

import (
	"context"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// testHistoryRoundTrip: a fact's history (Record.History) is stored by
// Save with every field, only for a fact held; SetFact of the key drops
// it and keeps the others'; DeleteFact and ClearFacts remove it; Erase
// leaves none.
func testHistoryRoundTrip(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	hist := map[string][]memory.PreviousValue{
		"city": {
			{Value: "Porto", ReplacedAt: t2, Origin: memory.OriginManual},
			{Value: "Lisbon", ReplacedAt: t1, Origin: memory.OriginConversation, ThreadID: "th-2", ThreadTitle: "Moving house",
				Evidence: "I moved to Porto", ValueThreadID: "th-1"},
		},
		"pet":  {{Value: "dog", ReplacedAt: t1, Origin: memory.OriginRememberTool, ThreadID: "th-3"}},
		"role": {{Value: "teacher", ReplacedAt: t1, Origin: memory.OriginConversation, ThreadID: "th-1"}},
	}
	facts := []memory.Fact{fact("city", "Lisbon", t2), fact("pet", "cat", t1), fact("role", "nurse", t1)}
	v := save(t, r, ana, memory.Record{Facts: facts, Tombstones: map[string]time.Time{},
		History: map[string][]memory.PreviousValue{"city": hist["city"], "pet": hist["pet"], "role": hist["role"], "gone": hist["pet"]}})
	same(t, "after Save", memory.Record{Version: v, Facts: facts, History: hist}, get(t, r, ana))

	if ok, _ := setFact(t, r, ana, fact("pet", "fish", t2), 10); !ok {
		t.Fatal("SetFact did not apply")
	}
	if got := get(t, r, ana).History; len(got["pet"]) != 0 || len(got["city"]) != 2 || len(got["role"]) != 1 {
		t.Errorf("history after SetFact of pet = %+v, want pet's dropped and the others kept", got)
	}
	if ok, _ := deleteFact(t, r, ana, "city", t2, 10); !ok {
		t.Fatal("DeleteFact did not apply")
	}
	if got := get(t, r, ana).History; len(got["city"]) != 0 || len(got["role"]) != 1 {
		t.Errorf("history after DeleteFact of city = %+v, want role's alone", got)
	}
	if err := r.ClearFacts(ctx, ana, t2); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, ana).History; len(got) != 0 {
		t.Errorf("history after ClearFacts = %+v, want none", got)
	}
	save(t, r, bob, memory.Record{Facts: facts, Tombstones: map[string]time.Time{}, History: hist})
	if _, err := r.Erase(ctx, bob, t2); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, bob).History; len(got) != 0 {
		t.Errorf("history after Erase = %+v, want none", got)
	}
}
