package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
)

// pendingSetup returns a gateway whose store has extracted, from one user
// turn, a lasting fact and two facts of special categories, which wait.
func pendingSetup(t *testing.T) (*gateway.Gateway, *memory.Store) {
	t.Helper()
	ctx := context.Background()
	const said = "I'm Ana, I have type 1 diabetes and I go to mass every Sunday."
	extractor := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "name", Value: "Ana", Evidence: "I'm Ana"},
		{Op: memory.OpSet, Key: "health_condition", Value: "type 1 diabetes", Evidence: "I have type 1 diabetes", Category: memory.CategoryHealth},
		{Op: memory.OpSet, Key: "religion", Value: "Catholic", Evidence: "I go to mass every Sunday", Category: memory.CategoryReligion},
	}})
	store, err := memory.New(memorytest.NewRepo(), memory.Config{}, memory.WithModel(extractor))
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Extract(ctx, memory.ExtractRequest{Scope: ana, ThreadID: "th-1", TurnCount: 2, SentAt: time.Now(),
		Turns: []memory.Turn{{Role: memory.RoleUser, Text: said}, {Role: memory.RoleAssistant, Text: "Thanks, Ana."}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending != 2 || res.Sets != 1 {
		t.Fatalf("extraction: %d pending, %d sets; want 2 and 1", res.Pending, res.Sets)
	}
	g, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(&queue{}, "https://sqs.local/1/q.fifo"), Model: &model{}, ModelID: "chat-model"})
	if err != nil {
		t.Fatal(err)
	}
	return g, store
}

// TestPendingFactsWaitForTheUser: the gateway lists the pending facts with
// their category, evidence and end of wait; none is in the prompt until
// the user keeps it; a discarded one is gone; keeping what is not pending
// is a 404.
func TestPendingFactsWaitForTheUser(t *testing.T) {
	ctx := context.Background()
	g, store := pendingSetup(t)
	pending, err := g.Pending(ctx, ana)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || pending[0].Key != "health_condition" || pending[1].Key != "religion" {
		t.Fatalf("pending = %+v, want health_condition and religion, sorted", pending)
	}
	health := pending[0]
	if health.Category != memory.CategoryHealth || health.Evidence != "I have type 1 diabetes" ||
		!health.Until.Equal(health.UpdatedAt.Add(memory.DefaultPendingLifetime)) {
		t.Errorf("pending health fact = %+v, want its category, evidence and an end of wait %s after it was learned",
			health, memory.DefaultPendingLifetime)
	}
	prompt, err := g.SystemPrompt(ctx, ana)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prompt, `"name": "Ana"`) || strings.Contains(prompt, "diabetes") || strings.Contains(prompt, "Catholic") {
		t.Errorf("prompt before any yes = %q, want the name and no pending fact", prompt)
	}

	kept, err := g.Keep(ctx, ana, "health_condition")
	if err != nil {
		t.Fatal(err)
	}
	if kept.Value != "type 1 diabetes" || kept.Evidence != "I have type 1 diabetes" {
		t.Errorf("kept = %+v, want the value and evidence of the pending fact", kept)
	}
	if err := g.Discard(ctx, ana, "religion"); err != nil {
		t.Fatal(err)
	}
	if err := g.Discard(ctx, ana, "religion"); err != nil {
		t.Errorf("a second discard: %v, want none (idempotent)", err)
	}
	if _, err := g.Keep(ctx, ana, "religion"); memory.ErrorCode(err) != memory.CodePendingNotFound {
		t.Errorf("keep after discard: %v, want code %d", err, memory.CodePendingNotFound)
	}
	prompt, _ = g.SystemPrompt(ctx, ana)
	if !strings.Contains(prompt, `"health_condition": "type 1 diabetes"`) || strings.Contains(prompt, "Catholic") {
		t.Errorf("prompt after keep and discard = %q, want the kept fact and not the discarded one", prompt)
	}
	m, err := store.GetFactsAndPending(ctx, ana)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Pending) != 0 || len(m.Facts) != 2 {
		t.Errorf("after the answers: %d pending, %d facts; want 0 and 2", len(m.Pending), len(m.Facts))
	}
}
