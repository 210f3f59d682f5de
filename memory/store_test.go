package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

var t0 = time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)

func newStore(t *testing.T, cfg memory.Config, opts ...memory.Option) (*memory.Store, *memorytest.Repo) {
	t.Helper()
	repo := memorytest.NewRepo()
	s, err := memory.New(repo, cfg, append([]memory.Option{memory.WithClock(memorytest.StepClock(t0))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s, repo
}

func keys(facts []memory.Fact) []string {
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = f.Key
	}
	return out
}

func values(facts []memory.Fact) map[string]string {
	out := map[string]string{}
	for _, f := range facts {
		out[f.Key] = f.Value
	}
	return out
}

func mustFacts(t *testing.T, s *memory.Store, sc memory.Scope) []memory.Fact {
	t.Helper()
	facts, err := s.GetFacts(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	return facts
}

func TestGetFactsOfUnknownUserIsEmpty(t *testing.T) {
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	facts, err := s.GetFacts(context.Background(), memorytest.Ana)
	if err != nil || facts == nil || len(facts) != 0 {
		t.Fatalf("GetFacts = %v, %v; want an empty slice", facts, err)
	}
	if n := repo.Calls("Get"); n != 1 {
		t.Errorf("Get calls = %d, want 1", n)
	}
}

func TestPut(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, memory.Config{EvidenceCheckOff: true, MaxFactChars: 20})
	f, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "  Home City ", Value: "  Lisbon "})
	if err != nil {
		t.Fatal(err)
	}
	if f.Key != "home_city" || f.Value != "Lisbon" || f.SourceThreadID != "" || f.UpdatedAt.IsZero() || f.Origin != memory.OriginManual {
		t.Errorf("Put = %+v", f)
	}
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "home-city", Value: "Porto"}); err != nil {
		t.Fatal(err)
	}
	got := mustFacts(t, s, memorytest.Ana)
	if diff := cmp.Diff(map[string]string{"home_city": "Porto"}, values(got)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if len(mustFacts(t, s, memorytest.Bob)) != 0 || len(mustFacts(t, s, memorytest.OtherAna)) != 0 {
		t.Error("another user or tenant sees ana's facts")
	}
}

func TestPutErrors(t *testing.T) {
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true, MaxFactChars: 20})
	tests := []struct {
		name       string
		sc         memory.Scope
		key, value string
		code       int64
		userMsg    bool
	}{
		{"empty key", memorytest.Ana, "  ", "x", memory.CodeEmptyFact, true},
		{"separators only", memorytest.Ana, "-_. .", "x", memory.CodeEmptyFact, true},
		{"punctuation key", memorytest.Ana, "!!", "x", memory.CodeInvalidKeyChars, true},
		{"key a canonical form would rewrite", memorytest.Ana, "Bad Key!", "x", memory.CodeInvalidKeyChars, true},
		{"key with a slash", memorytest.Ana, "city/town", "x", memory.CodeInvalidKeyChars, true},
		{"empty value", memorytest.Ana, "k", " \t ", memory.CodeEmptyFact, true},
		{"long value", memorytest.Ana, "k", strings.Repeat("é", 21), memory.CodeFactTooLong, true},
		{"long key", memorytest.Ana, strings.Repeat("k", 21), "v", memory.CodeFactTooLong, true},
		{"bad tenant", memory.Scope{TenantID: "a#b", UserID: "u"}, "k", "v", memory.CodeInvalidID, false},
		{"bad user", memory.Scope{TenantID: "a", UserID: ""}, "k", "v", memory.CodeInvalidID, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Put(context.Background(), tt.sc, memory.FactInput{Key: tt.key, Value: tt.value})
			var e *memory.Error
			if !errors.As(err, &e) || e.Code != tt.code {
				t.Fatalf("err = %v, want code %d", err, tt.code)
			}
			if tt.userMsg && e.UserMessage == "" {
				t.Error("no userMessage")
			}
		})
	}
	if n := repo.Calls("SetFact") + repo.Calls("Save"); n != 0 {
		t.Errorf("%d writes for bad input, want 0", n)
	}
	// Exactly at the cap is accepted, counted in runes.
	if _, err := s.Put(context.Background(), memorytest.Ana, memory.FactInput{Key: "k", Value: strings.Repeat("é", 20)}); err != nil {
		t.Errorf("value of exactly MaxFactChars runes: %v", err)
	}
}

// TestTooLongSaysAtMost: exactly MaxFactChars is accepted, so the message
// says "at most", never "under".
func TestTooLongSaysAtMost(t *testing.T) {
	s, _ := newStore(t, memory.Config{EvidenceCheckOff: true, MaxFactChars: 20})
	_, err := s.Put(context.Background(), memorytest.Ana, memory.FactInput{Key: "bio", Value: strings.Repeat("a", 30)})
	var e *memory.Error
	const want = "This is too long to remember: it can have at most 20 characters (it has 30)."
	if !errors.As(err, &e) || e.UserMessage != want {
		t.Errorf("err = %v, want the userMessage %q", err, want)
	}
}

// TestPutRecordsOrigin: a write by hand records the origin it names
// (manual when it names none), and refuses any other than manual and
// remember_tool.
func TestPutRecordsOrigin(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	f, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "pet", Value: "a cat", Origin: memory.OriginRememberTool})
	if err != nil || f.Origin != memory.OriginRememberTool {
		t.Fatalf("Put = %+v, %v", f, err)
	}
	if got := mustFacts(t, s, memorytest.Ana); len(got) != 1 || got[0].Origin != memory.OriginRememberTool {
		t.Errorf("stored %+v, want one fact of origin remember_tool", got)
	}
	writes := repo.Calls("SetFact") + repo.Calls("Save")
	for _, o := range []memory.Origin{memory.OriginConversation, "api"} {
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "pet", Value: "a dog", Origin: o}); memory.ErrorCode(err) != memory.CodeInvalidOrigin {
			t.Errorf("origin %q: err = %v, want CodeInvalidOrigin", o, err)
		}
	}
	if n := repo.Calls("SetFact") + repo.Calls("Save"); n != writes {
		t.Errorf("%d writes for a bad origin, want 0", n-writes)
	}
	if f, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "pet", Value: "a dog"}); err != nil || f.Origin != memory.OriginManual {
		t.Errorf("Put with no origin = %+v, %v; want a fact of origin manual", f, err)
	}
}

func TestPutOverCapDropsLeastRecentlyUpdated(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true, MaxFacts: 3})
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: k, Value: "v-" + k}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "a", Value: "v-a2"}); err != nil { // a is now the newest
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "d", Value: "v-d"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "c", "d"}, keys(mustFacts(t, s, memorytest.Ana))); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	// The first write creates the record in SetFact; writes under the cap
	// are SetFact only; the new key at the cap merges and saves.
	if got, want := repo.Calls("SetFact"), 5; got != want {
		t.Errorf("SetFact calls = %d, want %d", got, want)
	}
	if got, want := repo.Calls("Save"), 1; got != want {
		t.Errorf("Save calls = %d, want %d (the new key over the cap)", got, want)
	}
}

func TestPutRetriesConflicts(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true, MaxFacts: 1, MaxConflictRetries: 3})
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "a", Value: "1"}); err != nil {
		t.Fatal(err)
	}
	races := 0
	repo.BeforeSave = func() {
		if races < 2 {
			races++
			repo.Put(memorytest.Ana, memory.Record{Facts: []memory.Fact{{Key: fmt.Sprint("x", races), Value: "v", UpdatedAt: t0}}})
		}
	}
	f, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "b", Value: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]memory.Fact{f}, mustFacts(t, s, memorytest.Ana)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	// A writer that always wins makes the write fail with a conflict.
	repo.BeforeSave = func() {
		repo.Put(memorytest.Ana, memory.Record{Facts: []memory.Fact{{Key: "z", Value: "v", UpdatedAt: t0}}})
	}
	_, err = s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "c", Value: "3"})
	if memory.ErrorCode(err) != memory.CodeConflict {
		t.Errorf("err = %v, want CodeConflict", err)
	}
}

func TestRepositoryFailureIsAnErrorNeverEmpty(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	repo.Fail = memorytest.ErrInjected
	if facts, err := s.GetFacts(ctx, memorytest.Ana); err == nil || facts != nil {
		t.Errorf("GetFacts = %v, %v; want an error", facts, err)
	}
	_, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "k", Value: "v"})
	if memory.ErrorCode(err) != memory.CodeRepository || !errors.Is(err, memorytest.ErrInjected) {
		t.Errorf("Put = %v, want a repository error wrapping the cause", err)
	}
	if err := s.RemoveFact(ctx, memorytest.Ana, "k"); err == nil {
		t.Error("RemoveFact: no error")
	}
	if err := s.Clear(ctx, memorytest.Ana); err == nil {
		t.Error("Clear: no error")
	}
	if _, err := s.DeleteByUser(ctx, memorytest.Ana, memory.Retention{}); err == nil {
		t.Error("DeleteByUser: no error")
	}
	if _, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "hi")); err == nil {
		t.Error("Extract: no error")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	_, err := memory.New(memorytest.NewRepo(), memory.Config{MaxFacts: 100000})
	if memory.ErrorCode(err) != memory.CodeInvalidConfig {
		t.Errorf("New = %v, want an invalid config error", err)
	}
}
