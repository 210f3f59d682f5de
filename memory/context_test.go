package memory_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

func u(text string) memory.Turn { return memory.Turn{Role: memory.RoleUser, Text: text} }
func a(text string) memory.Turn { return memory.Turn{Role: memory.RoleAssistant, Text: text} }

func TestContextTurnsKeepsTheNewestWithinBudget(t *testing.T) {
	long := strings.Repeat("blah ", 100) + "Shall I keep answering in Portuguese from now on?"
	tests := []struct {
		name     string
		turns    []memory.Turn
		maxChars int
		want     []memory.Turn
	}{
		{"all fit", []memory.Turn{u(" hi "), a("hello")}, 100, []memory.Turn{u("hi"), a("hello")}},
		{"tool and blank turns left out", []memory.Turn{u("hi"), {Role: memory.RoleTool, Text: "secret"}, a("  ")}, 100, []memory.Turn{u("hi")}},
		// "User: hi" (8) + 2 + "Assistant: hello" (16) = 26: the oldest goes first.
		{"oldest dropped", []memory.Turn{u("hi"), a("hello")}, 25, []memory.Turn{a("hello")}},
		{"crossing turn keeps its end", []memory.Turn{u("I'm in Lisbon"), a(long)}, 120,
			[]memory.Turn{a("…" + long[len(long)-(120-len("Assistant: ")-1):])}},
		{"crossing turn with too little room dropped", []memory.Turn{u(strings.Repeat("x", 200)), a("ok")}, 80, []memory.Turn{a("ok")}},
		{"no budget", []memory.Turn{u("hi")}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := memory.TranscriptTurns(tt.turns, tt.maxChars)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ContextTurns (-want +got):\n%s", diff)
			}
			if again := memory.TranscriptTurns(got, tt.maxChars); !cmp.Equal(got, again) {
				t.Errorf("not idempotent: %q, then %q", got, again)
			}
			if n := utf8.RuneCountInString(memory.Transcript(got, math.MaxInt32)); n > tt.maxChars {
				t.Errorf("kept %d characters of transcript, over the budget of %d", n, tt.maxChars)
			}
		})
	}
}

func TestExtractionTranscriptMarksTheContext(t *testing.T) {
	turns := []memory.Turn{u("yes")}
	if got, want := memory.ExtractionTranscript(nil, turns, 1500, 1000), memory.Transcript(turns, 1000); got != want {
		t.Errorf("without context: %q, want the plain transcript %q", got, want)
	}
	onlyTools := []memory.Turn{{Role: memory.RoleTool, Text: "x"}}
	if got := memory.ExtractionTranscript(onlyTools, turns, 1500, 1000); got != "User: yes" {
		t.Errorf("with nothing to transcribe in context: %q, want no section", got)
	}
	ctx := []memory.Turn{u("Hi"), a("Shall I keep answering in Portuguese from now on?")}
	got := memory.ExtractionTranscript(ctx, turns, 1500, 1000)
	want := memory.ContextHeading + "\n\nUser: Hi\n\nAssistant: Shall I keep answering in Portuguese from now on?\n\n" +
		memory.NewTurnsHeading + "\n\nUser: yes"
	if got != want {
		t.Errorf("ExtractionTranscript =\n%s\nwant\n%s", got, want)
	}
}

// TestContextReachesTheModelAndMovesNoWatermark checks that the context
// turns are in the model's request, marked, and that they change neither
// the watermark, nor whether a request is a duplicate, nor whether there
// is anything to read.
func TestContextReachesTheModelAndMovesNoWatermark(t *testing.T) {
	ctx := context.Background()
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("preferred_language", "Portuguese")}})
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))

	only := extractReq(memorytest.Ana, "th-1", 6, 6)
	only.ContextTurns = []memory.Turn{u("I live in Lisbon")}
	if res, err := s.Extract(ctx, only); err != nil || res.Outcome != memory.OutcomeNoTurns || res.ModelCalls != 0 {
		t.Fatalf("context without new turns: %+v, %v; want no_turns and no call", res, err)
	}

	req := extractReq(memorytest.Ana, "th-1", 6, 7, "yes")
	req.ContextTurns = []memory.Turn{u("Olá"), a("Shall I keep answering in Portuguese from now on?")}
	if _, err := s.Extract(ctx, req); err != nil {
		t.Fatal(err)
	}
	got := model.Requests()[0].Transcript
	if !strings.HasPrefix(got, memory.ContextHeading) || !strings.Contains(got, "Assistant: Shall I keep answering in Portuguese") ||
		!strings.HasSuffix(got, memory.NewTurnsHeading+"\n\nUser: yes") {
		t.Errorf("transcript sent:\n%s", got)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if m := rec.Threads["th-1"].TurnCount; m != 7 {
		t.Errorf("watermark = %d, want the request's turn count 7", m)
	}

	// The same turns again with other context: a duplicate, no call.
	req.ContextTurns = []memory.Turn{u("something else entirely")}
	res, err := s.Extract(ctx, req)
	if err != nil || res.Outcome != memory.OutcomeDuplicate || model.Calls() != 1 {
		t.Errorf("redelivery with other context: %+v, %v, calls %d; want a duplicate and 1 call", res, err, model.Calls())
	}
}

// contextCost measures what a context of budget characters adds to an
// extraction of a typical window, as scripts/cost measures prompts (4
// characters a token): turns of scripts/cost's default sizes, 300
// characters a user turn and 1,200 an answer, extractEveryTurns 6, the
// window of turns 7 to 12 after the turns 1 to 6 as context. It returns
// the transcript's tokens without and with the context.
func contextCost(budget int) (without, with int) {
	filler := func(n int) string {
		return strings.Repeat("Could you help me plan the week around my night shifts and the kids' school run? ", n/80+1)[:n]
	}
	var turns []memory.Turn
	for range 6 {
		turns = append(turns, u(filler(300)), a(filler(1200)))
	}
	tokens := func(transcript string) int { return (utf8.RuneCountInString(transcript) + 3) / 4 }
	window := memory.DefaultTranscriptChars
	without = tokens(memory.ExtractionTranscript(nil, turns[6:], budget, window))
	with = tokens(memory.ExtractionTranscript(turns[:6], turns[6:], budget, window))
	return without, with
}

// TestContextCostInTheDocs writes the block context-cost of
// docs/extractor.md, section "Context turns", from the code that measures
// it: the added tokens of the candidate budgets and of the default.
func TestContextCostInTheDocs(t *testing.T) {
	const novaMicroInputPerMillion = 0.035 // USD, aws.amazon.com/bedrock/pricing, read 2026-12-01
	rows := []string{
		"| context budget (characters) | transcript without context (tokens) | with context (tokens) | added tokens | added price per million extractions |",
		"|---:|---:|---:|---:|---:|",
	}
	for _, budget := range []int{500, 1000, memory.DefaultContextChars, 3000} {
		without, with := contextCost(budget)
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | +%s | $%.2f |", docblock.Thousands(budget), docblock.Thousands(without),
			docblock.Thousands(with), docblock.Thousands(with-without), float64(with-without)*novaMicroInputPerMillion))
	}
	rows = append(rows, "", fmt.Sprintf("`memory.DefaultContextChars` = %s.", docblock.Thousands(memory.DefaultContextChars)))
	docblock.Check(t, filepath.Join("..", "docs", "extractor.md"), "context-cost", strings.Join(rows, "\n"))
}
