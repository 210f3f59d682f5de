package memory_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// removedAt returns the tombstone time of key for sc, failing t when there
// is none.
func removedAt(t *testing.T, repo *memorytest.Repo, sc memory.Scope, key string) time.Time {
	t.Helper()
	rec, _ := repo.Record(sc)
	at, ok := rec.Tombstones[key]
	if !ok {
		t.Fatalf("no tombstone of %s in %v", key, rec.Tombstones)
	}
	return at
}

func TestRemovedKeyIsNotSetByAnOlderExtraction(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "home_city", Value: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveFact(ctx, memorytest.Ana, "Home City"); err != nil {
		t.Fatal(err)
	}
	removed := removedAt(t, repo, memorytest.Ana, "home_city")

	// Sent at the very time of the removal: the removal wins for its key,
	// the other keys of the message apply.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon"), set("language", "pt")}})
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I live in Lisbon and speak Portuguese")
	req.SentAt = removed
	res, err := s.Extract(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != memory.OutcomeChanged || res.Sets != 1 || res.Forgotten != 1 {
		t.Errorf("outcome %q, sets %d, forgotten %d; want changed, 1, 1", res.Outcome, res.Sets, res.Forgotten)
	}
	if diff := cmp.Diff(map[string]string{"language": "pt"}, values(mustFacts(t, s, memorytest.Ana))); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}

	// A message sent after the removal states it again: forgetting is not
	// a ban.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Porto")}})
	later := extractReq(memorytest.Ana, "th-2", 0, 2, "I moved to Porto")
	later.SentAt = removed.Add(time.Millisecond)
	if res, err := s.Extract(ctx, later); err != nil || res.Outcome != memory.OutcomeChanged || res.Forgotten != 0 {
		t.Fatalf("later message: %+v, %v", res, err)
	}
	if got := values(mustFacts(t, s, memorytest.Ana))["home_city"]; got != "Porto" {
		t.Errorf("home_city = %q, want Porto", got)
	}
}

func TestRemovalBetweenReadAndWriteOfAnExtraction(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon"), set("language", "pt")}})
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "home_city", Value: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I live in Lisbon")
	req.SentAt = t0.Add(1500 * time.Millisecond) // after the upsert, before the removal
	repo.BeforeSave = func() {
		repo.BeforeSave = nil
		if err := s.RemoveFact(ctx, memorytest.Ana, "home_city"); err != nil {
			t.Error(err)
		}
	}
	res, err := s.Extract(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"language": "pt"}, values(res.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if model.Calls() != 1 || res.Forgotten != 1 {
		t.Errorf("model calls %d, forgotten %d; want 1 and 1", model.Calls(), res.Forgotten)
	}
	if rec, _ := repo.Record(memorytest.Ana); rec.Threads["th-1"].TurnCount != 2 {
		t.Errorf("watermark %+v, want 2", rec.Threads["th-1"])
	}
}

func TestManualUpsertClearsTheTombstone(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "pt"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"home_city", "pet"} {
		if err := s.RemoveFact(ctx, memorytest.Ana, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "home_city", Value: "Porto"}); err != nil {
		t.Fatal(err)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if diff := cmp.Diff([]string{"pet"}, slices.Sorted(maps.Keys(rec.Tombstones))); diff != "" {
		t.Errorf("tombstones (-want +got):\n%s", diff)
	}
	if got, want := repo.Calls("Save"), 0; got != want {
		t.Errorf("Save calls = %d, want %d: every write here is one conditional update", got, want)
	}
}

func TestClearFencesOlderExtractions(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "home_city", Value: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Clear(ctx, memorytest.Ana); err != nil {
		t.Fatal(err)
	}
	cleared, _ := repo.Record(memorytest.Ana)
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "pt"}); err != nil { // set by hand after the clear
		t.Fatal(err)
	}

	// Sent at the clear: no model call, no write, the facts set since stay.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon")}})
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I live in Lisbon")
	req.SentAt = cleared.ClearedAt
	before, _ := repo.Record(memorytest.Ana)
	res, err := s.Extract(ctx, req)
	if err != nil || res.Outcome != memory.OutcomeCleared || model.Calls() != 0 {
		t.Fatalf("res = %+v, %v, model calls %d; want cleared without a call", res, err, model.Calls())
	}
	if diff := cmp.Diff(map[string]string{"language": "pt"}, values(res.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if after, _ := repo.Record(memorytest.Ana); after.Version != before.Version {
		t.Error("a fenced extraction wrote")
	}

	// The clear lands between the read and the write: nothing is written.
	if _, err := s.Put(ctx, memorytest.Bob, memory.FactInput{Key: "x", Value: "y"}); err != nil {
		t.Fatal(err)
	}
	bobReq := extractReq(memorytest.Bob, "th-9", 0, 2, "I'm Bob")
	rec, _ := repo.Record(memorytest.Bob)
	bobReq.SentAt = rec.Facts[0].UpdatedAt // after bob's write, before the clear below
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("name", "Bob")}})
	repo.BeforeSave = func() {
		repo.BeforeSave = nil
		if err := s.Clear(ctx, memorytest.Bob); err != nil {
			t.Error(err)
		}
	}
	res, err = s.Extract(ctx, bobReq)
	if err != nil || res.Outcome != memory.OutcomeCleared || len(res.Facts) != 0 {
		t.Fatalf("res = %+v, %v; want cleared, no facts", res, err)
	}
	if rec, _ := repo.Record(memorytest.Bob); len(rec.Facts) != 0 || len(rec.Threads) != 0 {
		t.Errorf("after the clear: %+v, want no fact and no watermark", rec)
	}

	// A message sent after the clear writes.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("name", "Bob")}})
	later := extractReq(memorytest.Bob, "th-10", 0, 2, "I'm Bob")
	later.SentAt = t0.Add(time.Hour)
	if res, err := s.Extract(ctx, later); err != nil || res.Outcome != memory.OutcomeChanged {
		t.Errorf("after the clear, a new message: %+v, %v", res, err)
	}
}

func TestTombstonesAreBoundedAndFoldIntoClearedAt(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true, MaxTombstones: 2}, memory.WithModel(model))
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "pt"}); err != nil {
		t.Fatal(err)
	}
	var at []time.Time
	for _, k := range []string{"a", "b"} {
		if err := s.RemoveFact(ctx, memorytest.Ana, k); err != nil {
			t.Fatal(err)
		}
		at = append(at, removedAt(t, repo, memorytest.Ana, k))
	}
	if repo.Calls("Save") != 0 {
		t.Fatalf("Save calls = %d under the bound, want 0", repo.Calls("Save"))
	}
	if err := s.RemoveFact(ctx, memorytest.Ana, "c"); err != nil {
		t.Fatal(err)
	}
	if repo.Calls("Save") != 1 {
		t.Errorf("Save calls = %d at the bound, want 1", repo.Calls("Save"))
	}
	rec, _ := repo.Record(memorytest.Ana)
	if diff := cmp.Diff([]string{"b", "c"}, slices.Sorted(maps.Keys(rec.Tombstones))); diff != "" {
		t.Errorf("tombstones (-want +got):\n%s", diff)
	}
	if !rec.ClearedAt.Equal(at[0]) {
		t.Errorf("clearedAt = %v, want the folded removal of a at %v", rec.ClearedAt, at[0])
	}

	// Sent after a's removal, before b's: a may be set again, b may not.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("a", "1"), set("b", "2")}})
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "a and b")
	req.SentAt = at[0].Add(time.Millisecond)
	res, err := s.Extract(ctx, req)
	if err != nil || res.Sets != 1 || res.Forgotten != 1 {
		t.Fatalf("res = %+v, %v; want 1 set and 1 forgotten", res, err)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "language": "pt"}, values(res.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	// Sent at a's removal: the floor fences every key.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("z", "1")}})
	old := extractReq(memorytest.Ana, "th-2", 0, 2, "z")
	old.SentAt = at[0]
	if res, err := s.Extract(ctx, old); err != nil || res.Outcome != memory.OutcomeCleared {
		t.Errorf("older than the floor: %+v, %v; want cleared", res, err)
	}
}

func TestDeletionFencesExpire(t *testing.T) {
	ctx := context.Background()
	now := t0
	clock := func() time.Time { return now }
	model := memorytest.NewModel()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model), memory.WithClock(clock))
	if err := s.Clear(ctx, memorytest.Ana); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if err := s.RemoveFact(ctx, memorytest.Ana, "pet"); err != nil {
		t.Fatal(err)
	}
	// One day within the lifetime: a whole-record write keeps both.
	now = t0.Add(memory.DeletionFenceLifetime)
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("a", "1")}})
	if _, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "a")); err != nil {
		t.Fatal(err)
	}
	if rec, _ := repo.Record(memorytest.Ana); rec.ClearedAt.IsZero() || len(rec.Tombstones) != 1 {
		t.Errorf("within the lifetime: clearedAt %v, tombstones %v; want both kept", rec.ClearedAt, rec.Tombstones)
	}
	// Past the lifetime of both: the next whole-record write drops them.
	now = t0.Add(memory.DeletionFenceLifetime + 2*time.Minute)
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("b", "1")}})
	req := extractReq(memorytest.Ana, "th-2", 0, 2, "b")
	req.SentAt = now
	if _, err := s.Extract(ctx, req); err != nil {
		t.Fatal(err)
	}
	if rec, _ := repo.Record(memorytest.Ana); !rec.ClearedAt.IsZero() || len(rec.Tombstones) != 0 {
		t.Errorf("past the lifetime: clearedAt %v, tombstones %v; want none", rec.ClearedAt, rec.Tombstones)
	}
}

func TestRemoveFactAndClear(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	for _, k := range []string{"language", "home_city"} {
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: k, Value: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveFact(ctx, memorytest.Ana, "Home City"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"language"}, keys(mustFacts(t, s, memorytest.Ana))); diff != "" {
		t.Errorf("after remove (-want +got):\n%s", diff)
	}
	if err := s.RemoveFact(ctx, memorytest.Ana, "not_there"); err != nil {
		t.Fatal(err)
	}
	// An absent key gets a tombstone too: an extraction in flight may be
	// about to set it.
	rec, _ := repo.Record(memorytest.Ana)
	if diff := cmp.Diff([]string{"home_city", "not_there"}, slices.Sorted(maps.Keys(rec.Tombstones))); diff != "" {
		t.Errorf("tombstones (-want +got):\n%s", diff)
	}
	if err := s.RemoveFact(ctx, memorytest.Ana, " "); memory.ErrorCode(err) != memory.CodeEmptyFact {
		t.Errorf("RemoveFact(empty) = %v", err)
	}
	if err := s.Clear(ctx, memorytest.Ana); err != nil {
		t.Fatal(err)
	}
	if got := mustFacts(t, s, memorytest.Ana); len(got) != 0 {
		t.Errorf("after clear: %v", got)
	}
	if _, ok := repo.Record(memorytest.Ana); !ok {
		t.Error("clear removed the record; only erasure does")
	}
	if rec, _ := repo.Record(memorytest.Ana); len(rec.Tombstones) != 0 || rec.ClearedAt.IsZero() {
		t.Errorf("after clear: tombstones %v, clearedAt %v; want none and a time", rec.Tombstones, rec.ClearedAt)
	}
	if err := s.Clear(ctx, memorytest.Bob); err != nil {
		t.Errorf("Clear of a user without a record: %v", err)
	}
	if rec, ok := repo.Record(memorytest.Bob); !ok || len(rec.Facts) != 0 || rec.ClearedAt.IsZero() {
		t.Errorf("clear of a user without a record left %+v, %v; want a record holding only clearedAt", rec, ok)
	}
}

func TestDeleteByUser(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: k, Value: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, memorytest.Bob, memory.FactInput{Key: "a", Value: "x"}); err != nil {
		t.Fatal(err)
	}
	e, err := s.DeleteByUser(ctx, memorytest.Ana, memory.Retention{})
	if err != nil || e.RemovedFacts != 3 {
		t.Fatalf("DeleteByUser = %+v, %v; want 3 removed", e, err)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if len(rec.Facts) != 0 || len(rec.Threads) != 0 || rec.ErasedAt.IsZero() {
		t.Errorf("after erasure the record is %+v, want only a fence", rec)
	}
	if len(mustFacts(t, s, memorytest.Bob)) != 1 {
		t.Error("erasing ana touched bob")
	}
	if e, err := s.DeleteByUser(ctx, memorytest.Ana, memory.Retention{}); err != nil || e.RemovedFacts != 0 {
		t.Errorf("second erasure = %+v, %v; want 0 removed", e, err)
	}
}
