package memory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestExportHoldsEverythingStored shows that an export reads the facts,
// the tombstones, the clear's and the erasure's times and the watermarks
// as stored, sorted, and for no one else.
func TestExportHoldsEverythingStored(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	repo.Put(memorytest.Ana, memory.Record{
		Facts: []memory.Fact{{Key: "role", Value: "nurse", UpdatedAt: at(3)},
			{Key: "home_city", Value: "Lisbon", UpdatedAt: at(2), SourceThreadID: "th-1"}},
		Threads:    map[string]memory.ThreadMark{"th-2": {TurnCount: 4, At: at(5)}, "th-1": {TurnCount: 2, At: at(2)}},
		Tombstones: map[string]time.Time{"pet": at(4), "age": at(1)},
		ClearedAt:  at(0), ErasedAt: at(-10),
		History: map[string][]memory.PreviousValue{"home_city": {{Value: "Porto", ReplacedAt: at(2),
			Origin: memory.OriginConversation, ThreadID: "th-1"}}},
		Pending: []memory.Fact{{Key: "name", Value: "Ana", UpdatedAt: at(6), Origin: memory.OriginImported, SourceThreadID: "imp-2", SourceThreadTitle: "ChatGPT"}},
		Imports: []memory.ImportMark{{ID: "imp-2", Source: "ChatGPT", RequestedAt: at(5), DoneAt: at(6), Status: memory.ImportDone, Parts: 1, Proposed: 1},
			{ID: "imp-1", Source: "Gemini", RequestedAt: at(1), DoneAt: at(1), Status: memory.ImportRefused, Reason: "daily_imports"}},
		Declined: map[string]time.Time{memory.DeclinedDigest("home_city", "Porto"): at(3)},
	})
	repo.Put(memorytest.Bob, memory.Record{Facts: []memory.Fact{{Key: "language", Value: "German", UpdatedAt: at(1)}}})
	got, err := s.Export(ctx, memorytest.Ana)
	if err != nil {
		t.Fatal(err)
	}
	want := memory.Export{
		At: got.At,
		Facts: []memory.Fact{{Key: "home_city", Value: "Lisbon", UpdatedAt: at(2), SourceThreadID: "th-1"},
			{Key: "role", Value: "nurse", UpdatedAt: at(3)}},
		History: []memory.FactHistory{{Key: "home_city", Previous: []memory.PreviousValue{{Value: "Porto", ReplacedAt: at(2),
			Origin: memory.OriginConversation, ThreadID: "th-1"}}}},
		Pending:   []memory.Fact{{Key: "name", Value: "Ana", UpdatedAt: at(6), Origin: memory.OriginImported, SourceThreadID: "imp-2", SourceThreadTitle: "ChatGPT"}},
		Forgotten: []memory.ForgottenKey{{Key: "age", At: at(1)}, {Key: "pet", At: at(4)}},
		ClearedAt: at(0), ErasedAt: at(-10),
		Threads: []memory.Watermark{{ThreadKey: "th-1", TurnCount: 2, At: at(2)}, {ThreadKey: "th-2", TurnCount: 4, At: at(5)}},
		Imports: []memory.ImportMark{{ID: "imp-2", Source: "ChatGPT", RequestedAt: at(5), DoneAt: at(6), Status: memory.ImportDone, Parts: 1, Proposed: 1},
			{ID: "imp-1", Source: "Gemini", RequestedAt: at(1), DoneAt: at(1), Status: memory.ImportRefused, Reason: "daily_imports"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("export (-want +got):\n%s", diff)
	}
	if !got.At.After(t0) {
		t.Errorf("export at %v, want a reading of the store's clock after %v", got.At, t0)
	}
	if n := repo.Calls("Save") + repo.Calls("SetFact") + repo.Calls("DeleteFact") + repo.Calls("ClearFacts") + repo.Calls("Erase"); n != 0 {
		t.Errorf("an export wrote %d times, want none", n)
	}
}

// TestExportOfNoRecord shows that a user with nothing stored gets empty
// lists, not nil ones, and zero times.
func TestExportOfNoRecord(t *testing.T) {
	s, _ := newStore(t, memory.Config{EvidenceCheckOff: true})
	got, err := s.Export(context.Background(), memorytest.Bob)
	if err != nil {
		t.Fatal(err)
	}
	if got.Facts == nil || got.Forgotten == nil || got.Threads == nil || got.Imports == nil || len(got.Facts)+len(got.Forgotten)+len(got.Threads)+len(got.Imports) != 0 {
		t.Errorf("export of no record: %+v, want empty non-nil lists", got)
	}
	if !got.ClearedAt.IsZero() || !got.ErasedAt.IsZero() {
		t.Errorf("export of no record: clearedAt %v, erasedAt %v; want zero", got.ClearedAt, got.ErasedAt)
	}
}

// TestExportRefuses shows that an invalid scope is a 400 and a failing
// repository a repository error.
func TestExportRefuses(t *testing.T) {
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	var e *memory.Error
	if _, err := s.Export(context.Background(), memory.Scope{TenantID: "acme", UserID: "a/b"}); !errors.As(err, &e) || e.Code != memory.CodeInvalidID {
		t.Errorf("invalid user ID: %v, want CodeInvalidID", err)
	}
	repo.Fail = memorytest.ErrInjected
	if _, err := s.Export(context.Background(), memorytest.Ana); !errors.As(err, &e) || e.Code != memory.CodeRepository {
		t.Errorf("failing repository: %v, want CodeRepository", err)
	}
}

// TestEraseSaysWhatRemains shows that an erasure's answer counts the facts
// removed and dates the end of the backups' and the messages' windows from
// the erasure's time, the fence's.
func TestEraseSaysWhatRemains(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	for _, k := range []string{"a", "b"} {
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: k, Value: "v"}); err != nil {
			t.Fatal(err)
		}
	}
	day := 24 * time.Hour
	r := memory.Retention{Backups: 14 * day, Queue: 4 * day, DeadLetterQueue: 10 * day}
	got, err := s.DeleteByUser(ctx, memorytest.Ana, r)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := repo.Record(memorytest.Ana)
	want := memory.Erasure{RemovedFacts: 2, At: rec.ErasedAt, BackupsUntil: rec.ErasedAt.Add(14 * day), MessagesUntil: rec.ErasedAt.Add(14 * day)}
	if got != want || rec.ErasedAt.IsZero() {
		t.Errorf("erasure %+v, want %+v", got, want)
	}
	r.DeadLetterQueue = day
	if got, _ := s.DeleteByUser(ctx, memorytest.Ana, r); got.RemovedFacts != 0 || !got.MessagesUntil.Equal(got.At.Add(5*day)) {
		t.Errorf("second erasure %+v, want 0 facts and messages until 5 days after %v", got, got.At)
	}
}
