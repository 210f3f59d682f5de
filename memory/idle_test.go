package memory

import (
	"fmt"
	"testing"
	"time"
)

// TestAddTailKeepsTheNewest: over MaxTails the oldest tails go, never the
// one just noted; a tail older than TailLifetime goes too.
func TestAddTailKeepsTheNewest(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	tails := map[string]Tail{}
	for i := range MaxTails {
		tails[fmt.Sprintf("th-%02d", i)] = Tail{TurnCount: 3, SentAt: now.Add(-time.Duration(MaxTails-i) * time.Minute)}
	}
	// The new tail is sent before every other (a late message), yet kept.
	got := addTail(tails, "th-new", Tail{TurnCount: 4, SentAt: now.Add(-time.Hour)}, now)
	if len(got) != MaxTails {
		t.Fatalf("%d tails, want %d", len(got), MaxTails)
	}
	if _, ok := got["th-new"]; !ok {
		t.Error("the tail just noted was dropped")
	}
	if _, ok := got["th-00"]; ok {
		t.Error("the oldest tail was kept over the cap")
	}
	if len(tails) != MaxTails {
		t.Error("addTail changed its argument")
	}
	old := map[string]Tail{"th-old": {TurnCount: 3, SentAt: now.Add(-TailLifetime)}}
	if got := addTail(old, "th-1", Tail{TurnCount: 4, SentAt: now}, now); len(got) != 1 {
		t.Errorf("tails = %v, want the tail past TailLifetime gone", got)
	}
}

// TestReadTail: an extraction removes the tail it read, a counted one only
// up to its turn count.
func TestReadTail(t *testing.T) {
	tails := map[string]Tail{"th": {TurnCount: 5}}
	for _, c := range []struct {
		req  ExtractRequest
		kept bool
	}{
		{ExtractRequest{TurnCount: 4}, true},
		{ExtractRequest{TurnCount: 5}, false},
		{ExtractRequest{TurnCount: 6}, false},
		{ExtractRequest{Uncounted: true}, false},
	} {
		_, kept := readTail(tails, "th", c.req)["th"]
		if kept != c.kept {
			t.Errorf("after %+v: tail kept %v, want %v", c.req, kept, c.kept)
		}
	}
	if len(tails) != 1 {
		t.Error("readTail changed its argument")
	}
}
