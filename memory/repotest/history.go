package repotest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// testHistoryRoundTrip: a fact's history (Record.History) is stored by
// Save with every field, the replaced value's provenance included, only
// for a fact held, and so is a fact's Replaced; SetFact of the key drops
// it and keeps the others'; DeleteFact and ClearFacts remove it; Erase
// leaves none.
func testHistoryRoundTrip(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	hist := map[string][]memory.PreviousValue{
		"city": {
			{Value: "Porto", ReplacedAt: t2, Origin: memory.OriginManual},
			{Value: "Lisbon", ReplacedAt: t1, Origin: memory.OriginConversation, ThreadID: "th-2", ThreadTitle: "Moving house",
				Evidence: "I moved to Porto", ValueThreadID: "th-1", ValueOrigin: memory.OriginConversation,
				ValueThreadTitle: "Hello", ValueEvidence: "I live in Lisbon", ValueUpdatedAt: t0, ValueSaidAt: t0.Add(-time.Second),
				ValueValidUntil: time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), ValueCategory: "health", ValueReplaced: true},
		},
		"pet":  {{Value: "dog", ReplacedAt: t1, Origin: memory.OriginRememberTool, ThreadID: "th-3"}},
		"role": {{Value: "teacher", ReplacedAt: t1, Origin: memory.OriginConversation, ThreadID: "th-1"}},
	}
	facts := []memory.Fact{fact("city", "Lisbon", t2), fact("pet", "cat", t1), fact("role", "nurse", t1)}
	facts[0].Replaced = true
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

// scriptModel answers the calls in turn with its answers.
type scriptModel struct{ answers [][]memory.Operation }

func (m *scriptModel) Extract(context.Context, memory.ModelRequest) (memory.ModelAnswer, error) {
	ops := m.answers[0]
	m.answers = m.answers[1:]
	return memory.ModelAnswer{Operations: ops}, nil
}

// testStoreHistory: the store over the repository keeps a fact's previous
// values with their provenance, its Undo sets the fact back as it was
// (forgetting the thread that taught it then removes it, history
// included), and removing the fact, clearing, erasing or forgetting a
// thread that set one of its values leave nothing of its values in the
// record.
func testStoreHistory(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	now := t0
	for name, forget := range map[string]func(s *memory.Store, sc memory.Scope) error{
		"undo then forget the restored value thread": func(s *memory.Store, sc memory.Scope) error {
			if u, err := s.UndoChange(ctx, sc, "th-3", "home_city"); err != nil || u.Restored != "Porto" {
				return fmt.Errorf("undo = %+v, %v; want Porto restored", u, err)
			}
			f, err := s.GetFacts(ctx, sc)
			if err != nil || len(f) != 1 || f[0].SourceThreadID != "th-2" || f[0].Evidence != "I moved to Porto" || f[0].SourceThreadTitle != "Moving" {
				return fmt.Errorf("restored %+v, %v; want th-2's fact as it was", f, err)
			}
			_, err = s.ForgetThread(ctx, sc, "th-2")
			return err
		},
		"remove": func(s *memory.Store, sc memory.Scope) error { return s.RemoveFact(ctx, sc, "home_city") },
		"clear":  func(s *memory.Store, sc memory.Scope) error { return s.Clear(ctx, sc) },
		"erase": func(s *memory.Store, sc memory.Scope) error {
			_, err := s.DeleteByUser(ctx, sc, memory.Retention{})
			return err
		},
		"forget thread": func(s *memory.Store, sc memory.Scope) error { _, err := s.ForgetThread(ctx, sc, "th-1"); return err },
	} {
		sc := memory.Scope{TenantID: "acme", UserID: strings.ReplaceAll(name, " ", "-")}
		model := &scriptModel{}
		s, err := memory.New(r, memory.Config{}, memory.WithModel(model), memory.WithClock(func() time.Time { now = now.Add(time.Second); return now }))
		if err != nil {
			t.Fatal(err)
		}
		for i, said := range []string{"I live in Lisbon", "I moved to Porto", "Now in Braga"} {
			v := strings.Fields(said)[len(strings.Fields(said))-1]
			model.answers = append(model.answers, []memory.Operation{{Op: memory.OpSet, Key: "home_city", Value: v, Evidence: said}})
			th := fmt.Sprintf("th-%d", i+1)
			req := memory.ExtractRequest{Scope: sc, ThreadID: th, ThreadTitle: map[int]string{1: "Moving"}[i], TurnCount: 2, SentAt: now,
				Turns: []memory.Turn{{Role: memory.RoleUser, Text: said + "."}, {Role: memory.RoleAssistant, Text: "Noted."}}}
			if _, err := s.Extract(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		if h := get(t, r, sc).History["home_city"]; len(h) != memory.MaxHistory || h[0].ValueOrigin != memory.OriginConversation {
			t.Fatalf("%s: history %+v, want %d previous values with their provenance", name, h, memory.MaxHistory)
		}
		if err := forget(s, sc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rec := get(t, r, sc)
		stored := fmt.Sprintf("%+v", rec)
		for _, v := range []string{"Lisbon", "Porto", "Braga"} {
			kept := name == "forget thread" && v == "Braga" // th-3's value, th-1's forgotten
			if !kept && strings.Contains(stored, v) {
				t.Errorf("%s: the record still holds %q: %s", name, v, stored)
			}
		}
		if len(rec.History) != 0 {
			t.Errorf("%s: history left %+v", name, rec.History)
		}
	}
}
