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
	rt := roundTrip{f: f, model: model,
		s: newStore(t, f, memory.Config{MaxFacts: 3}, memory.WithModel(model), memory.WithClock(memorytest.StepClock(t0)))}
	rt.edits(t)
	rt.extractions(t)
	rt.erasure(t)
}

// roundTrip is the state of TestStoreRoundTrips, whose steps run in order
// on one user.
type roundTrip struct {
	f     *fixture
	s     *memory.Store
	model *memorytest.Model
}

// facts returns the stored facts as key=value, not counting the read.
func (rt roundTrip) facts(t *testing.T) []string {
	t.Helper()
	got, err := rt.s.GetFacts(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	rt.f.count.take()
	return keysOf(got)
}

// version returns the record's version, not counting the read.
func (rt roundTrip) version(t *testing.T) string {
	t.Helper()
	rec := mustGet(t, rt.f.repo, scope)
	rt.f.count.take()
	return rec.Version
}

// put is a step that stores key = value and makes the requests want.
func (rt roundTrip) put(t *testing.T, name, want, key, value string) {
	t.Helper()
	rt.f.step(t, name, want, func() error {
		_, err := rt.s.Put(ctx, scope, memory.FactInput{Key: key, Value: value})
		return err
	})
}

// extract is a step that runs an extraction of thread th, turns 0 to 2,
// sent at sentAt.
func (rt roundTrip) extract(t *testing.T, name, want, th string, sentAt time.Time) memory.ExtractResult {
	t.Helper()
	var res memory.ExtractResult
	rt.f.step(t, name, want, func() (err error) {
		res, err = rt.s.Extract(ctx, extractReq(th, 0, 2, sentAt))
		return err
	})
	return res
}

// edits: writes by hand up to the cap and past it, and removals.
func (rt roundTrip) edits(t *testing.T) {
	f, s := rt.f, rt.s
	f.step(t, "GetFacts of no record", reqRead, func() error { _, err := s.GetFacts(ctx, scope); return err })
	rt.put(t, "Put of the first fact", reqFirstFact, "Name", "Ana")
	rt.put(t, "Put under the cap", reqUpdate, "home city", "Lisbon")
	rt.put(t, "Put of a stored key", reqUpdate, "name", "Ana Sousa")
	rt.put(t, "Put to the cap", reqUpdate, "role", "nurse")
	rt.put(t, "Put of a stored key at the cap", reqUpdate, "role", "head nurse")
	rt.put(t, "Put of a new key at the cap", reqRefusedSave, "language", "pt")
	// home_city, updated longest ago, was dropped; never the new fact.
	if diff := cmp.Diff([]string{"language=pt", "name=Ana Sousa", "role=head nurse"}, rt.facts(t)); diff != "" {
		t.Errorf("facts at the cap (-want +got):\n%s", diff)
	}
	f.step(t, "GetFacts", reqRead, func() error { _, err := s.GetFacts(ctx, scope); return err })

	v := rt.version(t)
	f.step(t, "RemoveFact of an absent key", reqUpdate, func() error { return s.RemoveFact(ctx, scope, "pet") })
	if got := rt.version(t); got == v {
		t.Error("RemoveFact of an absent key wrote no tombstone")
	}
	f.step(t, "RemoveFact", reqUpdate, func() error { return s.RemoveFact(ctx, scope, "Role") })
	if diff := cmp.Diff([]string{"language=pt", "name=Ana Sousa"}, rt.facts(t)); diff != "" {
		t.Errorf("facts after RemoveFact (-want +got):\n%s", diff)
	}
}

// extractions: one read, one conditional write, one model call; a
// redelivery recognised from the watermark with one read and no call.
func (rt roundTrip) extractions(t *testing.T) {
	model := rt.model
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("home_city", "Lisbon")}})
	res := rt.extract(t, "Extract", reqReadSave, "th-1", time.Time{})
	if res.Outcome != memory.OutcomeChanged || model.Calls() != 1 {
		t.Errorf("Extract: outcome %s after %d model calls, want changed after 1", res.Outcome, model.Calls())
	}
	if rec := mustGet(t, rt.f.repo, scope); rec.Threads["th-1"].TurnCount != 2 {
		t.Errorf("watermark of th-1 = %+v, want turn count 2", rec.Threads)
	}
	res = rt.extract(t, "Extract redelivered", reqRead, "th-1", time.Time{})
	if res.Outcome != memory.OutcomeDuplicate || model.Calls() != 1 {
		t.Errorf("redelivered Extract: outcome %s after %d model calls, want duplicate after 1", res.Outcome, model.Calls())
	}
}

// erasure: Clear, then DeleteByUser, whose fence holds against an
// extraction sent before it, also once the record is back.
func (rt roundTrip) erasure(t *testing.T) {
	f, s, model := rt.f, rt.s, rt.model
	f.step(t, "Clear", reqUpdate, func() error { return s.Clear(ctx, scope) })
	if got := rt.facts(t); len(got) != 0 {
		t.Errorf("facts after Clear = %v", got)
	}
	rt.put(t, "Put after Clear", reqUpdate, "name", "Ana")

	var e memory.Erasure
	f.step(t, "DeleteByUser", reqErase, func() (err error) {
		e, err = s.DeleteByUser(ctx, scope, memory.Retention{})
		return err
	})
	if e.RemovedFacts != 1 {
		t.Errorf("DeleteByUser removed %d facts, want 1", e.RemovedFacts)
	}
	// Erasure stamps the store's clock; a request sent before it is fenced.
	rec := mustGet(t, f.repo, scope)
	f.count.take()
	if rec.ErasedAt.IsZero() {
		t.Fatalf("no erasure time after DeleteByUser: %+v", rec)
	}
	sentBefore := rec.ErasedAt.Add(-time.Millisecond)
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}})
	res := rt.extract(t, "Extract sent before the erasure", reqRead, "th-2", sentBefore)
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
	rt.put(t, "Put over a fence", reqFirstFact, "name", "Ana")
	// The fence still holds against the old request once the record is back.
	res = rt.extract(t, "Extract sent before the erasure, over a new record", reqRead, "th-2", sentBefore)
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
	if _, err := plain.Put(ctx, scope, memory.FactInput{Key: "name", Value: "Ana"}); err != nil {
		t.Fatal(err)
	}
	api := &hookAPI{API: f.client, hook: func() {
		if _, err := plain.Put(ctx, scope, memory.FactInput{Key: "pet", Value: "cat"}); err != nil {
			t.Errorf("Put during the extraction: %v", err)
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
	// The hook's Put made one UpdateItem of its own.
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
	if _, err := plain.Put(ctx, scope, memory.FactInput{Key: "name", Value: "Ana"}); err != nil {
		t.Fatal(err)
	}
	api := &hookAPI{API: f.client, hook: func() {
		if _, err := plain.DeleteByUser(ctx, scope, memory.Retention{}); err != nil {
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
	_, err = s.Put(ctx, scope, memory.FactInput{Key: "name", Value: "Ana"})
	check("Put", err)
	check("RemoveFact", s.RemoveFact(ctx, scope, "name"))
	check("Clear", s.Clear(ctx, scope))
	_, err = s.DeleteByUser(ctx, scope, memory.Retention{})
	check("DeleteByUser", err)
	_, err = s.Extract(ctx, extractReq("th-1", 0, 2, time.Time{}))
	check("Extract", err)
}
