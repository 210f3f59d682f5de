package memory_test

import (
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/memory"
)

func TestTranscript(t *testing.T) {
	turns := []memory.Turn{
		{Role: memory.RoleUser, Text: "Hi, I'm Ana"},
		{Role: memory.RoleTool, Text: `{"secret":"tool output"}`},
		{Role: memory.RoleAssistant, Text: "Hello Ana!"},
		{Role: memory.RoleUser, Text: "  "},
	}
	got := memory.Transcript(turns, 1000)
	want := "User: Hi, I'm Ana\n\nAssistant: Hello Ana!"
	if got != want {
		t.Errorf("Transcript = %q, want %q", got, want)
	}
}

func TestTranscriptDropsOldestFirstWithinBudget(t *testing.T) {
	var turns []memory.Turn
	for i := range 200 {
		turns = append(turns, memory.Turn{Role: memory.RoleUser, Text: strings.Repeat("x", 90) + string(rune('a'+i%26))})
	}
	turns = append(turns, memory.Turn{Role: memory.RoleUser, Text: "the newest turn"})
	for _, budget := range []int{500, 2000, 5000} {
		got := memory.Transcript(turns, budget)
		if n := len([]rune(got)); n > budget {
			t.Errorf("budget %d: transcript has %d runes", budget, n)
		}
		if !strings.HasSuffix(got, "User: the newest turn") {
			t.Errorf("budget %d: newest turn missing at the end", budget)
		}
	}
}

func TestRenderPromptGolden(t *testing.T) {
	golden(t, "memory_user_prompt.golden", memory.RenderPrompt(memory.DefaultPrompt, hostileFacts, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)))
	golden(t, "memory_user_prompt_empty.golden", memory.RenderPrompt(memory.DefaultPrompt, nil, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)))
}
