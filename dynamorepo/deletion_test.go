package dynamorepo_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestDeletionCost asserts the requests of a removal, a clear and the
// extractions they fence, through memory.Store on moto_server, and prints
// the item's size as tombstones accumulate: a user with 20 facts of
// typical length (keys of 11 characters, values of 30) removes 10 of them
// and 10 keys it never had, then an extraction runs.
func TestDeletionCost(t *testing.T) {
	f := newFixture(t)
	model := memorytest.NewModel()
	s := newStore(t, f, memory.Config{}, memory.WithModel(model), memory.WithClock(memorytest.StepClock(t0)))
	size := func() int { return dynamorepo.ItemSize(f.rawItem(t, "acme#u-1")) }
	for i := range 20 {
		if _, err := s.Put(ctx, scope, memory.FactInput{Key: fmt.Sprintf("fact_key_%02d", i), Value: strings.Repeat("v", 28) + fmt.Sprintf("%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	before := size()
	var removedAt time.Time
	for i := range 10 {
		f.step(t, "RemoveFact", reqUpdate, func() error { return s.RemoveFact(ctx, scope, fmt.Sprintf("fact_key_%02d", i)) })
		if i == 0 {
			removedAt = mustGet(t, f.repo, scope).Tombstones["fact_key_00"]
			f.count.take()
		}
	}
	afterRemovals := size()
	for i := range 10 { // keys never stored: a tombstone alone
		f.step(t, "RemoveFact of an absent key", reqUpdate, func() error { return s.RemoveFact(ctx, scope, fmt.Sprintf("gone_key_%02d", i)) })
	}
	afterAbsent := size()

	// Sent at the first removal: its SET of fact_key_00 is left out, the
	// other one applies; one read, one write.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("fact_key_00", "back"), set("pet", "cat")}})
	var res memory.ExtractResult
	f.step(t, "Extract after tombstones", reqReadSave, func() (err error) {
		res, err = s.Extract(ctx, extractReq("th-1", 0, 2, removedAt))
		return err
	})
	if res.Sets != 1 || res.Forgotten != 1 {
		t.Errorf("Extract after tombstones: %d sets, %d forgotten; want 1 and 1", res.Sets, res.Forgotten)
	}
	afterExtract := size()

	// At the bound of tombstones (default: maxFacts, 30), a removal merges
	// and saves the whole record.
	cfg := memory.Config{MaxTombstones: 10}
	bounded := newStore(t, f, cfg, memory.WithClock(func() time.Time { return t0.Add(time.Hour) }))
	f.step(t, "RemoveFact at the tombstone bound", reqRefusedSave, func() error { return bounded.RemoveFact(ctx, scope, "fact_key_10") })

	f.step(t, "Clear", reqUpdate, func() error { return s.Clear(ctx, scope) })
	cleared := mustGet(t, f.repo, scope).ClearedAt
	f.count.take()
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("pet", "cat")}})
	f.step(t, "Extract sent before the clear", reqRead, func() (err error) {
		res, err = s.Extract(ctx, extractReq("th-2", 0, 2, cleared))
		return err
	})
	if res.Outcome != memory.OutcomeCleared {
		t.Errorf("Extract sent before the clear: outcome %q, want cleared", res.Outcome)
	}
	other := memory.Scope{TenantID: "acme", UserID: "never"}
	f.step(t, "Clear of no record", reqUpdate, func() error { return s.Clear(ctx, other) })

	def := memory.Config{}.WithDefaults()
	one, two := def, def
	one.MaxTombstones, two.MaxTombstones = 1, 2
	t.Logf("item bytes: 20 facts %d; after 10 removals of stored facts %d (%+.1f a removal); after 10 removals of absent keys %d (%+.1f a tombstone); after the extraction %d",
		before, afterRemovals, float64(afterRemovals-before)/10, afterAbsent, float64(afterAbsent-afterRemovals)/10, afterExtract)
	t.Logf("bound of a full record under the defaults: %d bytes with %d tombstones, of which tombstones %d",
		def.MaxRecordBytes(), def.MaxTombstones, def.MaxTombstones*(two.MaxRecordBytes()-one.MaxRecordBytes()))
	T := docblock.Thousands
	docblock.Check(t, filepath.Join("..", "BENCHMARKS.md"), "item-bytes", fmt.Sprintf(
		"A user with 20 facts of typical length (11-character keys, 30-character values) has a %s-byte\n"+
			"item; removing a stored fact makes it %g bytes smaller (the fact goes, a tombstone comes); a\n"+
			"tombstone alone (a key never stored) adds %g bytes; the extraction after 20 tombstones writes a\n"+
			"%s-byte item. Worst case under the defaults of what is never trimmed (`Config.MaxRecordBytes`:\n"+
			"evidence, %d pending facts, %d import marks and %d declined digests included): %s bytes, of which\n"+
			"the %d tombstones %s, against the budget of %s; the facts' history and the pending facts of\n"+
			"imports take the room the record's real size (`memory.RecordBytes`) leaves.",
		T(before), float64(before-afterRemovals)/10, float64(afterAbsent-afterRemovals)/10, T(afterExtract),
		def.MaxPending, memory.MaxImports, memory.MaxDeclined, T(def.MaxRecordBytes()), def.MaxTombstones, T(def.MaxTombstones*(two.MaxRecordBytes()-one.MaxRecordBytes())),
		T(memory.ItemBudget)))
}
