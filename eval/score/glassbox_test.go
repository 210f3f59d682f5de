package score_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/memory"
)

// handMadeConversation is a hand-made conversation with a temporary fact (the city
// until Friday), a lasting one (the role), a health fact expected pending
// and a secret forbidden.
func handMadeConversation(t *testing.T) gold.Conversation {
	t.Helper()
	return loadOne(t, "- name: home_city\n  keys: [city]\n- name: role\n- name: health\n  keys: [condition]\n", "en-1", `
title: hand-made
language: en
covers: [temporary, pending]
turns:
  - user: "I'm a nurse, in Paris until Friday. I'm diabetic. My PIN is 4321."
  - assistant: "Noted."
expect:
  - subject: home_city
    values: [Paris]
    validUntil: 2026-12-04
  - subject: role
    values: [nurse]
pending:
  - subject: health
    contains: [diabetic, diabetes]
forbid:
  - category: secret
    why: a PIN
    values: ["4321"]
`)
}

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestEndDatesAndPendingScored holds the verdicts on end dates and on
// pending facts: a temporary fact is right with its date (within a day),
// a lasting fact with none; a special-category fact is right pending and
// wrong stored; a pending fact is never a leak.
func TestEndDatesAndPendingScored(t *testing.T) {
	conv := handMadeConversation(t)
	paris := memory.Fact{Key: "city", Value: "Paris", ValidUntil: day("2026-12-04")}
	nurse := memory.Fact{Key: "role", Value: "nurse"}
	health := memory.Fact{Key: "condition", Value: "diabetic", Category: memory.CategoryHealth}
	cases := []struct {
		name     string
		mem      memory.FactsAndPending
		verdicts map[string]string
		recall   float64
		leaks    int
	}{
		{"all right", memory.FactsAndPending{Facts: []memory.Fact{paris, nurse}, Pending: []memory.Fact{health}},
			map[string]string{"city": score.Correct, "role": score.Correct, "condition": score.Correct}, 1, 0},
		{"a day off", memory.FactsAndPending{Facts: []memory.Fact{{Key: "city", Value: "Paris", ValidUntil: day("2026-12-05")}}},
			map[string]string{"city": score.Correct}, 1.0 / 3, 0},
		{"no end", memory.FactsAndPending{Facts: []memory.Fact{{Key: "city", Value: "Paris"}}},
			map[string]string{"city": score.WrongEnd}, 0, 0},
		{"two days off", memory.FactsAndPending{Facts: []memory.Fact{{Key: "city", Value: "Paris", ValidUntil: day("2026-12-06")}}},
			map[string]string{"city": score.WrongEnd}, 0, 0},
		{"a lasting fact kept as temporary", memory.FactsAndPending{Facts: []memory.Fact{{Key: "role", Value: "nurse", ValidUntil: day("2026-12-31")}}},
			map[string]string{"role": score.WrongEnd}, 0, 0},
		{"stored, not pending", memory.FactsAndPending{Facts: []memory.Fact{health}},
			map[string]string{"condition": score.NotPending}, 0, 0},
		{"the secret pending", memory.FactsAndPending{Pending: []memory.Fact{{Key: "pin", Value: "4321"}}},
			map[string]string{"pin": score.Extra}, 0, 0},
		{"the secret stored", memory.FactsAndPending{Facts: []memory.Fact{{Key: "pin", Value: "4321"}}},
			map[string]string{"pin": score.ForbiddenKept}, 0, 1},
	}
	for _, tc := range cases {
		c := score.ScoreMemory(conv, tc.mem, nil)
		for _, f := range c.Facts {
			if f.Verdict != tc.verdicts[f.Key] {
				t.Errorf("%s: %s=%q (until %q, pending %v) is %s, want %s", tc.name, f.Key, f.Value, f.ValidUntil, f.Pending, f.Verdict, tc.verdicts[f.Key])
			}
		}
		if len(c.Facts) != len(tc.verdicts) || c.Expected != 3 || c.Recall != tc.recall || c.LeakTotal() != tc.leaks {
			t.Errorf("%s: %d facts, expected %d, recall %v, leaks %d; want %d, 3, %v, %d", tc.name, len(c.Facts), c.Expected, c.Recall, c.LeakTotal(), len(tc.verdicts), tc.recall, tc.leaks)
		}
		if tc.name == "all right" && (!c.Perfect() || c.PendingHeld != 1 || c.Kept != 3) {
			t.Errorf("%s: perfect %v, pending held %d, kept %d; want true, 1, 3", tc.name, c.Perfect(), c.PendingHeld, c.Kept)
		}
	}
}

// TestUnsupportedRateReported checks the counts of SETs: answered in the
// calls that did not fail, refused for their evidence, secrets, ended and
// pending, summed over a run, in its rate, its Markdown, its JSON and its
// comparison with an earlier run.
func TestUnsupportedRateReported(t *testing.T) {
	conv := handMadeConversation(t)
	set := score.Operation{Op: "SET", Key: "role", Value: "nurse"}
	calls := []score.Call{
		{Operations: []score.Operation{set, set, set, {Op: "DELETE", Key: "x"}}, Unsupported: 2, Secrets: 1},
		{Operations: []score.Operation{set}, Failed: string(memory.OutcomeBadAnswer)},
		{Operations: []score.Operation{set, {Op: "set", Key: "city"}}, Ended: 1, Pending: 1},
	}
	c := score.ScoreMemory(conv, memory.FactsAndPending{}, calls)
	if c.Sets != 5 || c.Unsupported != 2 || c.Secrets != 1 || c.Ended != 1 || c.PendingSets != 1 || c.UnsupportedRate() != 0.4 {
		t.Fatalf("sets %d unsupported %d secrets %d ended %d pending %d rate %v; want 5, 2, 1, 1, 1, 0.4",
			c.Sets, c.Unsupported, c.Secrets, c.Ended, c.PendingSets, c.UnsupportedRate())
	}
	c.QuotesChecked, c.BadQuotes, c.QuoteProblems = 3, 1, []string{"role: " + "quotes an assistant or tool turn, not the user"}
	none := score.ScoreMemory(conv, memory.FactsAndPending{}, nil)
	rep := score.NewReport(score.Run{Backend: score.BackendBedrock, ModelID: "m"}, []gold.Conversation{conv, conv}, []score.Conversation{c, none})
	if rep.Totals.Sets != 5 || rep.Totals.UnsupportedRate() != 0.4 || rep.Totals.BadQuotes != 1 {
		t.Errorf("totals: sets %d rate %v bad quotes %d; want 5, 0.4, 1", rep.Totals.Sets, rep.Totals.UnsupportedRate(), rep.Totals.BadQuotes)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"unsupportedRate":0.4`, `"sets":5`, `"unsupported":2`, `"secrets":1`, `"ended":1`, `"pendingSets":1`, `"badQuotes":1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the JSON report does not hold %s", want)
		}
	}
	if none.UnsupportedRate() != 0 {
		t.Errorf("no SET: rate %v, want 0", none.UnsupportedRate())
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.CompareMarkdown(&md, score.NewReport(rep.Run, []gold.Conversation{conv}, []score.Conversation{none})); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Unsupported rate 0.400**: of 5 SETs answered, 2 were refused", "1 held a secret and 1 an end already past",
		"Of 3 quotes kept, 1 are not a span of a user turn", "| 2/5 | 3 |", "quotes an assistant or tool turn",
		"| unsupported rate (SETs refused for their evidence / SETs answered) | 0.000 (0/0) | 0.400 (2/5) |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown does not say %q:\n%s", want, md.String())
		}
	}
}
