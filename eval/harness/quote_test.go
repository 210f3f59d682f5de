package harness

import (
	"reflect"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/memory"
)

var quoteTurns = []gold.Turn{
	{Role: "user", Text: "Hi! I’m Ana, and I moved to  PORTO last month — loving it."},
	{Role: "assistant", Text: "Welcome to Porto, Ana! You must be a nurse, then."},
	{Role: "tool", Text: "Weather in Porto: sunny."},
	{Role: "user", Text: "我住在上海。"},
}

// TestQuoteProblem holds the harness's own check of a quote: a span of a
// user turn, leniently on case, width, punctuation and spaces, with
// ellipses for left-out words; never an assistant's or a tool's words.
func TestQuoteProblem(t *testing.T) {
	cases := map[string]string{
		"I'm Ana":                        "",
		"i’m ana, and i moved to porto":  "",
		"moved to Porto last month":      "",
		"I moved to… last month":         "",
		"I'm Ana ... loving it":          "",
		"ＰＯＲＴＯ last month":               "",
		"住在上海":                           "",
		"":                               QuoteMissing,
		"…!":                             QuoteMissing,
		"You must be a nurse":            QuoteAssistant,
		"sunny":                          QuoteAssistant,
		"I moved to Lisbon":              QuoteNotFound,
		"last month… I moved to":         QuoteNotFound,
		"I'm Ana and I moved to Porto!!": "",
		"Ana and I moved to Port":        QuoteNotFound,
	}
	for evidence, want := range cases {
		if got := QuoteProblem(evidence, quoteTurns); got != want {
			t.Errorf("QuoteProblem(%q) = %q, want %q", evidence, got, want)
		}
	}
}

// TestCheckQuotesFindsTheThread checks that each kept fact's quote is
// checked against the conversation of the thread it came from, that facts
// set by hand are not checked, and that every problem is reported.
func TestCheckQuotesFindsTheThread(t *testing.T) {
	convs := []gold.Conversation{{ID: "a", Turns: quoteTurns}, {ID: "b", Turns: []gold.Turn{{Role: "user", Text: "I work as a nurse."}}}}
	mem := memory.FactsAndPending{
		Facts: []memory.Fact{
			{Key: "home_city", Origin: memory.OriginConversation, SourceThreadID: "th-1", Evidence: "moved to Porto"},
			{Key: "role", Origin: memory.OriginConversation, SourceThreadID: "th-2", Evidence: "I work as a nurse"},
			{Key: "name", Origin: memory.OriginConversation, SourceThreadID: "th-2", Evidence: "I'm Ana"},
			{Key: "diet", Origin: memory.OriginManual},
		},
		Pending: []memory.Fact{{Key: "health", Origin: memory.OriginConversation, SourceThreadID: "th-9", Evidence: "I'm Ana"}},
	}
	var c score.Conversation
	checkQuotes(&c, mem, convs)
	want := []string{"name: " + QuoteNotFound, "health: from no thread of this user"}
	if c.QuotesChecked != 4 || c.BadQuotes != 2 || !reflect.DeepEqual(c.QuoteProblems, want) {
		t.Errorf("checked %d, bad %d, problems %q; want 4, 2, %q", c.QuotesChecked, c.BadQuotes, c.QuoteProblems, want)
	}
}

// TestQuoteCheckAgreesWithTheStore holds the two checks of a quote to each
// other on the gold set's turns: the opening words of every turn, taken
// as evidence, are found by both or by neither as a user's words. Chinese
// and Japanese are left out: the harness takes each of their characters
// as a word, the store only what punctuation separates.
func TestQuoteCheckAgreesWithTheStore(t *testing.T) {
	convs, err := gold.Load(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range convs {
		if c.Language == "zh" || c.Language == "ja" {
			continue
		}
		var turns []memory.Turn
		for _, tt := range c.Turns {
			turns = append(turns, memory.Turn{Role: tt.Role, Text: tt.Text})
		}
		for _, tt := range c.Turns {
			w := strings.Fields(tt.Text)
			evidence := strings.Join(w[:min(5, len(w))], " ")
			store, harness := memory.EvidenceFound(evidence, turns), QuoteProblem(evidence, c.Turns) == ""
			if len([]rune(evidence)) >= 3 && store != harness {
				t.Errorf("%s: %q found as the user's words by the store: %v, by the harness: %v", c.ID, evidence, store, harness)
			}
			checked++
		}
	}
	if checked < 500 {
		t.Errorf("%d turns checked, want the gold set's", checked)
	}
}
