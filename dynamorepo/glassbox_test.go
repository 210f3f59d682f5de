package dynamorepo_test

import (
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestGlassBoxOnDynamoDB runs the core's temporary and pending facts on
// the repository and asserts the requests each step makes and what the
// item holds: a fact that ended is no longer read and leaves the item at
// the next write (a put or a removal), a whole-record write; a pending
// fact is kept or discarded in one read and one write.
func TestGlassBoxOnDynamoDB(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	model := memorytest.NewModel()
	s := newStore(t, f, memory.Config{}, memory.WithModel(model), memory.WithClock(clock))
	item := func() map[string]types.AttributeValue { return f.rawItem(t, scope.TenantID+"#"+scope.UserID) }
	facts := func() *types.AttributeValueMemberM { return item()["facts"].(*types.AttributeValueMemberM) }

	// A temporary fact is a whole-record write (one read, one PutItem),
	// which sets endsAt; a lasting fact before that end, one UpdateItem.
	f.step(t, "Put of a fact until today", reqReadSave, func() error {
		_, err := s.Put(ctx, scope, memory.FactInput{Key: "trip", Value: "Paris", Origin: memory.OriginManual, ValidUntil: "2026-12-02"})
		return err
	})
	f.step(t, "Put of a lasting fact", reqUpdate, func() error {
		_, err := s.Put(ctx, scope, memory.FactInput{Key: "name", Value: "Ana", Origin: memory.OriginManual})
		return err
	})
	if u, ok := facts().Value["trip"].(*types.AttributeValueMemberM).Value["u"]; !ok || u.(*types.AttributeValueMemberN).Value != "1796169600000" {
		t.Errorf("trip's end date u = %v, want 1796169600000 (2026-12-02, midnight UTC)", u)
	}

	// An extraction writes the whole record: two pending facts, and endsAt.
	model.Push(memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "health_condition", Value: "asthma", Evidence: "I have asthma", Category: memory.CategoryHealth},
		{Op: memory.OpSet, Key: "allergies", Value: "peanuts", Evidence: "a peanut allergy", Category: memory.CategoryHealth}}})
	req := extractReq("th-1", 0, 2, now)
	req.Turns = []memory.Turn{{Role: memory.RoleUser, Text: "I have asthma and a peanut allergy"}}
	f.step(t, "Extract of two health facts", reqReadSave, func() error { _, err := s.Extract(ctx, req); return err })
	if _, ok := item()["endsAt"]; !ok {
		t.Fatal("the record's whole write stored no endsAt")
	}

	// The next day the trip has ended: not read, still in the item, and
	// the next write, refused in place, is a whole-record write that
	// drops it.
	advance(24 * time.Hour)
	m, err := s.GetFactsAndPending(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Facts) != 1 || m.Facts[0].Key != "name" || len(m.Pending) != 2 {
		t.Errorf("GetFactsAndPending after the trip's end = %+v, want name and two pending facts", m)
	}
	if _, ok := facts().Value["trip"]; !ok {
		t.Fatal("the ended fact left the item before any write")
	}
	f.step(t, "Put after the end", reqRefusedSave, func() error {
		_, err := s.Put(ctx, scope, memory.FactInput{Key: "role", Value: "nurse", Origin: memory.OriginManual})
		return err
	})
	if _, ok := facts().Value["trip"]; ok {
		t.Error("the ended fact is still in the item after the next write")
	}

	keepAndDiscard(t, f, s, item)

	// A removal once a fact ended is refused in place too, then saves
	// the whole record without what ended.
	f.step(t, "Put of a fact until today", reqReadSave, func() error {
		_, err := s.Put(ctx, scope, memory.FactInput{Key: "trip", Value: "Porto", Origin: memory.OriginManual, ValidUntil: "2026-12-03"})
		return err
	})
	advance(24 * time.Hour)
	f.step(t, "RemoveFact after the end", reqRefusedSave, func() error { return s.RemoveFact(ctx, scope, "name") })
	if _, ok := facts().Value["trip"]; ok {
		t.Error("the ended fact is still in the item after the removal")
	}
}

// keepAndDiscard is the pending part of TestGlassBoxOnDynamoDB: a keep is
// one read and one whole-record write, the fact keeping its evidence; so
// is a discard, and a discard of nothing pending is one read, no write.
func keepAndDiscard(t *testing.T, f *fixture, s *memory.Store, item func() map[string]types.AttributeValue) {
	t.Helper()
	// Keep: one read, one whole-record write; the fact keeps its evidence.
	f.step(t, "KeepPending", reqReadSave, func() error {
		kept, err := s.KeepPending(ctx, scope, "health_condition")
		if err == nil && (kept.Evidence != "I have asthma" || kept.Category != memory.CategoryHealth) {
			t.Errorf("kept fact %+v, want its evidence and category", kept)
		}
		return err
	})
	f.step(t, "DiscardPending", reqReadSave, func() error { return s.DiscardPending(ctx, scope, "allergies") })
	if p := item()["pending"].(*types.AttributeValueMemberM); len(p.Value) != 0 {
		t.Errorf("pending after the keep and the discard = %v, want empty", p.Value)
	}
	f.step(t, "DiscardPending of nothing", reqRead, func() error { return s.DiscardPending(ctx, scope, "religion") })
}
