package repotest

import (
	"context"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// testImportsRoundTrip: the import marks (Record.Imports, in their order)
// and the declined digests (Record.Declined) are stored by Save with every
// field, and imported pending facts with their origin; SetFact and
// DeleteFact keep them; ClearFacts and Erase remove them.
func testImportsRoundTrip(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	marks := []memory.ImportMark{
		{ID: "imp-1764453600000-abcdefghijklmnop", Source: "Gemini ✨", RequestedAt: t1, DoneAt: t2, Status: memory.ImportDone, Parts: 3, Proposed: 12,
			LeftOut: memory.ImportLeftOut{Secrets: 1, Instructions: 2, Unsupported: 3, Ended: 4, Known: 5, Declined: 6, Deletes: 7}},
		{ID: "imp-2", Source: "ChatGPT", RequestedAt: t0, DoneAt: t1, Status: memory.ImportRefused, Reason: "daily_imports"},
		{ID: "imp-3", Source: "Claude", RequestedAt: t0, DoneAt: t0, Status: memory.ImportFailed, Reason: "bad_answer", Parts: 1},
	}
	declined := map[string]time.Time{memory.DeclinedDigest("city", "Porto"): t1, memory.DeclinedDigest("role", "nurse"): t2}
	imported := memory.Fact{Key: "name", Value: "Ana", UpdatedAt: t2, Origin: memory.OriginImported, SourceThreadID: "imp-2",
		SourceThreadTitle: "ChatGPT", Evidence: "The user's name is Ana", SaidAt: t1, Category: "health"}
	rec := memory.Record{Facts: []memory.Fact{fact("a", "1", t0)}, Pending: []memory.Fact{imported}, Tombstones: map[string]time.Time{},
		Imports: marks, Declined: declined}
	v := save(t, r, ana, rec)
	rec.Version = v
	same(t, "after Save", rec, get(t, r, ana))

	if ok, _ := setFact(t, r, ana, fact("b", "2", t2), 10); !ok {
		t.Fatal("SetFact did not apply")
	}
	if ok, _ := deleteFact(t, r, ana, "a", t2, 10); !ok {
		t.Fatal("DeleteFact did not apply")
	}
	got := get(t, r, ana)
	same(t, "imports after SetFact and DeleteFact", memory.Record{Imports: marks, Declined: declined, Pending: rec.Pending},
		memory.Record{Imports: got.Imports, Declined: got.Declined, Pending: got.Pending})

	if err := r.ClearFacts(ctx, ana, t2); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, ana); len(got.Imports) != 0 || len(got.Declined) != 0 || len(got.Pending) != 0 {
		t.Errorf("after ClearFacts: imports %+v, declined %+v, pending %+v, want none", got.Imports, got.Declined, got.Pending)
	}
	save(t, r, bob, memory.Record{Facts: rec.Facts, Tombstones: map[string]time.Time{}, Imports: marks, Declined: declined})
	if _, err := r.Erase(ctx, bob, t2); err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, bob); len(got.Imports) != 0 || len(got.Declined) != 0 {
		t.Errorf("after Erase: imports %+v, declined %+v, want none", got.Imports, got.Declined)
	}
}

// listModel answers every call with the same operations.
type listModel struct{ ops []memory.Operation }

func (m listModel) Extract(context.Context, memory.ModelRequest) (memory.ModelAnswer, error) {
	return memory.ModelAnswer{Operations: m.ops}, nil
}

// testStoreImport: the store's import over the repository: proposed,
// marked, a duplicate, discard-all remembered as declined, a re-import
// proposing nothing, keep-all.
func testStoreImport(t *testing.T, r memory.Repository) {
	ctx := context.Background()
	now := t0
	model := listModel{ops: []memory.Operation{
		{Op: memory.OpSet, Key: "home_city", Value: "Porto", Evidence: "Lives in Porto"},
		{Op: memory.OpSet, Key: "role", Value: "nurse", Evidence: "Works as a nurse"},
	}}
	s, err := memory.New(r, memory.Config{}, memory.WithModel(model), memory.WithClock(func() time.Time { now = now.Add(time.Second); return now }))
	if err != nil {
		t.Fatal(err)
	}
	req := memory.ImportRequest{Scope: ana, ImportID: "imp-1", Source: "ChatGPT", Text: "- Lives in Porto\n- Works as a nurse", SentAt: t0}
	res, err := s.Import(ctx, req)
	if err != nil || res.Outcome != memory.OutcomeChanged || res.Mark.Proposed != 2 {
		t.Fatalf("Import = %+v, %v; want 2 proposed", res, err)
	}
	if res, err := s.Import(ctx, req); err != nil || res.Outcome != memory.OutcomeDuplicate {
		t.Errorf("Import again = %+v, %v; want a duplicate", res, err)
	}
	if m, ok, err := s.ImportStatusOf(ctx, ana, "imp-1"); err != nil || !ok || m.Proposed != 2 || m.Source != "ChatGPT" {
		t.Errorf("ImportStatusOf = %+v, %v, %v", m, ok, err)
	}
	if n, err := s.DiscardImport(ctx, ana, "imp-1"); err != nil || n != 2 {
		t.Fatalf("DiscardImport = %d, %v", n, err)
	}
	req.ImportID, req.SentAt = "imp-2", now
	res, err = s.Import(ctx, req)
	if err != nil || res.Mark.Proposed != 0 || res.Mark.LeftOut.Declined != 2 {
		t.Errorf("re-import after discard = %+v, %v; want 2 declined", res, err)
	}
	if err := r.ClearFacts(ctx, ana, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	req.ImportID, req.SentAt = "imp-3", now
	if res, err := s.Import(ctx, req); err != nil || res.Mark.Proposed != 2 {
		t.Fatalf("import after a clear = %+v, %v; want 2 proposed (the clear removed the declined)", res, err)
	}
	kept, err := s.KeepImport(ctx, ana, "imp-3")
	if err != nil || len(kept) != 2 {
		t.Fatalf("KeepImport = %+v, %v", kept, err)
	}
	facts, err := s.GetFacts(ctx, ana)
	if err != nil || len(facts) != 2 || facts[0].Origin != memory.OriginImported || facts[0].SourceThreadID != "imp-3" {
		t.Errorf("facts after KeepImport = %+v, %v", facts, err)
	}
}
