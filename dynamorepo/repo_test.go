package dynamorepo_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/memory"
)

var (
	ctx   = context.Background()
	scope = memory.Scope{TenantID: "acme", UserID: "u-1"}
	// t0 is a time with whole milliseconds, as the table stores them.
	t0 = time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
)

func fact(key, value string, at time.Time) memory.Fact {
	return memory.Fact{Key: key, Value: value, UpdatedAt: at, Origin: memory.OriginManual}
}

// mustSave saves rec and fails the test on an error.
func mustSave(t *testing.T, r *dynamorepo.Repo, s memory.Scope, rec memory.Record) string {
	t.Helper()
	ver, _, err := r.Save(ctx, s, rec)
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	return ver
}

func mustGet(t *testing.T, r *dynamorepo.Repo, s memory.Scope) memory.Record {
	t.Helper()
	rec, err := r.Get(ctx, s)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return rec
}

func checkRequests(t *testing.T, c *counter, want string) {
	t.Helper()
	if got := c.take(); got != want {
		t.Errorf("requests = %q, want %q", got, want)
	}
}

func TestGetMissing(t *testing.T) {
	f := newFixture(t)
	rec := mustGet(t, f.repo, scope)
	if diff := cmp.Diff(memory.Record{}, rec); diff != "" {
		t.Errorf("Get of no item (-want +got):\n%s", diff)
	}
	checkRequests(t, f.count, "GetItem:1")
}

func TestSaveAndGetRoundTrip(t *testing.T) {
	f := newFixture(t)
	want := memory.Record{
		Facts: []memory.Fact{
			{Key: "home_city", Value: "Lisbon", UpdatedAt: t0, Origin: memory.OriginConversation, SourceThreadID: "th-9", SourceThreadTitle: "Moving to Lisbon"},
			{Key: "língua", Value: "português ✓", UpdatedAt: t0.Add(time.Second), Origin: memory.OriginManual},
			{Key: "x.y", Value: "a key with a dot", UpdatedAt: t0.Add(2 * time.Second), Origin: memory.OriginRememberTool},
		},
		Threads:    map[string]memory.ThreadMark{"th-9": {TurnCount: 6, At: t0}},
		ClearedAt:  t0.Add(-time.Hour),
		Tombstones: map[string]time.Time{"pet": t0.Add(-time.Minute), "a.b": t0},
	}
	ver := mustSave(t, f.repo, scope, want)
	checkRequests(t, f.count, "PutItem:1")
	if ver == "" {
		t.Fatal("Save returned an empty version")
	}
	got := mustGet(t, f.repo, scope)
	want.Version = ver
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Get after Save (-want +got):\n%s", diff)
	}
	// Another user of the tenant, and the same user ID in another tenant,
	// see nothing.
	for _, s := range []memory.Scope{{TenantID: "acme", UserID: "u-2"}, {TenantID: "other", UserID: "u-1"}} {
		if rec := mustGet(t, f.repo, s); rec.Version != "" || rec.Facts != nil {
			t.Errorf("Get(%+v) = %+v, want nothing", s, rec)
		}
	}
}

func TestSaveConditions(t *testing.T) {
	f := newFixture(t)
	v1 := mustSave(t, f.repo, scope, memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}})
	f.count.take()

	// "" means nothing stored: a second creation conflicts.
	_, cur, err := f.repo.Save(ctx, scope, memory.Record{Facts: []memory.Fact{fact("b", "2", t0)}})
	if !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("second creation: err = %v, want ErrConflict", err)
	}
	want := memory.Record{Version: v1, Facts: []memory.Fact{fact("a", "1", t0)}, Tombstones: map[string]time.Time{}}
	if diff := cmp.Diff(want, cur); diff != "" {
		t.Errorf("current record on conflict (-want +got):\n%s", diff)
	}
	checkRequests(t, f.count, "PutItem:1")

	// The right version writes; the old one then conflicts.
	v2, _, err := f.repo.Save(ctx, scope, memory.Record{Version: v1, Facts: []memory.Fact{fact("a", "9", t0)}})
	if err != nil || v2 == "" || v2 == v1 {
		t.Fatalf("Save with the stored version = %q, %v; want a new version", v2, err)
	}
	_, cur, err = f.repo.Save(ctx, scope, memory.Record{Version: v1, Facts: []memory.Fact{fact("a", "stale", t0)}})
	if !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("Save with a stale version: err = %v, want ErrConflict", err)
	}
	if cur.Version != v2 || len(cur.Facts) != 1 || cur.Facts[0].Value != "9" {
		t.Errorf("current record on conflict = %+v, want version %s with a=9", cur, v2)
	}
	// A version on a missing item conflicts with a zero current record.
	other := memory.Scope{TenantID: "acme", UserID: "nobody"}
	_, cur, err = f.repo.Save(ctx, other, memory.Record{Version: v1})
	if !errors.Is(err, memory.ErrConflict) || cur.Version != "" {
		t.Errorf("Save with a version on no item = %+v, %v; want ErrConflict and a zero record", cur, err)
	}
}

// The semantics of SetFact, DeleteFact and ClearFacts are the contract's
// (TestRepositoryContract); these tests hold their round trips and the
// stored form.

func TestSetFact(t *testing.T) {
	f := newFixture(t)

	// No record: two requests, the refused update and the creation.
	applied, _, err := f.repo.SetFact(ctx, scope, fact("a", "1", t0), 3)
	if err != nil || !applied {
		t.Fatalf("SetFact on no record = %v, %v; want applied", applied, err)
	}
	checkRequests(t, f.count, "UpdateItem:2")
	it := f.rawItem(t, "acme#u-1")
	if diff := cmp.Diff([]string{"facts", "pending", "pk", "removed", "ver"}, slices.Sorted(maps.Keys(it))); diff != "" {
		t.Errorf("created item attributes (-want +got):\n%s", diff)
	}
	v := mustGet(t, f.repo, scope).Version
	f.count.take()

	// Under the cap: a new key applies in one request, with a new version.
	for i, ft := range []memory.Fact{
		{Key: "b.c", Value: "dotted key", UpdatedAt: t0.Add(time.Second), Origin: memory.OriginRememberTool},
		{Key: "ключ", Value: "значение", UpdatedAt: t0.Add(2 * time.Second), Origin: memory.OriginConversation, SourceThreadID: "th-1", SourceThreadTitle: "Русский"},
	} {
		applied, _, err = f.repo.SetFact(ctx, scope, ft, 3)
		if err != nil || !applied {
			t.Fatalf("SetFact %d under the cap = %v, %v; want applied", i, applied, err)
		}
		checkRequests(t, f.count, "UpdateItem:1")
		rec := mustGet(t, f.repo, scope)
		f.count.take()
		if rec.Version == v {
			t.Errorf("SetFact %d kept version %s", i, v)
		}
		v = rec.Version
	}
	// At the cap: an existing key applies in one request; a new key is
	// refused in one.
	if applied, _, err = f.repo.SetFact(ctx, scope, fact("a", "2", t0.Add(3*time.Second)), 3); err != nil || !applied {
		t.Fatalf("SetFact of a stored key at the cap = %v, %v; want applied", applied, err)
	}
	checkRequests(t, f.count, "UpdateItem:1")
	if applied, _, err = f.repo.SetFact(ctx, scope, fact("d", "4", t0.Add(4*time.Second)), 3); err != nil || applied {
		t.Fatalf("SetFact of a new key at the cap = %v, %v; want not applied", applied, err)
	}
	checkRequests(t, f.count, "UpdateItem:1")

	// An item stored before tombstones existed (facts, no removed map) is
	// refused with its record, and a Save gives it the map.
	legacy := memory.Scope{TenantID: "acme", UserID: "legacy"}
	if _, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: map[string]types.AttributeValue{
		dynamorepo.KeyAttribute: &types.AttributeValueMemberS{Value: "acme#legacy"},
		"ver":                   &types.AttributeValueMemberS{Value: "v1"},
		"facts":                 &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
	}}); err != nil {
		t.Fatal(err)
	}
	f.count.take()
	applied, cur, err := f.repo.SetFact(ctx, legacy, fact("a", "1", t0), 3)
	if err != nil || applied || cur.Version != "v1" || cur.Tombstones != nil {
		t.Fatalf("SetFact on an item without a removed map = %v, %+v, %v; want refused with the record", applied, cur, err)
	}
	checkRequests(t, f.count, "UpdateItem:1")
	cur.Facts = []memory.Fact{fact("a", "1", t0)}
	mustSave(t, f.repo, legacy, cur)
	if _, ok := f.rawItem(t, "acme#legacy")["removed"]; !ok {
		t.Error("Save wrote no removed map")
	}

	// An item stored before pending facts existed (facts and removed, no
	// pending map) is refused by SetFact and DeleteFact with its record:
	// DynamoDB refuses to REMOVE pending.<key> without the map. A Save
	// gives it the map, after which both apply in place.
	old := memory.Scope{TenantID: "acme", UserID: "nopending"}
	if _, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: map[string]types.AttributeValue{
		dynamorepo.KeyAttribute: &types.AttributeValueMemberS{Value: "acme#nopending"},
		"ver":                   &types.AttributeValueMemberS{Value: "v1"},
		"facts":                 &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
		"removed":               &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
	}}); err != nil {
		t.Fatal(err)
	}
	f.count.take()
	applied, cur, err = f.repo.SetFact(ctx, old, fact("a", "1", t0), 3)
	if err != nil || applied || cur.Version != "v1" {
		t.Fatalf("SetFact on an item without a pending map = %v, %+v, %v; want refused with the record", applied, cur, err)
	}
	if applied, cur, err := f.repo.DeleteFact(ctx, old, "a", t0, 3); err != nil || applied || cur.Version != "v1" {
		t.Fatalf("DeleteFact on an item without a pending map = %v, %+v, %v; want refused with the record", applied, cur, err)
	}
	checkRequests(t, f.count, "UpdateItem:2")
	mustSave(t, f.repo, old, cur)
	if _, ok := f.rawItem(t, "acme#nopending")["pending"]; !ok {
		t.Error("Save wrote no pending map")
	}
	f.count.take()
	if applied, _, err := f.repo.SetFact(ctx, old, fact("a", "1", t0), 3); err != nil || !applied {
		t.Errorf("SetFact after the Save = %v, %v; want applied", applied, err)
	}
	checkRequests(t, f.count, "UpdateItem:1")
}

func TestDeleteFact(t *testing.T) {
	f := newFixture(t)
	at := t0.Add(time.Hour + 1500*time.Microsecond) // not a whole millisecond
	applied, cur, err := f.repo.DeleteFact(ctx, scope, "a", at, 2)
	if err != nil || applied || cur.Version != "" {
		t.Fatalf("DeleteFact on no record = %v, %+v, %v; want refused, zero record", applied, cur, err)
	}
	checkRequests(t, f.count, "UpdateItem:1")
	if it := f.rawItem(t, "acme#u-1"); it != nil {
		t.Fatalf("DeleteFact on no record wrote %v", it)
	}
	mustSave(t, f.repo, scope, memory.Record{Facts: []memory.Fact{fact("a", "1", t0), fact("b", "2", t0)}})
	f.count.take()

	// A stored key and an absent one: one request each, the tombstone
	// rounded up to the millisecond.
	for _, k := range []string{"a", "zzz"} {
		if applied, _, err := f.repo.DeleteFact(ctx, scope, k, at, 2); err != nil || !applied {
			t.Fatalf("DeleteFact(%s) = %v, %v; want applied", k, applied, err)
		}
		checkRequests(t, f.count, "UpdateItem:1")
	}
	removed := f.rawItem(t, "acme#u-1")["removed"].(*types.AttributeValueMemberM).Value
	want := strconv.FormatInt(t0.Add(time.Hour+2*time.Millisecond).UnixMilli(), 10)
	if got := removed["a"].(*types.AttributeValueMemberN).Value; got != want {
		t.Errorf("removed.a = %s, want %s", got, want)
	}
	// At the bound: a new tombstone is refused in one request.
	if applied, cur, err := f.repo.DeleteFact(ctx, scope, "b", at, 2); err != nil || applied || len(cur.Tombstones) != 2 {
		t.Fatalf("DeleteFact at the bound = %v, %+v, %v; want refused with the record", applied, cur, err)
	}
	checkRequests(t, f.count, "UpdateItem:1")
}

func TestClearFacts(t *testing.T) {
	f := newFixture(t)
	if err := f.repo.ClearFacts(ctx, scope, t0); err != nil {
		t.Fatalf("ClearFacts on no record: %v", err)
	}
	checkRequests(t, f.count, "UpdateItem:1")
	it := f.rawItem(t, "acme#u-1")
	if diff := cmp.Diff([]string{"clearedAt", "facts", "pending", "pk", "removed", "ver"}, slices.Sorted(maps.Keys(it))); diff != "" {
		t.Errorf("item of a clear on no record (-want +got):\n%s", diff)
	}
	// An empty record still takes a fact in one request.
	applied, _, err := f.repo.SetFact(ctx, scope, fact("b", "2", t0), 3)
	if err != nil || !applied {
		t.Errorf("SetFact on a cleared record = %v, %v; want applied", applied, err)
	}
	checkRequests(t, f.count, "UpdateItem:1")
}

func TestEraseAndFence(t *testing.T) {
	f := newFixture(t, dynamorepo.WithFenceLifetime(48*time.Hour))
	threads := map[string]memory.ThreadMark{"th-1": {TurnCount: 2, At: t0}}
	v1 := mustSave(t, f.repo, scope, memory.Record{
		Facts:   []memory.Fact{fact("a", "1", t0), fact("b", "2", t0), {Key: "c", Value: "3", UpdatedAt: t0, Origin: memory.OriginConversation, SourceThreadID: "th-1"}},
		Threads: threads,
	})
	f.count.take()

	at := t0.Add(time.Hour + 1500*time.Microsecond) // not a whole millisecond
	n, err := f.repo.Erase(ctx, scope, at)
	if err != nil || n != 3 {
		t.Fatalf("Erase = %d, %v; want 3", n, err)
	}
	checkRequests(t, f.count, "PutItem:1")

	// The fence holds the key, a version, the erasure time and its TTL:
	// nothing personal beyond the key.
	it := f.rawItem(t, "acme#u-1")
	if diff := cmp.Diff([]string{"erasedAt", "expiresAt", "pk", "ver"}, slices.Sorted(maps.Keys(it))); diff != "" {
		t.Errorf("fence attributes (-want +got):\n%s", diff)
	}
	wantExp := strconv.FormatInt(at.Add(48*time.Hour).Unix(), 10)
	if got := it[dynamorepo.TTLAttribute].(*types.AttributeValueMemberN).Value; got != wantExp {
		t.Errorf("fence expiresAt = %s, want %s", got, wantExp)
	}

	fence := mustGet(t, f.repo, scope)
	wantErased := t0.Add(time.Hour + 2*time.Millisecond) // rounded up
	if fence.Version == "" || fence.Version == v1 || !fence.ErasedAt.Equal(wantErased) || fence.Facts != nil || fence.Threads != nil {
		t.Errorf("Get of a fence = %+v, want a new version, ErasedAt %v and nothing else", fence, wantErased)
	}

	// A save from before the erasure conflicts and sees the fence.
	_, cur, err := f.repo.Save(ctx, scope, memory.Record{Version: v1, Facts: []memory.Fact{fact("a", "late", t0)}})
	if !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("Save with the pre-erasure version: err = %v, want ErrConflict", err)
	}
	if diff := cmp.Diff(fence, cur); diff != "" {
		t.Errorf("current record on conflict (-want +got):\n%s", diff)
	}
	// So does a creation.
	if _, _, err := f.repo.Save(ctx, scope, memory.Record{Facts: []memory.Fact{fact("a", "new", t0)}}); !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("Save with no version over a fence: err = %v, want ErrConflict", err)
	}
	// DeleteFact writes nothing on a fence.
	f.count.take()
	applied, cur, err := f.repo.DeleteFact(ctx, scope, "a", at, 5)
	if err != nil || applied {
		t.Fatalf("DeleteFact on a fence = %v, %v; want refused", applied, err)
	}
	if diff := cmp.Diff(fence, cur); diff != "" {
		t.Errorf("DeleteFact on a fence: current (-want +got):\n%s", diff)
	}
	checkRequests(t, f.count, "UpdateItem:1")
	if got := mustGet(t, f.repo, scope); got.Version != fence.Version {
		t.Errorf("the fence changed: %+v", got)
	}

	// A save from a fresh read writes, keeps erasedAt and drops the TTL.
	rec := fence
	rec.Facts = []memory.Fact{fact("a", "after", t0.Add(2*time.Hour))}
	v3 := mustSave(t, f.repo, scope, rec)
	it = f.rawItem(t, "acme#u-1")
	if _, ok := it[dynamorepo.TTLAttribute]; ok {
		t.Errorf("a record saved over a fence kept %s", dynamorepo.TTLAttribute)
	}
	got := mustGet(t, f.repo, scope)
	if got.Version != v3 || !got.ErasedAt.Equal(wantErased) || len(got.Facts) != 1 {
		t.Errorf("record over a fence = %+v, want version %s, ErasedAt %v, one fact", got, v3, wantErased)
	}
	// Later writes keep erasedAt.
	if _, _, err := f.repo.SetFact(ctx, scope, fact("b", "2", t0), 5); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.repo.DeleteFact(ctx, scope, "a", at, 5); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.ClearFacts(ctx, scope, at); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, f.repo, scope); !got.ErasedAt.Equal(wantErased) {
		t.Errorf("ErasedAt after later writes = %v, want %v", got.ErasedAt, wantErased)
	}

	// Erasing no record leaves a fence and counts nothing.
	other := memory.Scope{TenantID: "acme", UserID: "never"}
	if n, err := f.repo.Erase(ctx, other, at); err != nil || n != 0 {
		t.Errorf("Erase of no record = %d, %v; want 0", n, err)
	}
	if got := mustGet(t, f.repo, other); got.ErasedAt.IsZero() {
		t.Errorf("Erase of no record left no fence: %+v", got)
	}
}

func TestEmptyNamesAndInvalidScopes(t *testing.T) {
	f := newFixture(t)
	mustSave(t, f.repo, scope, memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}})
	f.count.take()
	if _, _, err := f.repo.SetFact(ctx, scope, fact("", "v", t0), 5); err == nil {
		t.Error("SetFact with an empty key: no error")
	}
	if _, _, err := f.repo.DeleteFact(ctx, scope, "", t0, 5); err == nil {
		t.Error("DeleteFact with an empty key: no error")
	}
	rec := mustGet(t, f.repo, scope)
	f.count.take()
	bad := rec
	bad.Facts = append(bad.Facts, fact("", "v", t0))
	if _, _, err := f.repo.Save(ctx, scope, bad); err == nil {
		t.Error("Save with an empty fact key: no error")
	}
	bad = rec
	bad.Threads = map[string]memory.ThreadMark{"": {TurnCount: 1, At: t0}}
	if _, _, err := f.repo.Save(ctx, scope, bad); err == nil {
		t.Error("Save with an empty thread ID: no error")
	}
	for _, s := range []memory.Scope{{TenantID: "acme", UserID: "a#b"}, {TenantID: "a/b", UserID: "u"}, {TenantID: "", UserID: "u"}} {
		if _, err := f.repo.Get(ctx, s); memory.ErrorCode(err) != memory.CodeInvalidID {
			t.Errorf("Get(%+v): err = %v, want CodeInvalidID", s, err)
		}
		if _, _, err := f.repo.SetFact(ctx, s, fact("a", "1", t0), 5); memory.ErrorCode(err) != memory.CodeInvalidID {
			t.Errorf("SetFact(%+v): err = %v, want CodeInvalidID", s, err)
		}
		if _, _, err := f.repo.DeleteFact(ctx, s, "a", t0, 5); memory.ErrorCode(err) != memory.CodeInvalidID {
			t.Errorf("DeleteFact(%+v): err = %v, want CodeInvalidID", s, err)
		}
		if err := f.repo.ClearFacts(ctx, s, t0); memory.ErrorCode(err) != memory.CodeInvalidID {
			t.Errorf("ClearFacts(%+v): err = %v, want CodeInvalidID", s, err)
		}
		if _, err := f.repo.Erase(ctx, s, t0); memory.ErrorCode(err) != memory.CodeInvalidID {
			t.Errorf("Erase(%+v): err = %v, want CodeInvalidID", s, err)
		}
		if _, _, err := f.repo.Save(ctx, s, memory.Record{}); memory.ErrorCode(err) != memory.CodeInvalidID {
			t.Errorf("Save(%+v): err = %v, want CodeInvalidID", s, err)
		}
	}
	checkRequests(t, f.count, "")
}

// TestStorageFailures checks that every operation returns an error, never
// an empty result, when the table is missing or the endpoint is closed.
func TestStorageFailures(t *testing.T) {
	port, err := motoserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	closed := newClient("http://127.0.0.1:"+strconv.Itoa(port), nil, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	repos := map[string]*dynamorepo.Repo{
		"missing table":   dynamorepo.New(newClient(endpoint(t), nil), "no-such-table"),
		"closed endpoint": dynamorepo.New(closed, "memory"),
	}
	for name, r := range repos {
		t.Run(name, func(t *testing.T) {
			if rec, err := r.Get(ctx, scope); err == nil {
				t.Errorf("Get = %+v, nil; want an error", rec)
			}
			if ok, rec, err := r.SetFact(ctx, scope, fact("a", "1", t0), 5); err == nil {
				t.Errorf("SetFact = %v, %+v, nil; want an error", ok, rec)
			}
			if ok, rec, err := r.DeleteFact(ctx, scope, "a", t0, 5); err == nil {
				t.Errorf("DeleteFact = %v, %+v, nil; want an error", ok, rec)
			}
			if err := r.ClearFacts(ctx, scope, t0); err == nil {
				t.Error("ClearFacts = nil; want an error")
			}
			if n, err := r.Erase(ctx, scope, t0); err == nil {
				t.Errorf("Erase = %d, nil; want an error", n)
			}
			if v, rec, err := r.Save(ctx, scope, memory.Record{}); err == nil || errors.Is(err, memory.ErrConflict) {
				t.Errorf("Save = %q, %+v, %v; want a storage error", v, rec, err)
			}
			// Through the store, the failure is a repository error.
			s, err := memory.New(r, memory.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if facts, err := s.GetFacts(ctx, scope); memory.ErrorCode(err) != memory.CodeRepository {
				t.Errorf("GetFacts = %v, %v; want CodeRepository", facts, err)
			}
		})
	}
}
