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
	model.Push(memorytest.Answer{Operations: []memory.Operation{{Op: memory.OpSet, Key: "home_city", Value: "Lisbon"}}})
	if _, err := s.Extract(ctx, extractReq("th-1", 0, 2, t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "pet"} {
		if _, err := s.UpsertFact(ctx, scope, k, "x"); err != nil {
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
	if diff := cmp.Diff([]string{"home_city=Lisbon", "name=x"}, keysOf(got.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if got.Facts[0].SourceThreadID != "th-1" || len(got.Forgotten) != 1 || got.Forgotten[0].Key != "pet" || got.ClearedAt.IsZero() ||
		len(got.Threads) != 1 || got.Threads[0].ThreadKey != "th-1" || got.Threads[0].TurnCount != 2 || !got.ErasedAt.IsZero() {
		t.Errorf("export %+v: want th-1's fact and watermark, pet forgotten, the clear's time, no erasure", got)
	}
	e, err := s.Erase(ctx, scope, memory.Retention{Backups: time.Hour, Queue: time.Hour, DeadLetterQueue: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.Export(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if e.RemovedFacts != 2 || len(after.Facts)+len(after.Forgotten)+len(after.Threads) != 0 || !after.ErasedAt.Equal(e.At) || !after.ClearedAt.IsZero() {
		t.Errorf("erasure %+v, then export %+v: want 2 facts removed and the fence alone", e, after)
	}
}
