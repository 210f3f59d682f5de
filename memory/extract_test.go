package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

func extractReq(sc memory.Scope, thread string, prev, count int, texts ...string) memory.ExtractRequest {
	req := memory.ExtractRequest{Scope: sc, ThreadID: thread, PreviousTurnCount: prev, TurnCount: count, SentAt: t0.Add(time.Hour)}
	for i, text := range texts {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		req.Turns = append(req.Turns, memory.Turn{Role: role, Text: text})
	}
	return req
}

func set(k, v string) memory.Operation { return memory.Operation{Op: memory.OpSet, Key: k, Value: v} }
func del(k string) memory.Operation    { return memory.Operation{Op: memory.OpDelete, Key: k} }

func TestExtractMerges(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(
		memorytest.Answer{Operations: []memory.Operation{set("Name", "Ana"), set("home city", "Lisbon"), set("preferred_language", "Portuguese")},
			Usage: memory.Usage{InputTokens: 300, OutputTokens: 40}},
		memorytest.Answer{Operations: []memory.Operation{set("name", "Ana"), del("home_city"), set("role", "nurse"), del("never_there")}},
	)
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "Hi, I'm Ana from Lisbon, answer in Portuguese", "Olá Ana!")
	req.ThreadTitle = "  Weekend\nin Lisbon  "
	res, err := s.Extract(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != memory.OutcomeChanged || res.Sets != 3 || res.ModelCalls != 1 || res.Usage.InputTokens != 300 {
		t.Errorf("first result = %+v", res)
	}
	first := values(res.Facts)
	if diff := cmp.Diff(map[string]string{"name": "Ana", "home_city": "Lisbon", "preferred_language": "Portuguese"}, first); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	nameBefore := res.Facts[indexOf(res.Facts, "name")]
	if nameBefore.SourceThreadID != "th-1" || nameBefore.Origin != memory.OriginConversation || nameBefore.SourceThreadTitle != "Weekend in Lisbon" {
		t.Errorf("source = %q %q %q, want th-1, conversation, the title cleaned to one line",
			nameBefore.SourceThreadID, nameBefore.Origin, nameBefore.SourceThreadTitle)
	}

	res, err = s.Extract(ctx, extractReq(memorytest.Ana, "th-2", 6, 8, "I no longer live anywhere fixed; I'm a nurse", "Noted."))
	if err != nil {
		t.Fatal(err)
	}
	if res.Sets != 2 || res.Deletes != 1 {
		t.Errorf("second result sets=%d deletes=%d, want 2 (role, and name confirmed) and 1", res.Sets, res.Deletes)
	}
	if diff := cmp.Diff(map[string]string{"name": "Ana", "preferred_language": "Portuguese", "role": "nurse"}, values(res.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	// A fact repeated unchanged by another thread is confirmed by it: that
	// thread becomes its source.
	nameAfter := res.Facts[indexOf(res.Facts, "name")]
	if !nameAfter.UpdatedAt.After(nameBefore.UpdatedAt) || nameAfter.SourceThreadID != "th-2" || nameAfter.SourceThreadTitle != "" {
		t.Errorf("confirmed fact did not move to th-2: before %+v, after %+v", nameBefore, nameAfter)
	}
	if got := repo.Calls("Get"); got != 2 {
		t.Errorf("Get calls = %d, want 1 per extraction", got)
	}
	if got := repo.Calls("Save"); got != 2 {
		t.Errorf("Save calls = %d, want 1 per extraction", got)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if rec.Threads["th-1"].TurnCount != 2 || rec.Threads["th-2"].TurnCount != 8 {
		t.Errorf("watermarks = %+v", rec.Threads)
	}
}

func indexOf(facts []memory.Fact, key string) int {
	for i, f := range facts {
		if f.Key == key {
			return i
		}
	}
	return -1
}

func TestExtractPromptHoldsFactsAndTranscriptNotToolTurns(t *testing.T) {
	model := memorytest.NewModel()
	s, _ := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	ctx := context.Background()
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "Portuguese"}); err != nil {
		t.Fatal(err)
	}
	req := extractReq(memorytest.Ana, "th-1", 0, 3, "I moved to Porto")
	req.Turns = append(req.Turns, memory.Turn{Role: memory.RoleTool, Text: "TOOL-SECRET"})
	req.CheapModelID = "override-model"
	req.Meta.RequestID = "req-1"
	if _, err := s.Extract(ctx, req); err != nil {
		t.Fatal(err)
	}
	r := model.Requests()[0]
	if !strings.Contains(r.System, `- "language": "Portuguese"`) {
		t.Errorf("system prompt misses the known fact:\n%s", r.System)
	}
	if r.Transcript != "User: I moved to Porto" {
		t.Errorf("transcript = %q", r.Transcript)
	}
	if r.ModelID != "override-model" || r.Meta.Kind != memory.KindMemoryUser || r.Meta.RequestID != "req-1" || r.Meta.TenantID != "acme" {
		t.Errorf("request = %+v", r)
	}
	if r.Tool.Name != memory.OperationsToolName || r.MaxOperations != memory.DefaultMaxOperations {
		t.Errorf("tool = %q, maxOps = %d", r.Tool.Name, r.MaxOperations)
	}
}

func TestExtractFailuresWriteNothing(t *testing.T) {
	long := strings.Repeat("x", 500)
	tests := []struct {
		name    string
		answer  memorytest.Answer
		outcome memory.Outcome
		code    int64
	}{
		{"model error", memorytest.Answer{Err: errors.New("throttled")}, memory.OutcomeModelFailed, memory.CodeModelFailed},
		{"malformed", memorytest.Answer{Err: memory.ErrMalformedAnswer}, memory.OutcomeBadAnswer, memory.CodeBadAnswer},
		{"unknown op", memorytest.Answer{Operations: []memory.Operation{set("a", "b"), {Op: "UPSERT", Key: "c", Value: "d"}}}, memory.OutcomeBadAnswer, memory.CodeBadAnswer},
		{"empty key", memorytest.Answer{Operations: []memory.Operation{set("!!", "b")}}, memory.OutcomeBadAnswer, memory.CodeBadAnswer},
		{"empty value", memorytest.Answer{Operations: []memory.Operation{set("a", "  ")}}, memory.OutcomeBadAnswer, memory.CodeBadAnswer},
		{"too many ops", memorytest.Answer{Operations: manyOps(61)}, memory.OutcomeBadAnswer, memory.CodeBadAnswer},
		{"long value is cut, not refused", memorytest.Answer{Operations: []memory.Operation{set("bio", long)}}, memory.OutcomeChanged, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			model := memorytest.NewModel(tt.answer)
			s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
			if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "Portuguese"}); err != nil {
				t.Fatal(err)
			}
			before, _ := repo.Record(memorytest.Ana)
			res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "hello"))
			if err != nil {
				t.Fatalf("Extract returned an error for a model failure: %v", err)
			}
			if res.Outcome != tt.outcome || memory.ErrorCode(res.Reported) != tt.code {
				t.Fatalf("outcome %q reported %v, want %q code %d", res.Outcome, res.Reported, tt.outcome, tt.code)
			}
			after, _ := repo.Record(memorytest.Ana)
			if tt.code != 0 {
				if after.Version != before.Version {
					t.Error("a failed extraction wrote")
				}
				if diff := cmp.Diff(map[string]string{"language": "Portuguese"}, values(res.Facts)); diff != "" {
					t.Errorf("returned facts (-want +got):\n%s", diff)
				}
				return
			}
			bio := after.Facts[indexOf(after.Facts, "bio")].Value
			if len([]rune(bio)) != memory.DefaultMaxFactChars {
				t.Errorf("bio has %d runes, want cut at %d", len([]rune(bio)), memory.DefaultMaxFactChars)
			}
		})
	}
}

func manyOps(n int) []memory.Operation {
	ops := make([]memory.Operation, n)
	for i := range ops {
		ops[i] = set("k", "v")
	}
	return ops
}

type gate struct {
	allow bool
	used  []memory.Usage
}

func (g *gate) Allow(context.Context, memory.CallMeta) bool { return g.allow }
func (g *gate) Record(_ context.Context, _ memory.CallMeta, u memory.Usage) {
	g.used = append(g.used, u)
}

func TestExtractSilentPaths(t *testing.T) {
	ctx := context.Background()

	t.Run("disabled", func(t *testing.T) {
		model := memorytest.NewModel()
		s, _ := newStore(t, memory.Config{EvidenceCheckOff: true, ExtractionDisabled: true}, memory.WithModel(model))
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "pt"}); err != nil {
			t.Fatalf("edits must still work when extraction is off: %v", err)
		}
		res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "hi"))
		if err != nil || res.Outcome != memory.OutcomeDisabled || len(res.Facts) != 1 || model.Calls() != 0 {
			t.Errorf("res = %+v, %v, calls %d", res, err, model.Calls())
		}
		if s.IsExtractDue(0, 2) {
			t.Error("due while disabled")
		}
	})
	t.Run("no turns", func(t *testing.T) {
		model := memorytest.NewModel()
		s, _ := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
		res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2))
		if err != nil || res.Outcome != memory.OutcomeNoTurns || model.Calls() != 0 {
			t.Errorf("res = %+v, %v", res, err)
		}
	})
	t.Run("refused by the usage gate", func(t *testing.T) {
		model := memorytest.NewModel()
		g := &gate{}
		s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model), memory.WithUsageGate(g))
		res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "hi"))
		if err != nil || res.Outcome != memory.OutcomeRefused || res.Reported != nil || model.Calls() != 0 || repo.Calls("Save") != 0 {
			t.Errorf("res = %+v, %v", res, err)
		}
	})
	t.Run("usage recorded", func(t *testing.T) {
		model := memorytest.NewModel(memorytest.Answer{Usage: memory.Usage{InputTokens: 7}, Err: errors.New("boom")})
		g := &gate{allow: true}
		s, _ := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model), memory.WithUsageGate(g))
		if _, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "hi")); err != nil {
			t.Fatal(err)
		}
		if len(g.used) != 1 || g.used[0].InputTokens != 7 {
			t.Errorf("recorded usage = %+v", g.used)
		}
	})
}

func TestExtractRedeliveryCostsNoModelCall(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}})
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	req := extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana")
	if _, err := s.Extract(ctx, req); err != nil {
		t.Fatal(err)
	}
	before, _ := repo.Record(memorytest.Ana)
	res, err := s.Extract(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != memory.OutcomeDuplicate || model.Calls() != 1 || len(res.Facts) != 1 {
		t.Errorf("redelivery: %+v, model calls %d", res, model.Calls())
	}
	if after, _ := repo.Record(memorytest.Ana); after.Version != before.Version {
		t.Error("redelivery wrote")
	}
	// An older message of the same thread is a duplicate too.
	if res, _ := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 1, "I'm Ana")); res.Outcome != memory.OutcomeDuplicate {
		t.Errorf("older message: %q", res.Outcome)
	}
}

func TestExtractAfterErasureWritesNothing(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}})
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "name", Value: "Ana"}); err != nil {
		t.Fatal(err)
	}
	sentBefore := extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana")
	sentBefore.SentAt = t0 // the fake clock is past t0 at erasure
	if _, err := s.DeleteByUser(ctx, memorytest.Ana, memory.Retention{}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Extract(ctx, sentBefore)
	if err != nil || res.Outcome != memory.OutcomeFenced || model.Calls() != 0 || len(res.Facts) != 0 {
		t.Fatalf("res = %+v, %v, calls %d", res, err, model.Calls())
	}
	if rec, _ := repo.Record(memorytest.Ana); len(rec.Facts) != 0 {
		t.Errorf("facts came back: %+v", rec.Facts)
	}
	// The erasure lands between the read and the write of an extraction.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}})
	if _, err := s.Put(ctx, memorytest.Bob, memory.FactInput{Key: "x", Value: "y"}); err != nil {
		t.Fatal(err)
	}
	req := extractReq(memorytest.Bob, "th-9", 0, 2, "I'm Bob")
	req.SentAt = t0.Add(2500 * time.Millisecond) // after bob's first write, before the erasure below
	repo.BeforeSave = func() {
		repo.BeforeSave = nil
		if _, err := s.DeleteByUser(ctx, memorytest.Bob, memory.Retention{}); err != nil {
			t.Error(err)
		}
	}
	res, err = s.Extract(ctx, req)
	if err != nil || res.Outcome != memory.OutcomeFenced {
		t.Fatalf("res = %+v, %v", res, err)
	}
	if rec, _ := repo.Record(memorytest.Bob); len(rec.Facts) != 0 {
		t.Errorf("facts came back after erasure: %+v", rec.Facts)
	}
	// A message sent after the erasure writes.
	model.Push(memorytest.Answer{Operations: []memory.Operation{set("name", "Bob")}})
	later := extractReq(memorytest.Bob, "th-10", 0, 2, "I'm Bob")
	later.SentAt = t0.Add(time.Hour)
	if res, err := s.Extract(ctx, later); err != nil || res.Outcome != memory.OutcomeChanged {
		t.Errorf("after erasure, a new message: %+v, %v", res, err)
	}
}

func TestExtractConflictReMergesWithoutModelCall(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}})
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "a", Value: "1"}); err != nil {
		t.Fatal(err)
	}
	repo.BeforeSave = func() {
		repo.BeforeSave = nil
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: "language", Value: "pt"}); err != nil {
			t.Error(err)
		}
	}
	res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "I'm Ana"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "language": "pt", "name": "Ana"}, values(res.Facts)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if model.Calls() != 1 {
		t.Errorf("model calls = %d, want 1", model.Calls())
	}
	if diff := cmp.Diff(res.Facts, mustFacts(t, s, memorytest.Ana)); diff != "" {
		t.Errorf("stored differs from returned (-ret +stored):\n%s", diff)
	}
}

func TestExtractCapsAndBadRequests(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("c", "3"), set("d", "4")}})
	s, _ := newStore(t, memory.Config{EvidenceCheckOff: true, MaxFacts: 3}, memory.WithModel(model))
	for _, k := range []string{"a", "b"} {
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: k, Value: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Extract(ctx, extractReq(memorytest.Ana, "th-1", 0, 2, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "c", "d"}, keys(res.Facts)); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		req  memory.ExtractRequest
		code int64
	}{
		{extractReq(memorytest.Ana, "th/1", 0, 2, "hi"), memory.CodeInvalidID},
		{extractReq(memorytest.Ana, "th-1", 3, 2, "hi"), memory.CodeInvalidTurnCount},
		{extractReq(memory.Scope{TenantID: "acme", UserID: "a#b"}, "th-1", 0, 2, "hi"), memory.CodeInvalidID},
	} {
		if _, err := s.Extract(ctx, tt.req); memory.ErrorCode(err) != tt.code {
			t.Errorf("Extract(%+v) = %v, want code %d", tt.req.Scope, err, tt.code)
		}
	}
}
