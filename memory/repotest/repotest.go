// Package repotest holds the contract of [memory.Repository] as a test
// suite that any implementation runs, the way testing/fstest.TestFS checks
// a file system: the in-memory repository of memorytest and the DynamoDB
// one of dynamorepo both pass it, so that the handler tests that run on
// the first say something about the second.
package repotest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/usermemory/usermemory/memory"
)

// Times with whole milliseconds, the precision a repository keeps.
var (
	t0 = time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
	t2 = t0.Add(2 * time.Minute)
)

var (
	ana      = memory.Scope{TenantID: "acme", UserID: "ana"}
	bob      = memory.Scope{TenantID: "acme", UserID: "bob"}
	otherAna = memory.Scope{TenantID: "globex", UserID: "ana"}
)

func fact(key, value string, at time.Time) memory.Fact {
	return memory.Fact{Key: key, Value: value, UpdatedAt: at, Origin: memory.OriginManual}
}

// TestRepository checks the contract of [memory.Repository] on the
// repositories newRepo returns: one new, empty repository per call, which
// the suite calls once per subtest. Every write and its condition, the
// version that changes with every write, ErrConflict with the current
// record, the erasure fence, the clear and the tombstones of removed keys,
// concurrent writes of distinct keys for a new user, and the fields of
// glass-box memory: evidence, end dates and categories of facts, pending
// facts, and Expires, after which SetFact and DeleteFact leave the write
// to Save; the unread tails of the idle read, and the store's idle read
// over the repository: noted, superseded, read once, fenced; a thread's
// forget fence, and the store's ForgetThread over the repository; the
// import marks and declined digests, and the store's Import over the
// repository.
func TestRepository(t *testing.T, newRepo func(t *testing.T) memory.Repository) {
	cases := []struct {
		name string
		run  func(t *testing.T, r memory.Repository)
	}{
		{"GetOfNoRecord", testGetOfNoRecord},
		{"SaveAndGet", testSaveAndGet},
		{"SaveConflicts", testSaveConflicts},
		{"ScopesAreApart", testScopesAreApart},
		{"SetFact", testSetFact},
		{"SetFactCreates", testSetFactCreates},
		{"SetFactConcurrentDistinctKeys", testSetFactConcurrentDistinctKeys},
		{"DeleteFact", testDeleteFact},
		{"ClearFacts", testClearFacts},
		{"Erase", testErase},
		{"WritesOverAFence", testWritesOverAFence},
		{"GlassBoxFieldsRoundTrip", testGlassBoxFieldsRoundTrip},
		{"WritesAfterExpires", testWritesAfterExpires},
		{"WritesRemovePending", testWritesRemovePending},
		{"ClearFactsClearsPending", testClearFactsClearsPending},
		{"TailsRoundTrip", testTailsRoundTrip},
		{"IdleReadOnce", testIdleReadOnce},
		{"IdleReadFenced", testIdleReadFenced},
		{"ForgetFenceRoundTrip", testForgetFenceRoundTrip},
		{"ForgetThread", testForgetThread},
		{"HistoryRoundTrip", testHistoryRoundTrip},
		{"StoreHistory", testStoreHistory},
		{"ImportsRoundTrip", testImportsRoundTrip},
		{"StoreImport", testStoreImport},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newRepo(t)) })
	}
}

// normal returns rec with its facts and pending facts sorted by key, for
// comparison.
func normal(rec memory.Record) memory.Record {
	for _, list := range []*[]memory.Fact{&rec.Facts, &rec.Pending} {
		if *list != nil {
			*list = slices.Clone(*list)
			slices.SortFunc(*list, func(a, b memory.Fact) int { return strings.Compare(a.Key, b.Key) })
		}
	}
	return rec
}

// same fails t when got and want differ, nil and empty maps and lists
// counting as equal (the checks that tell them apart are explicit).
func same(t *testing.T, what string, want, got memory.Record) {
	t.Helper()
	if diff := cmp.Diff(normal(want), normal(got), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func get(t *testing.T, r memory.Repository, s memory.Scope) memory.Record {
	t.Helper()
	rec, err := r.Get(context.Background(), s)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return rec
}

func save(t *testing.T, r memory.Repository, s memory.Scope, rec memory.Record) string {
	t.Helper()
	ver, _, err := r.Save(context.Background(), s, rec)
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	if ver == "" || ver == rec.Version {
		t.Fatalf("Save returned version %q after %q, want a new one", ver, rec.Version)
	}
	return ver
}

func setFact(t *testing.T, r memory.Repository, s memory.Scope, f memory.Fact, maxFacts int) (bool, memory.Record) {
	t.Helper()
	applied, cur, err := r.SetFact(context.Background(), s, f, maxFacts)
	if err != nil {
		t.Fatalf("SetFact(%s): %v", f.Key, err)
	}
	return applied, cur
}

func deleteFact(t *testing.T, r memory.Repository, s memory.Scope, key string, at time.Time, max int) (bool, memory.Record) {
	t.Helper()
	applied, cur, err := r.DeleteFact(context.Background(), s, key, at, max)
	if err != nil {
		t.Fatalf("DeleteFact(%s): %v", key, err)
	}
	return applied, cur
}

// newVersion fails t unless rec's version differs from before; it returns
// the new one.
func newVersion(t *testing.T, what, before string, rec memory.Record) string {
	t.Helper()
	if rec.Version == "" || rec.Version == before {
		t.Errorf("%s: version %q after %q, want a new one", what, rec.Version, before)
	}
	return rec.Version
}

func testGetOfNoRecord(t *testing.T, r memory.Repository) {
	rec := get(t, r, ana)
	if rec.Version != "" || rec.Facts != nil || rec.Threads != nil || rec.Tombstones != nil || !rec.ErasedAt.IsZero() || !rec.ClearedAt.IsZero() {
		t.Errorf("Get of no record = %+v, want a zero Record", rec)
	}
}

func testSaveAndGet(t *testing.T, r memory.Repository) {
	want := memory.Record{
		Facts: []memory.Fact{
			{Key: "home_city", Value: "Lisbon", UpdatedAt: t0, Origin: memory.OriginConversation, SourceThreadID: "th-9", SourceThreadTitle: "Trip «Lisboa» ✓"},
			{Key: "língua", Value: "português ✓", UpdatedAt: t1, Origin: memory.OriginManual},
			{Key: "a.b", Value: "a key with a dot", UpdatedAt: t2, Origin: memory.OriginRememberTool},
		},
		Threads: map[string]memory.ThreadMark{"th-9": {TurnCount: 6, At: t0},
			"th-8": {Digest: memory.TurnsDigest([]memory.Turn{{Role: memory.RoleUser, Text: "I'm Ana"}}), At: t1}},
		ClearedAt:  t0,
		Tombstones: map[string]time.Time{"pet": t1, "x.y": t2},
	}
	want.Version = save(t, r, ana, want)
	same(t, "Get after Save", want, get(t, r, ana))

	// Save stores a facts map and a tombstone map even when empty.
	save(t, r, bob, memory.Record{})
	if rec := get(t, r, bob); rec.Facts == nil || rec.Tombstones == nil {
		t.Errorf("Get after Save of an empty record = %+v, want empty, non-nil Facts and Tombstones", rec)
	}
}

func testSaveConflicts(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	first := memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}}
	first.Version = save(t, r, ana, first)

	// "" means nothing stored: a second creation conflicts, with the
	// current record.
	_, cur, err := r.Save(ctx, ana, memory.Record{Facts: []memory.Fact{fact("b", "2", t0)}})
	if !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("second creation: err = %v, want ErrConflict", err)
	}
	same(t, "current record of a conflict", first, cur)

	// The stored version writes; the one before it then conflicts.
	next := memory.Record{Version: first.Version, Facts: []memory.Fact{fact("a", "9", t1)}}
	next.Version = save(t, r, ana, next)
	_, cur, err = r.Save(ctx, ana, memory.Record{Version: first.Version, Facts: []memory.Fact{fact("a", "stale", t2)}})
	if !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("Save with a stale version: err = %v, want ErrConflict", err)
	}
	same(t, "current record of a stale save", next, cur)
	same(t, "stored after a stale save", next, get(t, r, ana))

	// A version on no record conflicts, with a zero current record.
	_, cur, err = r.Save(ctx, bob, memory.Record{Version: first.Version})
	if !errors.Is(err, memory.ErrConflict) || cur.Version != "" {
		t.Errorf("Save with a version on no record = %+v, %v; want ErrConflict and a zero record", cur, err)
	}
	// Any other write changes the version: a Save from before it conflicts.
	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"SetFact", func() error { _, _, err := r.SetFact(ctx, ana, fact("c", "3", t1), 10); return err }},
		{"DeleteFact", func() error { _, _, err := r.DeleteFact(ctx, ana, "c", t1, 10); return err }},
		{"ClearFacts", func() error { return r.ClearFacts(ctx, ana, t1) }},
		{"Erase", func() error { _, err := r.Erase(ctx, ana, t1); return err }},
	} {
		before := get(t, r, ana)
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		after := get(t, r, ana)
		newVersion(t, w.name, before.Version, after)
		if _, cur, err := r.Save(ctx, ana, before); !errors.Is(err, memory.ErrConflict) {
			t.Errorf("Save from before %s: err = %v, want ErrConflict", w.name, err)
		} else {
			same(t, "current record after "+w.name, after, cur)
		}
	}
}

func testScopesAreApart(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	save(t, r, ana, memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}})
	if _, _, err := r.SetFact(ctx, ana, fact("b", "2", t0), 10); err != nil {
		t.Fatal(err)
	}
	if err := r.ClearFacts(ctx, bob, t1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Erase(ctx, otherAna, t1); err != nil {
		t.Fatal(err)
	}
	if rec := get(t, r, ana); len(rec.Facts) != 2 || !rec.ClearedAt.IsZero() || !rec.ErasedAt.IsZero() {
		t.Errorf("ana after writes to bob and to ana of another tenant: %+v", rec)
	}
	if rec := get(t, r, memory.Scope{TenantID: "acme", UserID: "carla"}); rec.Version != "" {
		t.Errorf("a user never written: %+v", rec)
	}
}

func testSetFact(t *testing.T, r memory.Repository) {
	rec := memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}, Tombstones: map[string]time.Time{"b": t0, "pet": t0}}
	v := save(t, r, ana, rec)

	// Under the cap: a new key applies, its tombstone goes, the others stay.
	b := memory.Fact{Key: "b", Value: "2", UpdatedAt: t1, Origin: memory.OriginRememberTool, SourceThreadID: "th-1", SourceThreadTitle: "Pets"}
	if applied, _ := setFact(t, r, ana, b, 3); !applied {
		t.Fatal("SetFact of a new key under the cap: not applied")
	}
	got := get(t, r, ana)
	v = newVersion(t, "SetFact", v, got)
	same(t, "after SetFact under the cap", memory.Record{Version: v, Facts: []memory.Fact{fact("a", "1", t0), b}, Tombstones: map[string]time.Time{"pet": t0}}, got)
	if applied, _ := setFact(t, r, ana, fact("c", "3", t1), 3); !applied {
		t.Fatal("SetFact of a new key to the cap: not applied")
	}
	// At the cap: a stored key applies.
	if applied, _ := setFact(t, r, ana, fact("a", "1b", t2), 3); !applied {
		t.Fatal("SetFact of a stored key at the cap: not applied")
	}
	full := get(t, r, ana)
	if full.Facts[slices.IndexFunc(full.Facts, func(f memory.Fact) bool { return f.Key == "a" })].Value != "1b" {
		t.Errorf("a stored key set at the cap: %+v", full.Facts)
	}
	// At the cap: a new key writes nothing and returns the current record.
	applied, cur := setFact(t, r, ana, fact("d", "4", t2), 3)
	if applied {
		t.Fatal("SetFact of a new key at the cap: applied")
	}
	same(t, "current record at the cap", full, cur)
	same(t, "stored after a refused SetFact", full, get(t, r, ana))
}

func testSetFactCreates(t *testing.T, r memory.Repository) {
	// No record: SetFact creates the facts with f alone.
	if applied, _ := setFact(t, r, ana, fact("a", "1", t0), 3); !applied {
		t.Fatal("SetFact on no record: not applied")
	}
	got := get(t, r, ana)
	if got.Tombstones == nil {
		t.Error("a record created by SetFact has no tombstone map")
	}
	same(t, "record created by SetFact", memory.Record{Version: got.Version, Facts: []memory.Fact{fact("a", "1", t0)}}, got)
	// A cleared record (empty facts) takes a fact at once too.
	if err := r.ClearFacts(context.Background(), bob, t0); err != nil {
		t.Fatal(err)
	}
	if applied, _ := setFact(t, r, bob, fact("a", "1", t1), 3); !applied {
		t.Fatal("SetFact on a cleared record: not applied")
	}
	got = get(t, r, bob)
	same(t, "record after a clear and a SetFact", memory.Record{Version: got.Version, ClearedAt: t0, Facts: []memory.Fact{fact("a", "1", t1)}}, got)
}

// testSetFactConcurrentDistinctKeys writes 64 distinct keys for a new user
// from 16 goroutines: every write applies and every fact is stored.
func testSetFactConcurrentDistinctKeys(t *testing.T, r memory.Repository) {
	const writers, each = 16, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				f := fact(fmt.Sprintf("k_%02d_%d", g, i), "v", t0)
				applied, _, err := r.SetFact(context.Background(), ana, f, writers*each)
				switch {
				case err != nil:
					errs <- err
				case !applied:
					errs <- fmt.Errorf("SetFact(%s) under the cap was refused", f.Key)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := get(t, r, ana); len(got.Facts) != writers*each {
		t.Errorf("%d facts stored, want %d", len(got.Facts), writers*each)
	}
}

func testDeleteFact(t *testing.T, r memory.Repository) {
	// No record: refused with a zero record, nothing written.
	applied, cur := deleteFact(t, r, ana, "a", t1, 2)
	if applied || cur.Version != "" {
		t.Fatalf("DeleteFact on no record = %v, %+v; want refused with a zero record", applied, cur)
	}
	if rec := get(t, r, ana); rec.Version != "" {
		t.Fatalf("DeleteFact on no record wrote %+v", rec)
	}

	v := save(t, r, ana, memory.Record{Facts: []memory.Fact{fact("a", "1", t0), fact("b", "2", t0)}, Threads: map[string]memory.ThreadMark{"th": {TurnCount: 2, At: t0}}})
	// A stored key: the fact goes, its tombstone comes, in one write.
	if applied, _ := deleteFact(t, r, ana, "a", t1, 2); !applied {
		t.Fatal("DeleteFact of a stored key: refused")
	}
	got := get(t, r, ana)
	v = newVersion(t, "DeleteFact", v, got)
	same(t, "after DeleteFact", memory.Record{Version: v, Facts: []memory.Fact{fact("b", "2", t0)},
		Threads: map[string]memory.ThreadMark{"th": {TurnCount: 2, At: t0}}, Tombstones: map[string]time.Time{"a": t1}}, got)
	// An absent key gets its tombstone too.
	if applied, _ := deleteFact(t, r, ana, "pet", t1, 2); !applied {
		t.Fatal("DeleteFact of an absent key: refused")
	}
	// At the bound: a key with a tombstone applies and takes the new time;
	// a new key writes nothing and returns the current record.
	if applied, _ := deleteFact(t, r, ana, "a", t2, 2); !applied {
		t.Fatal("DeleteFact of a key with a tombstone at the bound: refused")
	}
	full := get(t, r, ana)
	if diff := cmp.Diff(map[string]time.Time{"a": t2, "pet": t1}, full.Tombstones); diff != "" {
		t.Errorf("tombstones at the bound (-want +got):\n%s", diff)
	}
	applied, cur = deleteFact(t, r, ana, "b", t2, 2)
	if applied {
		t.Fatal("DeleteFact of a new key at the bound: applied")
	}
	same(t, "current record at the bound", full, cur)
	same(t, "stored after a refused DeleteFact", full, get(t, r, ana))
}

func testClearFacts(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	threads := map[string]memory.ThreadMark{"th": {TurnCount: 2, At: t0}}
	v := save(t, r, ana, memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}, Threads: threads, Tombstones: map[string]time.Time{"b": t0}, ClearedAt: t0})
	if err := r.ClearFacts(ctx, ana, t1); err != nil {
		t.Fatal(err)
	}
	got := get(t, r, ana)
	v = newVersion(t, "ClearFacts", v, got)
	if got.Facts == nil || got.Tombstones == nil {
		t.Errorf("after ClearFacts: %+v, want empty, non-nil Facts and Tombstones", got)
	}
	same(t, "after ClearFacts", memory.Record{Version: v, Threads: threads, ClearedAt: t1}, got)

	// No record: a record that holds only the clear time.
	if err := r.ClearFacts(ctx, bob, t1); err != nil {
		t.Fatal(err)
	}
	got = get(t, r, bob)
	if got.Version == "" || got.Facts == nil {
		t.Errorf("ClearFacts on no record left %+v, want a record with empty facts", got)
	}
	same(t, "ClearFacts on no record", memory.Record{Version: got.Version, ClearedAt: t1}, got)
}

func testErase(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	v := save(t, r, ana, memory.Record{
		Facts:      []memory.Fact{fact("a", "1", t0), fact("b", "2", t0), {Key: "c", Value: "3", UpdatedAt: t0, Origin: memory.OriginConversation, SourceThreadID: "th"}},
		Threads:    map[string]memory.ThreadMark{"th": {TurnCount: 2, At: t0}},
		Tombstones: map[string]time.Time{"d": t0},
		ClearedAt:  t0,
	})
	n, err := r.Erase(ctx, ana, t1)
	if err != nil || n != 3 {
		t.Fatalf("Erase = %d, %v; want 3", n, err)
	}
	// The fence holds a version and the erasure time, nothing else.
	fence := get(t, r, ana)
	newVersion(t, "Erase", v, fence)
	if !fence.ErasedAt.Equal(t1) || fence.Facts != nil || fence.Threads != nil || fence.Tombstones != nil || !fence.ClearedAt.IsZero() {
		t.Errorf("fence = %+v, want a version and ErasedAt %v only", fence, t1)
	}
	// A save from before the erasure conflicts and sees the fence; so does
	// a creation.
	_, cur, err := r.Save(ctx, ana, memory.Record{Version: v, Facts: []memory.Fact{fact("a", "late", t2)}})
	if !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("Save from before the erasure: err = %v, want ErrConflict", err)
	}
	same(t, "current record of a save over a fence", fence, cur)
	if _, _, err := r.Save(ctx, ana, memory.Record{Facts: []memory.Fact{fact("a", "new", t2)}}); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("creation over a fence: err = %v, want ErrConflict", err)
	}
	// Erasing again counts nothing; erasing no record leaves a fence.
	if n, err := r.Erase(ctx, ana, t2); err != nil || n != 0 {
		t.Errorf("second Erase = %d, %v; want 0", n, err)
	}
	if n, err := r.Erase(ctx, bob, t1); err != nil || n != 0 {
		t.Errorf("Erase of no record = %d, %v; want 0", n, err)
	}
	if got := get(t, r, bob); got.Version == "" || !got.ErasedAt.Equal(t1) {
		t.Errorf("Erase of no record left %+v, want a fence", got)
	}
}

func testWritesOverAFence(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	for _, s := range []memory.Scope{ana, bob, otherAna} {
		if _, err := r.Erase(ctx, s, t0); err != nil {
			t.Fatal(err)
		}
	}
	// DeleteFact writes nothing on a fence and returns it.
	fence := get(t, r, ana)
	applied, cur := deleteFact(t, r, ana, "a", t1, 5)
	if applied {
		t.Fatal("DeleteFact on a fence: applied")
	}
	same(t, "current record of DeleteFact on a fence", fence, cur)
	// SetFact creates the facts; erasedAt stays.
	if applied, _ := setFact(t, r, ana, fact("a", "1", t1), 5); !applied {
		t.Fatal("SetFact on a fence: not applied")
	}
	got := get(t, r, ana)
	same(t, "SetFact over a fence", memory.Record{Version: got.Version, ErasedAt: t0, Facts: []memory.Fact{fact("a", "1", t1)}}, got)
	// ClearFacts too.
	if err := r.ClearFacts(ctx, bob, t1); err != nil {
		t.Fatal(err)
	}
	got = get(t, r, bob)
	same(t, "ClearFacts over a fence", memory.Record{Version: got.Version, ErasedAt: t0, ClearedAt: t1}, got)
	// A Save from the fence's version writes and keeps erasedAt.
	fence = get(t, r, otherAna)
	rec := fence
	rec.Facts = []memory.Fact{fact("a", "after", t1)}
	rec.Version = save(t, r, otherAna, rec)
	same(t, "Save over a fence", rec, get(t, r, otherAna))
	// Later writes keep erasedAt.
	if _, _, err := r.DeleteFact(ctx, otherAna, "a", t2, 5); err != nil {
		t.Fatal(err)
	}
	if err := r.ClearFacts(ctx, otherAna, t2); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, otherAna); !got.ErasedAt.Equal(t0) {
		t.Errorf("erasedAt after later writes = %v, want %v", got.ErasedAt, t0)
	}
}

// factWithEveryField returns a fact with every field of glass-box memory set: the
// user's words, when they were said, an end date, a category.
func factWithEveryField(key, value string, at time.Time) memory.Fact {
	return memory.Fact{Key: key, Value: value, UpdatedAt: at, SaidAt: at.Add(-4 * time.Minute), Origin: memory.OriginConversation,
		SourceThreadID: "th-9", SourceThreadTitle: "Checkup", Evidence: "my «doctor» said I'm diabetic ✓",
		ValidUntil: time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), Category: memory.Categories[0]}
}

func testGlassBoxFieldsRoundTrip(t *testing.T, r memory.Repository) {
	ends := t2.Add(24 * time.Hour)
	want := memory.Record{
		Facts:      []memory.Fact{factWithEveryField("trip", "Paris", t0), {Key: "city", Value: "Porto", UpdatedAt: t0, Origin: memory.OriginConversation, SourceThreadID: "th-9", Evidence: "I moved to Porto"}},
		Pending:    []memory.Fact{factWithEveryField("health", "diabetic", t1), factWithEveryField("faith", "buddhist", t1)},
		Tombstones: map[string]time.Time{},
		Expires:    ends,
	}
	want.Version = save(t, r, ana, want)
	same(t, "Get after Save of evidence, end dates, categories, pending facts and Expires", want, get(t, r, ana))

	// A fact set in place keeps its new fields; the others stay.
	f := factWithEveryField("mood", "tired", t1)
	f.ValidUntil, f.Category = time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), ""
	if applied, _ := setFact(t, r, ana, f, 10); !applied {
		t.Fatal("SetFact before Expires: not applied")
	}
	got := get(t, r, ana)
	want.Facts = append(want.Facts, f)
	want.Version = newVersion(t, "SetFact", want.Version, got)
	same(t, "after SetFact of a fact with an end date", want, got)

	// A lasting fact without evidence or category reads back without them.
	plain := fact("lang", "pt", t1)
	save(t, r, bob, memory.Record{Facts: []memory.Fact{plain}})
	if rec := get(t, r, bob); len(rec.Facts) != 1 || rec.Facts[0] != plain || len(rec.Pending) > 0 || !rec.Expires.IsZero() {
		t.Errorf("a plain record read back as %+v", rec)
	}
	// Save with no Expires drops it.
	got.Expires = time.Time{}
	got.Version = save(t, r, ana, got)
	if rec := get(t, r, ana); !rec.Expires.IsZero() {
		t.Errorf("Expires after a Save without it = %v, want zero", rec.Expires)
	}
}

func testWritesAfterExpires(t *testing.T, r memory.Repository) {
	ends := t2
	rec := memory.Record{Facts: []memory.Fact{fact("a", "1", t0), factWithEveryField("trip", "Paris", t0)}, Expires: ends}
	save(t, r, ana, rec)

	// Before Expires both writes apply.
	if applied, _ := setFact(t, r, ana, fact("b", "2", ends.Add(-time.Millisecond)), 10); !applied {
		t.Fatal("SetFact a millisecond before Expires: not applied")
	}
	if applied, _ := deleteFact(t, r, ana, "b", ends.Add(-time.Millisecond), 10); !applied {
		t.Fatal("DeleteFact a millisecond before Expires: not applied")
	}
	// At Expires and after, neither applies: they return the current
	// record and write nothing, so that the store's Save removes what
	// ended.
	for _, at := range []time.Time{ends, ends.Add(time.Hour)} {
		before := get(t, r, ana)
		applied, cur := setFact(t, r, ana, fact("a", "9", at), 10)
		if applied {
			t.Errorf("SetFact at %v, Expires %v: applied", at, ends)
		}
		same(t, "current record of a SetFact after Expires", before, cur)
		applied, cur = deleteFact(t, r, ana, "a", at, 10)
		if applied {
			t.Errorf("DeleteFact at %v, Expires %v: applied", at, ends)
		}
		same(t, "current record of a DeleteFact after Expires", before, cur)
		same(t, "stored after refused writes", before, get(t, r, ana))
	}
	// A Save that moves Expires on lets them apply again.
	cur := get(t, r, ana)
	cur.Expires = ends.Add(48 * time.Hour)
	save(t, r, ana, cur)
	if applied, _ := setFact(t, r, ana, fact("a", "9", ends.Add(time.Hour)), 10); !applied {
		t.Error("SetFact before a later Expires: not applied")
	}
	if applied, _ := deleteFact(t, r, ana, "a", ends.Add(time.Hour), 10); !applied {
		t.Error("DeleteFact before a later Expires: not applied")
	}
}

func testWritesRemovePending(t *testing.T, r memory.Repository) {
	health, faith := factWithEveryField("health", "diabetic", t0), factWithEveryField("faith", "buddhist", t0)
	v := save(t, r, ana, memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}, Pending: []memory.Fact{health, faith}})

	// SetFact of a pending key: the fact is set, its pending fact goes,
	// the other pending fact stays.
	kept := fact("health", "diabetic", t1)
	if applied, _ := setFact(t, r, ana, kept, 10); !applied {
		t.Fatal("SetFact of a pending key: not applied")
	}
	got := get(t, r, ana)
	v = newVersion(t, "SetFact", v, got)
	same(t, "after SetFact of a pending key", memory.Record{Version: v, Facts: []memory.Fact{fact("a", "1", t0), kept},
		Pending: []memory.Fact{faith}}, got)

	// DeleteFact of a pending key with no fact: the pending fact goes and
	// the tombstone comes.
	if applied, _ := deleteFact(t, r, ana, "faith", t2, 10); !applied {
		t.Fatal("DeleteFact of a pending key: not applied")
	}
	got = get(t, r, ana)
	v = newVersion(t, "DeleteFact", v, got)
	same(t, "after DeleteFact of a pending key", memory.Record{Version: v, Facts: []memory.Fact{fact("a", "1", t0), kept},
		Tombstones: map[string]time.Time{"faith": t2}}, got)

	// A key with neither a fact nor a pending fact changes no pending fact.
	save(t, r, bob, memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}, Pending: []memory.Fact{health}})
	if applied, _ := setFact(t, r, bob, fact("b", "2", t1), 10); !applied {
		t.Fatal("SetFact of another key: not applied")
	}
	if applied, _ := deleteFact(t, r, bob, "c", t1, 10); !applied {
		t.Fatal("DeleteFact of another key: not applied")
	}
	if got := get(t, r, bob); len(got.Pending) != 1 || got.Pending[0] != health {
		t.Errorf("pending facts after writes of other keys = %+v, want %+v", got.Pending, health)
	}
}

func testClearFactsClearsPending(t *testing.T, r memory.Repository) {
	threads := map[string]memory.ThreadMark{"th": {TurnCount: 2, At: t0}}
	v := save(t, r, ana, memory.Record{Facts: []memory.Fact{factWithEveryField("trip", "Paris", t0)}, Pending: []memory.Fact{factWithEveryField("health", "diabetic", t0)},
		Threads: threads, Expires: t2})
	if err := r.ClearFacts(context.Background(), ana, t1); err != nil {
		t.Fatal(err)
	}
	got := get(t, r, ana)
	v = newVersion(t, "ClearFacts", v, got)
	same(t, "after ClearFacts of a record with pending facts and Expires", memory.Record{Version: v, Threads: threads, ClearedAt: t1}, got)
	// Nothing ended any more: SetFact after the old Expires applies.
	if applied, _ := setFact(t, r, ana, fact("a", "1", t2.Add(time.Hour)), 10); !applied {
		t.Error("SetFact after a clear, past the Expires before it: not applied")
	}
}
