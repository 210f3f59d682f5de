package memory_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// historyStore returns a store whose model answers a home city three
// times from three threads, and the store's repository.
func historyStore(t *testing.T) (*memory.Store, *memorytest.Repo) {
	t.Helper()
	model := memorytest.NewModel(
		memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon"), set("pet", "cat")}},
		memorytest.Answer{Operations: []memory.Operation{{Op: memory.OpSet, Key: "home_city", Value: "Porto", Evidence: "I moved to Porto"}}},
		memorytest.Answer{Operations: []memory.Operation{set("home_city", "Braga")}},
		memorytest.Answer{Operations: []memory.Operation{set("home_city", "Faro")}},
	)
	return newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
}

func extractAll(t *testing.T, s *memory.Store, reqs ...memory.ExtractRequest) {
	t.Helper()
	for _, req := range reqs {
		if _, err := s.Extract(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHistoryKeepsTheLastPreviousValues(t *testing.T) {
	s, _ := historyStore(t)
	moving := extractReq(memorytest.Ana, "th-2", 0, 2, "I moved to Porto")
	moving.ThreadTitle = "Moving house"
	extractAll(t, s, extractReq(memorytest.Ana, "th-1", 0, 2, "Lisbon, with my cat"))
	before, err := s.GetFacts(context.Background(), memorytest.Ana)
	if err != nil || len(before) != 2 {
		t.Fatalf("facts after th-1 = %+v, %v", before, err)
	}
	lisbon := before[0]
	extractAll(t, s, moving)
	ex, err := s.Export(context.Background(), memorytest.Ana)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.History) != 1 || ex.History[0].Key != "home_city" || len(ex.History[0].Previous) != 1 {
		t.Fatalf("history %+v, want one previous value of home_city", ex.History)
	}
	p := ex.History[0].Previous[0]
	var city memory.Fact
	for _, f := range ex.Facts {
		if f.Key == "home_city" {
			city = f
		}
	}
	want := memory.PreviousValue{Value: "Lisbon", ReplacedAt: city.UpdatedAt, Origin: memory.OriginConversation,
		ThreadID: "th-2", ThreadTitle: "Moving house", Evidence: "I moved to Porto", ValueThreadID: "th-1",
		ValueOrigin: memory.OriginConversation, ValueUpdatedAt: lisbon.UpdatedAt, ValueSaidAt: lisbon.SaidAt}
	if diff := cmp.Diff(want, p); diff != "" || city.Value != "Porto" {
		t.Errorf("previous value of home_city (-want +got):\n%s (current %q)", diff, city.Value)
	}
	// Two more changes: the oldest value goes, the newest comes first.
	extractAll(t, s, extractReq(memorytest.Ana, "th-3", 0, 2, "Braga now"), extractReq(memorytest.Ana, "th-4", 0, 2, "Faro now"))
	ex, _ = s.Export(context.Background(), memorytest.Ana)
	var values []string
	for _, p := range ex.History[0].Previous {
		values = append(values, p.Value)
	}
	if diff := cmp.Diff([]string{"Braga", "Porto"}, values); diff != "" {
		t.Errorf("previous values after four settings (-want +got):\n%s", diff)
	}
}

// TestForgetMeansForgetTheHistory: removing a fact, clearing, erasing and
// forgetting a thread leave no previous value of it, in the record nor in
// the export.
func TestForgetMeansForgetTheHistory(t *testing.T) {
	ctx := context.Background()
	for name, forget := range map[string]func(*memory.Store) error{
		"remove": func(s *memory.Store) error { return s.RemoveFact(ctx, memorytest.Ana, "home_city") },
		"clear":  func(s *memory.Store) error { return s.Clear(ctx, memorytest.Ana) },
		"erase": func(s *memory.Store) error {
			_, err := s.DeleteByUser(ctx, memorytest.Ana, memory.Retention{})
			return err
		},
		"forget the replacing thread": func(s *memory.Store) error {
			_, err := s.ForgetThread(ctx, memorytest.Ana, "th-2")
			return err
		},
		"forget the first thread": func(s *memory.Store) error {
			_, err := s.ForgetThread(ctx, memorytest.Ana, "th-1")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, repo := historyStore(t)
			extractAll(t, s, extractReq(memorytest.Ana, "th-1", 0, 2, "Lisbon"), extractReq(memorytest.Ana, "th-2", 0, 2, "I moved to Porto"))
			if rec, _ := repo.Record(memorytest.Ana); len(rec.History["home_city"]) != 1 {
				t.Fatalf("history before %+v, want one previous value", rec.History)
			}
			if err := forget(s); err != nil {
				t.Fatal(err)
			}
			rec, _ := repo.Record(memorytest.Ana)
			if name == "forget the first thread" {
				// Porto stays (th-2 taught it); Lisbon, th-1's, goes.
				if len(rec.Facts) != 1 || len(rec.History) != 0 {
					t.Errorf("forgetting th-1 left facts %+v and history %+v, want Porto alone, no history", rec.Facts, rec.History)
				}
			}
			ex, err := s.Export(ctx, memorytest.Ana)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.History) != 0 || len(ex.History) != 0 {
				t.Errorf("after %s: history %+v in the record, %+v in the export, want none", name, rec.History, ex.History)
			}
		})
	}
}

// TestPutStartsAfresh: a value set by hand (the page's Restore) replaces
// the fact in one write and its history goes with the value it replaced.
func TestPutStartsAfresh(t *testing.T) {
	s, repo := historyStore(t)
	extractAll(t, s, extractReq(memorytest.Ana, "th-1", 0, 2, "Lisbon"), extractReq(memorytest.Ana, "th-2", 0, 2, "I moved to Porto"))
	if _, err := s.Put(context.Background(), memorytest.Ana, memory.FactInput{Key: "home_city", Value: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	if rec, _ := repo.Record(memorytest.Ana); len(rec.History) != 0 || repo.Calls("SetFact") != 1 {
		t.Errorf("after a Put: history %+v, %d SetFact calls; want none and one", rec.History, repo.Calls("SetFact"))
	}
}
