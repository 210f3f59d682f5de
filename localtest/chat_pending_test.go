package main

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
)

// noModel is a chat model the pending commands never call.
type noModel struct{}

func (noModel) Converse(context.Context, *bedrockruntime.ConverseInput, ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	return nil, errors.New("no chat model in this test")
}

// noQueue is a queue the pending commands never send to.
type noQueue struct{}

func (noQueue) SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	return nil, errors.New("no queue in this test")
}

// TestChatPendingCommands: /pending lists the facts that wait, with the
// user's words and their category; /keep moves one into the next thread's
// prompt; /discard drops one; keeping what does not wait says so.
func TestChatPendingCommands(t *testing.T) {
	ctx := context.Background()
	sc := memory.Scope{TenantID: "acme", UserID: "chat-pending"}
	extractor := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{
		{Op: memory.OpSet, Key: "health_condition", Value: "asthma", Evidence: "I have asthma", Category: memory.CategoryHealth},
		{Op: memory.OpSet, Key: "political_party", Value: "Greens", Evidence: "I vote for the Greens", Category: memory.CategoryPolitics},
	}})
	store, err := memory.New(memorytest.NewRepo(), memory.Config{}, memory.WithModel(extractor))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Extract(ctx, memory.ExtractRequest{Scope: sc, ThreadID: "th-1", TurnCount: 2, SentAt: time.Now(),
		Turns: []memory.Turn{{Role: memory.RoleUser, Text: "I have asthma, and I vote for the Greens."}, {Role: memory.RoleAssistant, Text: "Noted."}}}); err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(noQueue{}, "https://sqs.local/1/q.fifo"), Model: noModel{}, ModelID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	script := "/pending\n/keep health_condition\n/discard political_party\n/keep political_party\n/pending\n/new\n/quit\n"
	var out strings.Builder
	c := &chatSession{gw: gw, store: store, sc: sc, in: bufio.NewScanner(strings.NewReader(script)), out: &out, echo: true}
	if err := c.run(ctx); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	t.Logf("transcript:\n%s", got)
	first, rest, _ := strings.Cut(got, "you> /keep health_condition")
	for _, want := range []string{"waiting for your yes", "health_condition = asthma [health], you said “I have asthma”; said on ",
		"political_party = Greens [politics], you said “I vote for the Greens”"} {
		if !strings.Contains(first, want) {
			t.Errorf("/pending does not say %q:\n%s", want, first)
		}
	}
	if strings.Contains(first[:strings.Index(first, "you> /pending")], "asthma") {
		t.Errorf("the first thread's prompt holds a pending fact:\n%s", first)
	}
	for _, want := range []string{"kept health_condition = asthma", "discarded political_party",
		"nothing to keep: no pending political_party", "nothing waits for your yes", `"health_condition": "asthma"`} {
		if !strings.Contains(rest, want) {
			t.Errorf("after /keep and /discard the chat does not say %q:\n%s", want, rest)
		}
	}
	if strings.Contains(rest, `"political_party"`) {
		t.Errorf("the discarded fact reached a prompt:\n%s", rest)
	}
}
