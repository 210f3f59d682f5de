package producer_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
)

// withContext returns sample() with an assistant question, and a long
// answer before it, as context turns.
func withContext() producer.Message {
	m := sample()
	m.PreviousTurnCount, m.TurnCount = 6, 8
	m.ContextTurns = []producer.Turn{
		{Role: "user", Text: "Tell me about Lisbon's trams"},
		{Role: "assistant", Text: strings.Repeat("Tram 28 climbs through Alfama. ", 60) + "Shall I keep answering in Portuguese from now on?"},
		{Role: "tool", Text: "lookup: ok"},
	}
	m.Turns = []producer.Turn{{Role: "user", Text: "yes"}, {Role: "assistant", Text: "Combinado!"}}
	return m
}

func TestContextTurnsAreBoundedAsTheExtractorReadsThem(t *testing.T) {
	m := withContext()
	in, err := producer.New(&countingAPI{}, "https://q/1/q.fifo").Build(m)
	if err != nil {
		t.Fatal(err)
	}
	got := checkBody(t, compiled(t), aws.ToString(in.MessageBody))
	var ctx []memory.Turn
	for _, c := range m.ContextTurns {
		ctx = append(ctx, memory.Turn{Role: c.Role, Text: c.Text})
	}
	var want []producer.Turn
	for _, c := range memory.TranscriptTurns(ctx, memory.DefaultContextChars) {
		want = append(want, producer.Turn{Role: c.Role, Text: c.Text})
	}
	if !reflect.DeepEqual(got.ContextTurns, want) {
		t.Errorf("contextTurns sent = %q, want memory.ContextTurns of them %q", got.ContextTurns, want)
	}
	if len(got.ContextTurns) != 1 || !strings.HasSuffix(got.ContextTurns[0].Text, "from now on?") {
		t.Errorf("contextTurns = %q, want the end of the answer, with its question", got.ContextTurns)
	}
	if got.TurnCount != 8 || got.PreviousTurnCount != 6 || len(got.Turns) != 2 {
		t.Errorf("counts %d→%d and %d turns, want 6→8 and 2: context is never counted", got.PreviousTurnCount, got.TurnCount, len(got.Turns))
	}
}

// TestDeduplicationIgnoresContext: the same answer sent with other
// context is the same message to SQS.
func TestDeduplicationIgnoresContext(t *testing.T) {
	p := producer.New(&countingAPI{}, "https://q/1/q.fifo")
	with, err := p.Build(withContext())
	if err != nil {
		t.Fatal(err)
	}
	m := withContext()
	m.ContextTurns = nil
	without, err := p.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(with.MessageDeduplicationId) != aws.ToString(without.MessageDeduplicationId) ||
		aws.ToString(with.MessageGroupId) != aws.ToString(without.MessageGroupId) {
		t.Errorf("IDs differ with context: %s %s, without: %s %s", aws.ToString(with.MessageDeduplicationId),
			aws.ToString(with.MessageGroupId), aws.ToString(without.MessageDeduplicationId), aws.ToString(without.MessageGroupId))
	}
	if strings.Contains(aws.ToString(without.MessageBody), "contextTurns") {
		t.Errorf("a message without context writes the member: %s", aws.ToString(without.MessageBody))
	}
}

func TestContextIsDroppedFirstWhenTooLarge(t *testing.T) {
	m := withContext()
	m.Turns = []producer.Turn{{Role: "user", Text: strings.Repeat("y", 1500)}}
	p := producer.New(&countingAPI{}, "https://q/1/q.fifo", producer.WithMaxBytes(2048))
	in, err := p.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	body := aws.ToString(in.MessageBody)
	if len(body) > 2048 {
		t.Errorf("body of %d bytes, over 2048", len(body))
	}
	got := checkBody(t, compiled(t), body)
	if got.ContextTurns != nil || len(got.Turns) != 1 || got.Turns[0].Text != m.Turns[0].Text {
		t.Errorf("context %q, turns %q: want no context and the new turn whole", got.ContextTurns, got.Turns)
	}
}

func TestInvalidContextTurnIsRefused(t *testing.T) {
	m := withContext()
	m.ContextTurns = append(m.ContextTurns, producer.Turn{Role: "system", Text: "x"})
	_, err := producer.New(&countingAPI{}, "https://q/1/q.fifo").Build(m)
	if !errors.Is(err, producer.ErrInvalid) || !strings.Contains(err.Error(), "/contextTurns/3/role") {
		t.Errorf("Build = %v, want ErrInvalid naming /contextTurns/3/role", err)
	}
}

// TestSendsContextTurns sends a message with context turns through SQS:
// the body that arrives is the schema's and holds them.
func TestSendsContextTurns(t *testing.T) {
	c := newClient(t)
	url := newQueue(t, c)
	got := checkBody(t, compiled(t), aws.ToString(sendOne(t, producer.New(c, url), c, url, withContext()).Body))
	if len(got.ContextTurns) != 1 {
		t.Errorf("context turns received: %q", got.ContextTurns)
	}
}
