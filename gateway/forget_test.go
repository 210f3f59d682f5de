package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/memory"
)

// TestForgetThreadForgetsWhatTheChatTaught: deleting a chat forgets the
// fact and the pending facts its thread taught, and leaves a fact set by
// hand; the prompt no longer holds the forgotten fact.
func TestForgetThreadForgetsWhatTheChatTaught(t *testing.T) {
	ctx := context.Background()
	g, store := pendingSetup(t)
	if _, err := store.Put(ctx, ana, memory.FactInput{Key: "language", Value: "Portuguese"}); err != nil {
		t.Fatal(err)
	}
	got, err := g.ForgetThread(ctx, g.NewThread(ana, "th-1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Facts) != 1 || got.Facts[0].Key != "name" || len(got.Pending) != 2 || got.ThreadID != "th-1" || got.At.IsZero() {
		t.Errorf("forgotten = %+v, want name and the two pending facts of th-1", got)
	}
	prompt, err := g.SystemPrompt(ctx, ana)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(prompt, "Ana") || !strings.Contains(prompt, `"language": "Portuguese"`) {
		t.Errorf("prompt after the forget = %q, want the manual fact alone", prompt)
	}
	if pending, err := g.Pending(ctx, ana); err != nil || len(pending) != 0 {
		t.Errorf("pending after the forget = %v, %v; want none", pending, err)
	}
}
