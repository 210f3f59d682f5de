package dynamorepo_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// newStore returns a memory.Store over f's repository.
func newStore(t testing.TB, f *fixture, cfg memory.Config, opts ...memory.Option) *memory.Store {
	t.Helper()
	s, err := memory.New(f.repo, cfg, opts...)
	if err != nil {
		t.Fatalf("memory.New: %v", err)
	}
	return s
}

func keysOf(facts []memory.Fact) []string {
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = f.Key + "=" + f.Value
	}
	return out
}

// userSaid is the user turn of every extractReq.
const userSaid = "I'm Ana from Lisbon"

func extractReq(thread string, prev, count int, sentAt time.Time) memory.ExtractRequest {
	return memory.ExtractRequest{
		Scope: scope, ThreadID: thread, PreviousTurnCount: prev, TurnCount: count, SentAt: sentAt,
		Turns: []memory.Turn{{Role: memory.RoleUser, Text: userSaid}, {Role: memory.RoleAssistant, Text: "Olá Ana!"}},
	}
}

// set is a scripted SET whose evidence quotes the user turn of extractReq,
// so that the core's evidence check lets it through: the tests of this
// package are about storage, and the evidence is stored with the fact.
func set(key, value string) memory.Operation {
	return memory.Operation{Op: memory.OpSet, Key: key, Value: value, Evidence: userSaid}
}

// The requests each operation makes (as counter.take writes them), which
// TestStoreRoundTrips, TestDeletionCost, TestGlassBoxOnDynamoDB and
// TestFirstFactRacesTheCreation assert against moto_server and
// BENCHMARKS.md's table of round trips is written from (TestBenchmarksRoundTrips).
const (
	reqRead           = "GetItem:1"              // a read; a redelivered or fenced extraction; a discard of nothing pending
	reqUpdate         = "UpdateItem:1"           // an upsert under the cap, a removal, a clear
	reqFirstFact      = "UpdateItem:2"           // the first fact of a record
	reqFirstFactRaced = "UpdateItem:3"           // the same, when another writer created the facts map first
	reqRefusedSave    = "PutItem:1 UpdateItem:1" // refused in place, then a whole-record save: a new key at the cap, a tombstone at the bound, a write once a fact ended
	reqErase          = "PutItem:1"              // an erasure
	reqReadSave       = "GetItem:1 PutItem:1"    // a read and a whole-record save: an extraction, a put with an end date, a keep or discard of a pending fact
)

// TestStoreRoundTrips runs the core's operations on the repository and
// asserts the requests each makes.
func TestStoreRoundTrips(t *testing.T) {
	f := newFixture(t)
	model := memorytest.NewModel()
	s := newStore(t, f, memory.Config{MaxFacts: 3}, memory.WithModel(model), memory.WithClock(memorytest.StepClock(t0)))

	facts := func() []string {
		t.Helper()
		got, err := s.GetFacts(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		f.count.take()
		return keysOf(got)
	}
	version := func() string {
		t.Helper()
		rec := mustGet(t, f.repo, scope)
		f.count.take()
		return rec.Version
	}

	f.step(t, "GetFacts of no record", reqRead, func() error { _, err := s.GetFacts(ctx, scope); return err })
	f.step(t, "UpsertFact of the first fact", reqFirstFact, func() error { _, err := s.UpsertFact(ctx, scope, "Name", "Ana"); return err })
	f.step(t, "UpsertFact under the cap", reqUpdate, func() error { _, err := s.UpsertFact(ctx, scope, "home city", "Lisbon"); return err })
	f.step(t, "UpsertFact of a stored key", reqUpdate, func() error { _, err := s.UpsertFact(ctx, scope, "name", "Ana Sousa"); return err })
	f.step(t, "UpsertFact to the cap", reqUpdate, func() error { _, err := s.UpsertFact(ctx, scope, "role", "nurse"); return err })
	f.step(t, "UpsertFact of a stored key at the cap", reqUpdate, func() error { _, err := s.UpsertFact(ctx, scope, "role", "head nurse"); return err })
	f.step(t, "UpsertFact of a new key at the cap", reqRefusedSave, func() error { _, err := s.UpsertFact(ctx, scope, "language", "pt"); return err })
	// home_city, updated longest ago, was dropped; never the new fact.
	if diff := cmp.Diff([]string{"language=pt", "name=Ana Sousa", "role=head nurse"}, facts()); diff != "" {
		t.Errorf("facts at the cap (-want +got):\n%s", diff)
	}
	f.step(t, "GetFacts", reqRead, func() error { _, err := s.GetFacts(ctx, scope); return err })

	v := version()
	f.step(t, "RemoveFact of an absent key", reqUpdate, func() error { return s.RemoveFact(ctx, scope, "pet") })
	if got := version(); got == v {
		t.Error("RemoveFact of an absent key wrote no tombstone")
	}
	f.step(t, "RemoveFact", reqUpdate, func() error { return s.RemoveFact(ctx, scope, "Role") })
	if diff := cmp.Diff([]string{"language=pt", "name=Ana Sousa"}, facts()); diff != "" {
		t.Errorf("facts after RemoveFact (-want +got):\n%s", diff)
	}

	// An extraction: one read, one conditional write, one model call.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon")}})
	var res memory.ExtractResult
	f.step(t, "Extract", reqReadSave, func() (err error) {
		res, err = s.Extract(ctx, extractReq("th-1", 0, 2, time.Time{}))
		return err
	})
	if res.Outcome != memory.OutcomeChanged || model.Calls() != 1 {
		t.Errorf("Extract: outcome %s after %d model calls, want changed after 1", res.Outcome, model.Calls())
	}
	if rec := mustGet(t, f.repo, scope); rec.Threads["th-1"].TurnCount != 2 {
		t.Errorf("watermark of th-1 = %+v, want turn count 2", rec.Threads)
	}
	// Redelivered: recognised from the watermark with one read, no model call.
	f.step(t, "Extract redelivered", reqRead, func() (err error) {
		res, err = s.Extract(ctx, extractReq("th-1", 0, 2, time.Time{}))
		return err
	})
	if res.Outcome != memory.OutcomeDuplicate || model.Calls() != 1 {
		t.Errorf("redelivered Extract: outcome %s after %d model calls, want duplicate after 1", res.Outcome, model.Calls())
	}

	f.step(t, "Clear", reqUpdate, func() error { return s.Clear(ctx, scope) })
	if got := facts(); len(got) != 0 {
		t.Errorf("facts after Clear = %v", got)
	}
	f.step(t, "UpsertFact after Clear", reqUpdate, func() error { _, err := s.UpsertFact(ctx, scope, "name", "Ana"); return err })

	var n int
	f.step(t, "DeleteByUser", reqErase, func() (err error) {
		n, err = s.DeleteByUser(ctx, scope)
		return err
	})
	if n != 1 {
		t.Errorf("DeleteByUser removed %d facts, want 1", n)
	}
	// Erasure stamps the store's clock; a request sent before it is fenced.
	rec := mustGet(t, f.repo, scope)
	f.count.take()
	if rec.ErasedAt.IsZero() {
		t.Fatalf("no erasure time after DeleteByUser: %+v", rec)
	}
	sentBefore := rec.ErasedAt.Add(-time.Millisecond)
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}})
	f.step(t, "Extract sent before the erasure", reqRead, func() (err error) {
		res, err = s.Extract(ctx, extractReq("th-2", 0, 2, sentBefore))
		return err
	})
	if res.Outcome != memory.OutcomeFenced || model.Calls() != 1 || len(res.Facts) != 0 {
		t.Errorf("fenced Extract: outcome %s, %d model calls, facts %v; want fenced, 1, none", res.Outcome, model.Calls(), res.Facts)
	}
	f.step(t, "GetFacts of a fence", reqRead, func() (err error) {
		got, err := s.GetFacts(ctx, scope)
		if err == nil && len(got) != 0 {
			t.Errorf("GetFacts of a fence = %v", got)
		}
		return err
	})
	f.step(t, "UpsertFact over a fence", reqFirstFact, func() error { _, err := s.UpsertFact(ctx, scope, "name", "Ana"); return err })
	// The fence still holds against the old request once the record is back.
	f.step(t, "Extract sent before the erasure, over a new record", reqRead, func() (err error) {
		res, err = s.Extract(ctx, extractReq("th-2", 0, 2, sentBefore))
		return err
	})
	if res.Outcome != memory.OutcomeFenced || model.Calls() != 1 {
		t.Errorf("Extract before the erasure over a new record: outcome %s, %d model calls; want fenced, 1", res.Outcome, model.Calls())
	}
}

// hookAPI runs hook once before its first PutItem.
type hookAPI struct {
	dynamorepo.API
	once sync.Once
	hook func()
}

func (h *hookAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	h.once.Do(h.hook)
	return h.API.PutItem(ctx, in, optFns...)
}

// TestExtractConflictRemerges makes a manual edit land between an
// extraction's read and its write: the write conflicts, the same operations
// are merged into the current record, the model is not called again, and
// the manual fact stays.
func TestExtractConflictRemerges(t *testing.T) {
	f := newFixture(t)
	plain := newStore(t, f, memory.Config{MaxFacts: 5})
	if _, err := plain.UpsertFact(ctx, scope, "name", "Ana"); err != nil {
		t.Fatal(err)
	}
	api := &hookAPI{API: f.client, hook: func() {
		if _, err := plain.UpsertFact(ctx, scope, "pet", "cat"); err != nil {
			t.Errorf("UpsertFact during the extraction: %v", err)
		}
	}}
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		set("home_city", "Lisbon"), {Op: memory.OpDelete, Key: "name"},
	}})
	s, err := memory.New(dynamorepo.New(api, f.table), memory.Config{MaxFacts: 5}, memory.WithModel(model))
	if err != nil {
		t.Fatal(err)
	}
	f.count.take()
	res, err := s.Extract(ctx, extractReq("th-1", 0, 2, time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	// The hook's UpsertFact made one UpdateItem of its own.
	if got, want := f.count.take(), "GetItem:1 PutItem:2 UpdateItem:1"; got != want {
		t.Errorf("requests = %q, want %q", got, want)
	}
	if model.Calls() != 1 {
		t.Errorf("model calls = %d, want 1", model.Calls())
	}
	want := []string{"home_city=Lisbon", "pet=cat"}
	if diff := cmp.Diff(want, keysOf(res.Facts)); diff != "" {
		t.Errorf("facts returned (-want +got):\n%s", diff)
	}
	got, err := plain.GetFacts(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, keysOf(got)); diff != "" {
		t.Errorf("facts stored (-want +got):\n%s", diff)
	}
}

// TestExtractAfterErasureWritesNothing erases the user between an
// extraction's read and its write: the write conflicts with the fence and
// the re-merge stops there, writing nothing.
func TestExtractAfterErasureWritesNothing(t *testing.T) {
	f := newFixture(t)
	plain := newStore(t, f, memory.Config{})
	if _, err := plain.UpsertFact(ctx, scope, "name", "Ana"); err != nil {
		t.Fatal(err)
	}
	api := &hookAPI{API: f.client, hook: func() {
		if _, err := plain.DeleteByUser(ctx, scope); err != nil {
			t.Errorf("DeleteByUser during the extraction: %v", err)
		}
	}}
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon")}})
	s, err := memory.New(dynamorepo.New(api, f.table), memory.Config{}, memory.WithModel(model))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Extract(ctx, extractReq("th-1", 0, 2, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != memory.OutcomeFenced || len(res.Facts) != 0 {
		t.Errorf("Extract across an erasure: outcome %s, facts %v; want fenced, none", res.Outcome, res.Facts)
	}
	rec := mustGet(t, f.repo, scope)
	if rec.Facts != nil || rec.Threads != nil || rec.ErasedAt.IsZero() {
		t.Errorf("stored after the extraction: %+v, want the bare fence", rec)
	}
}

// TestStoreRepositoryFailure checks that a failing table surfaces through
// every operation of the store as a repository error.
func TestStoreRepositoryFailure(t *testing.T) {
	r := dynamorepo.New(newClient(endpoint(t), nil), "no-such-table")
	s, err := memory.New(r, memory.Config{}, memory.WithModel(memorytest.NewModel()))
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, err error) {
		t.Helper()
		var me *memory.Error
		if !errors.As(err, &me) || me.Code != memory.CodeRepository {
			t.Errorf("%s: err = %v, want a *memory.Error with CodeRepository", name, err)
		}
	}
	_, err = s.GetFacts(ctx, scope)
	check("GetFacts", err)
	_, err = s.UpsertFact(ctx, scope, "name", "Ana")
	check("UpsertFact", err)
	check("RemoveFact", s.RemoveFact(ctx, scope, "name"))
	check("Clear", s.Clear(ctx, scope))
	_, err = s.DeleteByUser(ctx, scope)
	check("DeleteByUser", err)
	_, err = s.Extract(ctx, extractReq("th-1", 0, 2, time.Time{}))
	check("Extract", err)
}
