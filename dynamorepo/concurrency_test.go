package dynamorepo_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// ack is one acknowledged Put: what it stored and when, in real
// time, it started and returned.
type ack struct {
	fact       memory.Fact
	start, end time.Time
}

// The shape of TestConcurrentUpserts: goroutines, writes of each, the cap,
// and the keys that several goroutines write (each also writes one of its
// own).
const (
	upsertGoroutines = 32
	upsertWritesEach = 4
	upsertMaxFacts   = 8
	upsertSharedKeys = 4
)

// TestConcurrentUpserts has 32 goroutines write distinct and overlapping
// keys of one user through memory.Store, with MaxFacts below the number of
// distinct keys, and checks the outcome against the documented rule:
//
//   - never more than MaxFacts facts;
//   - every stored fact is an acknowledged write, value and time;
//   - no lost update: a stored fact was not overwritten by a later
//     acknowledged write of its key (one that started after it returned);
//   - eviction drops the least recently updated: an absent key was not
//     written after a write that is still stored had returned.
//
// The store's clock moves one millisecond per call, so that times follow
// real time and stay distinct at the table's millisecond precision.
func TestConcurrentUpserts(t *testing.T) {
	const (
		goroutines = upsertGoroutines
		writesEach = upsertWritesEach
		maxFacts   = upsertMaxFacts
	)
	f := newFixture(t)
	var tick atomic.Int64
	clock := func() time.Time { return t0.Add(time.Duration(tick.Add(1)) * time.Millisecond) }
	s := newStore(t, f, memory.Config{MaxFacts: maxFacts, MaxConflictRetries: 100}, memory.WithClock(clock))

	acks, refused := writeConcurrently(t, s)
	if t.Failed() {
		return
	}
	updates, fallbacks := f.count.get("UpdateItem")
	puts, conflicts := f.count.get("PutItem")
	final, err := s.GetFacts(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	nAcks := 0
	for _, a := range acks {
		nAcks += len(a)
	}
	t.Logf("%d writes acknowledged, %d refused after retries; %d UpdateItem (%d fell back to a read-merge-save), %d PutItem (%d conflicts retried); %d facts stored of %d distinct keys",
		nAcks, refused, updates, fallbacks, puts, conflicts, len(final), len(acks))
	if nAcks+refused != goroutines*writesEach {
		t.Fatalf("%d acknowledged + %d refused, want %d writes", nAcks, refused, goroutines*writesEach)
	}
	if refused > 0 {
		t.Errorf("%d writes kept losing 100 times in a row", refused)
	}

	if len(final) > maxFacts {
		t.Errorf("%d facts stored, over MaxFacts %d", len(final), maxFacts)
	}
	if len(acks) > maxFacts && len(final) != maxFacts {
		t.Errorf("%d facts stored, want MaxFacts %d: %d distinct keys were written", len(final), maxFacts, len(acks))
	}
	checkNoLostUpdate(t, final, acks)
}

// writeConcurrently runs the writers of TestConcurrentUpserts and
// returns the acknowledged writes by key and how many were refused.
func writeConcurrently(t *testing.T, s *memory.Store) (map[string][]ack, int) {
	const goroutines, writesEach, shared = upsertGoroutines, upsertWritesEach, upsertSharedKeys
	var (
		mu      sync.Mutex
		acks    = map[string][]ack{}
		refused int
		wg      sync.WaitGroup
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writesEach {
				key := fmt.Sprintf("own_%02d", g) // written by g alone
				if i%2 == 1 {
					key = fmt.Sprintf("shared_%d", (g+i)%shared) // by many
				}
				start := time.Now()
				fct, err := s.Put(ctx, scope, memory.FactInput{Key: key, Value: fmt.Sprintf("g%d-w%d", g, i)})
				end := time.Now()
				mu.Lock()
				switch {
				case err == nil:
					acks[fct.Key] = append(acks[fct.Key], ack{fact: fct, start: start, end: end})
				case memory.ErrorCode(err) == memory.CodeConflict:
					refused++ // not acknowledged: wrote nothing
				default:
					t.Errorf("Put: %v", err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return acks, refused
}

// checkNoLostUpdate fails on a stored fact that no acknowledged write
// stored, one older than a write of its key that started after it
// returned, and a key evicted although a stored key was updated before
// every write of it.
func checkNoLostUpdate(t *testing.T, final []memory.Fact, acks map[string][]ack) {
	t.Helper()
	stored := map[string]ack{}
	for _, fct := range final {
		var from *ack
		for i, a := range acks[fct.Key] {
			if a.fact.Value == fct.Value && a.fact.UpdatedAt.Equal(fct.UpdatedAt) {
				from = &acks[fct.Key][i]
			}
		}
		if from == nil {
			t.Errorf("stored fact %s=%s at %v is no acknowledged write", fct.Key, fct.Value, fct.UpdatedAt)
			continue
		}
		stored[fct.Key] = *from
		for _, later := range acks[fct.Key] {
			if from.end.Before(later.start) {
				t.Errorf("lost update: %s holds %q although %q was written after it", fct.Key, fct.Value, later.fact.Value)
			}
		}
	}
	for key, written := range acks {
		if _, ok := stored[key]; ok {
			continue
		}
		first := written[0].start
		for _, a := range written {
			if a.start.Before(first) {
				first = a.start
			}
		}
		for pk, p := range stored {
			if p.end.Before(first) {
				t.Errorf("%s was evicted although %s, stored, was updated before every write of it", key, pk)
			}
		}
	}
}

// racingExtractions and racingEdits are how many extractions and manual
// edits TestConcurrentExtractAndUpserts runs at once.
const racingExtractions, racingEdits = 8, 24

// TestConcurrentExtractAndUpserts runs extractions of several threads and
// manual edits of one user at once: every manual fact, every extracted fact
// and every watermark is there afterwards, and each extraction called the
// model once, whatever the conflicts.
func TestConcurrentExtractAndUpserts(t *testing.T) {
	const extractions, upserts = racingExtractions, racingEdits
	f := newFixture(t)
	model := memorytest.NewModel()
	for i := range extractions {
		model.Push(memorytest.Answer{Operations: []memory.Operation{set(fmt.Sprintf("extracted_%d", i), "x")}})
	}
	s := newStore(t, f, memory.Config{MaxFacts: 50, MaxConflictRetries: 100}, memory.WithModel(model))
	var wg sync.WaitGroup
	for i := range extractions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Extract(ctx, extractReq(fmt.Sprintf("th-%d", i), 0, 2, time.Time{})); err != nil {
				t.Errorf("Extract: %v", err)
			}
		}()
	}
	for i := range upserts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Put(ctx, scope, memory.FactInput{Key: fmt.Sprintf("manual_%d", i), Value: "y"}); err != nil {
				t.Errorf("Put: %v", err)
			}
		}()
	}
	wg.Wait()
	_, conflicts := f.count.get("PutItem")
	rec := mustGet(t, f.repo, scope)
	t.Logf("%d conflicts retried; %d facts, %d watermarks", conflicts, len(rec.Facts), len(rec.Threads))
	if model.Calls() != extractions {
		t.Errorf("model calls = %d, want %d", model.Calls(), extractions)
	}
	have := map[string]bool{}
	for _, fct := range rec.Facts {
		have[fct.Key] = true
	}
	for i := range extractions {
		if k := fmt.Sprintf("extracted_%d", i); !have[k] {
			t.Errorf("extracted fact %s lost", k)
		}
		if m := rec.Threads[fmt.Sprintf("th-%d", i)]; m.TurnCount != 2 {
			t.Errorf("watermark of th-%d = %+v, want turn count 2", i, m)
		}
	}
	for i := range upserts {
		if k := fmt.Sprintf("manual_%d", i); !have[k] {
			t.Errorf("manual fact %s lost", k)
		}
	}
	if len(rec.Facts) != extractions+upserts {
		t.Errorf("%d facts stored, want %d", len(rec.Facts), extractions+upserts)
	}
}

// The shape of TestConcurrentFirstFacts: new users, distinct keys written
// for each (also the cap), the numbers of concurrent writers, and the
// writers of one key of a new user.
const firstFactUsers, firstFactKeys, sameKeyWriters = 10, 64, 16

var firstFactWriters = []int{16, 64}

// TestConcurrentFirstFacts writes 640 distinct keys through memory.Store,
// 64 for each of 10 users that have no record yet, from 16 and from 64
// goroutines at once (each user's 64 writes start together, so that the
// first facts race). No write may be refused, and every acknowledged fact
// must be stored. Then 16 goroutines write one key of a new user with 16
// values: every write is acknowledged and the stored value is one of them.
func TestConcurrentFirstFacts(t *testing.T) {
	const users, keysEach = firstFactUsers, firstFactKeys
	for _, writers := range firstFactWriters {
		t.Run(fmt.Sprintf("writers=%d", writers), func(t *testing.T) {
			f := newFixture(t)
			s := newStore(t, f, memory.Config{MaxFacts: keysEach})
			var refused, failed, acked atomic.Int64
			for u := range users {
				sc := memory.Scope{TenantID: "acme", UserID: fmt.Sprintf("new-%d", u)}
				var wg sync.WaitGroup
				for w := range writers {
					wg.Go(func() {
						for k := w; k < keysEach; k += writers {
							_, err := s.Put(ctx, sc, memory.FactInput{Key: fmt.Sprintf("key_%02d", k), Value: fmt.Sprintf("value %d", k)})
							switch {
							case err == nil:
								acked.Add(1)
							case memory.ErrorCode(err) == memory.CodeConflict:
								refused.Add(1)
							default:
								failed.Add(1)
								t.Errorf("Put: %v", err)
							}
						}
					})
				}
				wg.Wait()
			}
			lost := 0
			for u := range users {
				facts, err := s.GetFacts(ctx, memory.Scope{TenantID: "acme", UserID: fmt.Sprintf("new-%d", u)})
				if err != nil {
					t.Fatal(err)
				}
				lost += keysEach - len(facts)
			}
			updates, condFailed := f.count.get("UpdateItem")
			puts, _ := f.count.get("PutItem")
			t.Logf("%d writers: %d of %d writes refused, %d acknowledged, %d lost; %d UpdateItem (%d refused by their condition), %d PutItem",
				writers, refused.Load(), users*keysEach, acked.Load(), lost, updates, condFailed, puts)
			if refused.Load() != 0 || failed.Load() != 0 || lost != 0 || acked.Load() != users*keysEach {
				t.Errorf("%d refused, %d failed, %d lost of %d writes; want all acknowledged and stored", refused.Load(), failed.Load(), lost, users*keysEach)
			}
			if puts != 0 {
				t.Errorf("%d PutItem: distinct keys under the cap never need a whole-record save", puts)
			}
		})
	}

	t.Run("same key", func(t *testing.T) {
		f := newFixture(t)
		s := newStore(t, f, memory.Config{})
		sc := memory.Scope{TenantID: "acme", UserID: "new-same"}
		var wg sync.WaitGroup
		for w := range sameKeyWriters {
			wg.Go(func() {
				if _, err := s.Put(ctx, sc, memory.FactInput{Key: "home_city", Value: fmt.Sprintf("city %d", w)}); err != nil {
					t.Errorf("Put: %v", err)
				}
			})
		}
		wg.Wait()
		facts, err := s.GetFacts(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if len(facts) != 1 || facts[0].Key != "home_city" {
			t.Fatalf("facts = %+v, want home_city alone", facts)
		}
		if _, err := fmt.Sscanf(facts[0].Value, "city %d", &n); err != nil || n < 0 || n >= sameKeyWriters {
			t.Errorf("home_city = %q, want one of the written values", facts[0].Value)
		}
	})
}
