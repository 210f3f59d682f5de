package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// TestMemoryUpdatedAndUndo: the gateway lists what th-1's extraction set
// (name, not the pending facts), and Undo takes it out of the prompt; a
// second Undo does nothing.
func TestMemoryUpdatedAndUndo(t *testing.T) {
	ctx := context.Background()
	g, _ := pendingSetup(t)
	th := g.NewThread(ana, "th-1")
	got, err := g.Changes(ctx, th, time.Now().Add(-time.Hour))
	if err != nil || len(got) != 1 || got[0].Key != "name" || got[0].Value != "Ana" || got[0].HadPrevious {
		t.Fatalf("changes = %+v, %v; want name = Ana, new", got, err)
	}
	if u, err := g.Undo(ctx, th, "name"); err != nil || u != (memory.Undo{Key: "name", Removed: true}) {
		t.Errorf("Undo = %+v, %v; want name removed", u, err)
	}
	prompt, err := g.SystemPrompt(ctx, ana)
	if err != nil || strings.Contains(prompt, "Ana") {
		t.Errorf("prompt after the undo = %q, %v; want no name", prompt, err)
	}
	if u, err := g.Undo(ctx, th, "name"); err != nil || u != (memory.Undo{Key: "name"}) {
		t.Errorf("second Undo = %+v, %v; want nothing undone", u, err)
	}
}
