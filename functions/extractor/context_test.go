package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// withContextTurns returns the first-answer event as a later message of
// the thread (turns 5 and 6) that carries context turns.
func withContextTurns(t *testing.T, context ...map[string]string) []byte {
	t.Helper()
	return editEvent(t, event(t, "extractor-first-answer.json"), func(ev *events.SQSEvent) {
		var body map[string]any
		if err := json.Unmarshal([]byte(ev.Records[0].Body), &body); err != nil {
			t.Fatal(err)
		}
		body["previousTurnCount"], body["turnCount"] = 4, 6
		body["turns"] = []map[string]string{{"role": "user", "text": "yes"}, {"role": "assistant", "text": "Combinado!"}}
		body["contextTurns"] = context
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		ev.Records[0].Body = string(b)
	})
}

// TestContextTurnsReachTheModelAndNotTheWatermark runs a message with
// context turns through the handler: the model reads them, marked, the
// watermark is the message's turn count, and the same turns redelivered
// with other context are a duplicate without a model call.
func TestContextTurnsReachTheModelAndNotTheWatermark(t *testing.T) {
	answer := memorytest.Answer{Operations: []memory.Operation{{Op: "SET", Key: "preferred_language", Value: "Portuguese", Evidence: "yes"}}}
	f := newFixture(t, fixtureOpts{}, answer, answer)
	question := "Shall I keep answering in Portuguese from now on?"
	resp := f.invoke(t, context.Background(), withContextTurns(t,
		map[string]string{"role": "user", "text": "Olá"}, map[string]string{"role": "assistant", "text": question}))
	if got := failedIDs(resp); len(got) != 0 {
		t.Fatalf("failures = %v, want none", got)
	}
	reqs := f.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model calls = %d, want 1", len(reqs))
	}
	tr := reqs[0].Transcript
	if !strings.HasPrefix(tr, memory.ContextHeading) || !strings.Contains(tr, "Assistant: "+question) ||
		!strings.Contains(tr, memory.NewTurnsHeading+"\n\nUser: yes") {
		t.Errorf("transcript sent:\n%s", tr)
	}
	rec, _ := f.repo.Record(ana)
	if got := rec.Threads["th-9"].TurnCount; got != 6 {
		t.Errorf("watermark of th-9 = %d, want the message's turn count 6", got)
	}

	f.invoke(t, context.Background(), withContextTurns(t, map[string]string{"role": "user", "text": "other context"}))
	if n := f.model.Calls(); n != 1 {
		t.Errorf("model calls = %d, want 1: a redelivery with other context is a duplicate", n)
	}
	lines := f.logs.lines(t)
	if got := lines[len(lines)-1]["outcome"]; got != string(memory.OutcomeDuplicate) {
		t.Errorf("outcome of the redelivery = %v, want duplicate", got)
	}
}

func TestBadContextTurnIsMalformed(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	resp := f.invoke(t, context.Background(), withContextTurns(t, map[string]string{"role": "system", "text": "x"}))
	if got := failedIDs(resp); len(got) != 1 || f.model.Calls() != 0 {
		t.Errorf("failures %v, model calls %d; want the record failed and no call", got, f.model.Calls())
	}
	if got := f.outcomes(t)[firstID]; got != outcomeMalformed {
		t.Errorf("outcome = %q, want %q", got, outcomeMalformed)
	}
}
