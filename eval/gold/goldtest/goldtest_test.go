package goldtest_test

import (
	"slices"
	"testing"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/gold/goldtest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestDueCounts checks the counts against the store's beat: with an
// extraction every 2 turns, calls of 2, 1, 2 and 3 turns end at 2, 3, 5
// and 8 turns, and the store finds due the messages that cross a
// multiple of 2.
func TestDueCounts(t *testing.T) {
	store, err := memory.New(memorytest.NewRepo(), memory.Config{ExtractEveryTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := gold.Conversation{Turns: []gold.Turn{
		{Role: "user", Text: "a"}, {Role: "assistant", Text: "b"},
		{Role: "user", Text: "c"},
		{Role: "user", Text: "d"}, {Role: "assistant", Text: "e"},
		{Role: "user", Text: "f"}, {Role: "tool", Text: "g"}, {Role: "assistant", Text: "h"},
	}}
	var want []int
	for _, span := range [][2]int{{0, 2}, {2, 3}, {3, 5}, {5, 8}} {
		if store.IsExtractDue(span[0], span[1]) {
			want = append(want, span[1])
		}
	}
	if got := goldtest.DueCounts(store, c); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("DueCounts = %v, want %v", got, want)
	}
}
