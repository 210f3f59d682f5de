package dynamorepo_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestStoreExportOnDynamoDB runs the export on the table after an
// extraction, an edit by hand, a removal, a clear and an erasure: it
// reads, in one GetItem, every part of the record the export names as
// DynamoDB stores it, then the fence alone.
func TestStoreExportOnDynamoDB(t *testing.T) {
	f := newFixture(t)
	model := memorytest.NewModel()
	s := newStore(t, f, memory.Config{}, memory.WithModel(model), memory.WithClock(memorytest.StepClock(t0)))
	if err := s.Clear(ctx, scope); err != nil {
		t.Fatal(err)
	}
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon")}})
	if _, err := s.Extract(ctx, extractReq("th-1", 0, 2, t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	// A pending fact of a special category and a fact with an end date,
	// each with the user's words.
	said := "I have diabetes, and I'm in Paris until Friday"
	model.Push(memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "health_condition", Value: "diabetes", Evidence: "I have diabetes", Category: "health"},
		{Op: memory.OpSet, Key: "current_city", Value: "Paris", Evidence: "I'm in Paris until Friday", ValidUntil: "2026-12-04"},
	}})
	req := extractReq("th-2", 0, 2, t0.Add(time.Minute))
	req.Turns = []memory.Turn{{Role: memory.RoleUser, Text: said}}
	if res, err := s.Extract(ctx, req); err != nil || res.Pending != 1 || res.Sets != 1 {
		t.Fatalf("Extract of a health fact and a temporary one = %+v, %v; want 1 pending and 1 set", res, err)
	}
	for _, k := range []string{"name", "pet"} {
		if _, err := s.Put(ctx, scope, memory.FactInput{Key: k, Value: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveFact(ctx, scope, "pet"); err != nil {
		t.Fatal(err)
	}
	f.count.take()
	got, err := s.Export(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count.take(); n != "GetItem:1" {
		t.Errorf("the export made %s, want GetItem:1", n)
	}
	if diff := cmp.Diff([]string{"current_city=Paris", "home_city=Lisbon", "name=x"}, keysOf(got.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"health_condition=diabetes"}, keysOf(got.Pending)); diff != "" {
		t.Errorf("pending facts (-want +got):\n%s", diff)
	}
	if city := got.Facts[0]; city.Evidence != "I'm in Paris until Friday" || city.ValidUntil.Format(time.DateOnly) != "2026-12-04" {
		t.Errorf("exported temporary fact %+v: want its evidence and its end date", city)
	}
	if got.Facts[1].Evidence != userSaid || got.Facts[2].Evidence != "" || len(got.Pending) == 1 && (got.Pending[0].Evidence != "I have diabetes" || got.Pending[0].Category != "health") {
		t.Errorf("exported evidence and category: %+v, pending %+v", got.Facts, got.Pending)
	}
	if got.Facts[1].SourceThreadID != "th-1" || len(got.Forgotten) != 1 || got.Forgotten[0].Key != "pet" || got.ClearedAt.IsZero() ||
		len(got.Threads) != 2 || got.Threads[0].ThreadKey != "th-1" || got.Threads[0].TurnCount != 2 || !got.ErasedAt.IsZero() {
		t.Errorf("export %+v: want th-1's fact, th-1's and th-2's watermarks, pet forgotten, the clear's time, no erasure", got)
	}
	e, err := s.DeleteByUser(ctx, scope, memory.Retention{Backups: time.Hour, Queue: time.Hour, DeadLetterQueue: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.Export(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if e.RemovedFacts != 3 || len(after.Facts)+len(after.Pending)+len(after.Forgotten)+len(after.Threads) != 0 || !after.ErasedAt.Equal(e.At) || !after.ClearedAt.IsZero() {
		t.Errorf("erasure %+v, then export %+v: want 3 facts removed and the fence alone", e, after)
	}
}
