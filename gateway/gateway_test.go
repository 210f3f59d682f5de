package gateway_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
)

// model answers each call with the next scripted output and keeps the
// inputs.
type model struct {
	outs []*bedrockruntime.ConverseOutput
	ins  []*bedrockruntime.ConverseInput
}

func (m *model) Converse(_ context.Context, in *bedrockruntime.ConverseInput, _ ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	m.ins = append(m.ins, in)
	out := m.outs[0]
	m.outs = m.outs[1:]
	return out, nil
}

func text(s string) *bedrockruntime.ConverseOutput {
	return &bedrockruntime.ConverseOutput{StopReason: types.StopReasonEndTurn, Output: &types.ConverseOutputMemberMessage{Value: types.Message{
		Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: s}}}}}
}

func toolUse(name string, input map[string]any) *bedrockruntime.ConverseOutput {
	return &bedrockruntime.ConverseOutput{StopReason: types.StopReasonToolUse, Output: &types.ConverseOutputMemberMessage{Value: types.Message{
		Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String("t1"), Name: aws.String(name), Input: document.NewLazyDocument(input)}}}}}}
}

// queue keeps the messages sent.
type queue struct{ bodies []producer.Message }

func (q *queue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	var m producer.Message
	if err := json.Unmarshal([]byte(*in.MessageBody), &m); err != nil {
		return nil, err
	}
	q.bodies = append(q.bodies, m)
	return &sqs.SendMessageOutput{}, nil
}

func setup(t *testing.T, outs ...*bedrockruntime.ConverseOutput) (*gateway.Gateway, *memory.Store, *model, *queue) {
	t.Helper()
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, q := &model{outs: outs}, &queue{}
	g, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(q, "https://sqs.local/1/q.fifo"), Model: m, ModelID: "chat-model"})
	if err != nil {
		t.Fatal(err)
	}
	return g, store, m, q
}

var ana = memory.Scope{TenantID: "acme", UserID: "ana"}

func systemOf(in *bedrockruntime.ConverseInput) string {
	return in.System[0].(*types.SystemContentBlockMemberText).Value
}

func TestAskRendersFactsAndSendsTheMessage(t *testing.T) {
	ctx := context.Background()
	g, store, m, q := setup(t, text("Olá!"), text("Still here."))
	if _, err := store.Put(ctx, ana, memory.FactInput{Key: "home_city", Value: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	th := g.NewThread(ana, "th-1")
	r, err := g.Ask(ctx, th, "Hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := systemOf(m.ins[0]); !strings.Contains(got, memory.MemoryOpen) || !strings.Contains(got, `"home_city": "Lisbon"`) {
		t.Errorf("system prompt = %q, want the memory block with home_city", got)
	}
	if r.Text != "Olá!" || r.System != systemOf(m.ins[0]) || !r.ExtractDue {
		t.Errorf("reply = %+v, want the answer, the prompt sent and an extraction due", r)
	}
	if len(m.ins[0].ToolConfig.Tools) != 2 {
		t.Errorf("tools offered = %d, want the 2 memory tools", len(m.ins[0].ToolConfig.Tools))
	}
	if _, err := g.Ask(ctx, th, "And now?", nil); err != nil {
		t.Fatal(err)
	}
	if len(q.bodies) != 2 {
		t.Fatalf("messages sent = %d, want one after each answer", len(q.bodies))
	}
	first, second := q.bodies[0], q.bodies[1]
	if first.PreviousTurnCount != 0 || first.TurnCount != 2 || len(first.Turns) != 2 || first.ThreadID != "th-1" {
		t.Errorf("first message = %+v, want turns 0→2 of th-1", first)
	}
	// The thread is named by its first message, in both messages.
	if first.ThreadTitle != "Hi" || second.ThreadTitle != "Hi" {
		t.Errorf("thread titles %q, %q; want the first message, Hi", first.ThreadTitle, second.ThreadTitle)
	}
	// The first answer was extracted: the second carries the turns after it.
	if second.PreviousTurnCount != 2 || second.TurnCount != 4 || len(second.Turns) != 2 || second.Turns[0].Text != "And now?" {
		t.Errorf("second message = %+v, want turns 2→4 with the new turns only", second)
	}
	// The turns already extracted go along as context, never counted.
	if first.ContextTurns != nil {
		t.Errorf("first message has context %+v, want none", first.ContextTurns)
	}
	wantContext := []producer.Turn{{Role: "user", Text: "Hi"}, {Role: "assistant", Text: "Olá!"}}
	if !reflect.DeepEqual(second.ContextTurns, wantContext) {
		t.Errorf("second message's context = %+v, want %+v", second.ContextTurns, wantContext)
	}
}

func TestTitleOf(t *testing.T) {
	long := strings.Repeat("x", memory.MaxThreadTitleChars+10)
	tests := []struct{ in, want string }{
		{"Hi", "Hi"},
		{"  Planning a\n  weekend in Porto  ", "Planning a weekend in Porto"},
		{"Can you help me plan a trip to Porto next month?", "Can you help me plan a…"},
		{long, strings.Repeat("x", memory.MaxThreadTitleChars-1) + "…"},
		{" \t ", ""},
	}
	for _, tt := range tests {
		got := gateway.TitleOf(tt.in)
		if got != tt.want {
			t.Errorf("TitleOf(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if n := len([]rune(got)); n > memory.MaxThreadTitleChars {
			t.Errorf("TitleOf(%q) has %d characters, over %d", tt.in, n, memory.MaxThreadTitleChars)
		}
	}
}

// TestHostTitleIsKept: a title the host gives its thread is sent as is.
func TestHostTitleIsKept(t *testing.T) {
	g, _, _, q := setup(t, text("ok"))
	th := g.NewThread(ana, "th-1")
	th.Title = "Kitchen renovation"
	if _, err := g.Ask(context.Background(), th, "Which tiles?", nil); err != nil {
		t.Fatal(err)
	}
	if got := q.bodies[0].ThreadTitle; got != "Kitchen renovation" {
		t.Errorf("threadTitle = %q, want the host's", got)
	}
}

func TestRememberNeedsApproval(t *testing.T) {
	ctx := context.Background()
	for _, approved := range []bool{false, true} {
		g, store, m, _ := setup(t, toolUse(memory.RememberToolName, map[string]any{"key": "role", "value": "nurse"}), text("ok"))
		asked := 0
		r, err := g.Ask(ctx, g.NewThread(ana, "th-1"), "remember that my role is nurse", func(_ context.Context, c memory.ToolCall) bool {
			asked++
			return approved
		})
		if err != nil {
			t.Fatal(err)
		}
		facts, err := store.GetFacts(ctx, ana)
		if err != nil {
			t.Fatal(err)
		}
		if asked != 1 || len(r.Tools) != 1 || r.Tools[0].Approved != approved {
			t.Fatalf("approved=%v: asked %d times, tools %+v", approved, asked, r.Tools)
		}
		if approved && (len(facts) != 1 || facts[0].Value != "nurse" || facts[0].Origin != memory.OriginRememberTool || r.Tools[0].Err != nil) {
			t.Errorf("approved: facts %+v, err %v, want role stored", facts, r.Tools[0].Err)
		}
		if !approved && (len(facts) != 0 || memory.ErrorCode(r.Tools[0].Err) != memory.CodeApprovalRequired) {
			t.Errorf("refused: facts %+v, err %v, want nothing stored and CodeApprovalRequired", facts, r.Tools[0].Err)
		}
		// The model is told the outcome in a tool result.
		last := m.ins[1].Messages[len(m.ins[1].Messages)-1]
		res := last.Content[0].(*types.ContentBlockMemberToolResult).Value
		wantStatus := types.ToolResultStatusSuccess
		if !approved {
			wantStatus = types.ToolResultStatusError
		}
		if res.Status != wantStatus {
			t.Errorf("approved=%v: tool result status %q, want %q", approved, res.Status, wantStatus)
		}
	}
}

func TestForgetRunsWithoutApproval(t *testing.T) {
	ctx := context.Background()
	g, store, _, _ := setup(t, toolUse(memory.ForgetToolName, map[string]any{"key": "role"}), text("done"))
	if _, err := store.Put(ctx, ana, memory.FactInput{Key: "role", Value: "nurse"}); err != nil {
		t.Fatal(err)
	}
	r, err := g.Ask(ctx, g.NewThread(ana, "th-1"), "forget my role", nil)
	if err != nil {
		t.Fatal(err)
	}
	facts, _ := store.GetFacts(ctx, ana)
	if len(facts) != 0 || r.Tools[0].Err != nil {
		t.Errorf("facts %+v, tool %+v, want role forgotten", facts, r.Tools[0])
	}
}

func TestNewRefusesAPromptWithoutSlot(t *testing.T) {
	store, _ := memory.New(memorytest.NewRepo(), memory.Config{})
	_, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(&queue{}, "q.fifo"), Model: &model{}, ModelID: "m", SystemPrompt: "no slot"})
	if err == nil {
		t.Error("New accepted a system prompt without {memory}")
	}
}

// TestToolRoundsAreBounded: a model that keeps calling tools is stopped
// after MaxToolRounds, and the thread stays one the model accepts: every
// message alternates user and assistant and no tool use is left open.
func TestToolRoundsAreBounded(t *testing.T) {
	ctx := context.Background()
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	forget := toolUse(memory.ForgetToolName, map[string]any{"key": "role"})
	m := &model{outs: []*bedrockruntime.ConverseOutput{forget, forget, text("next")}}
	g, err := gateway.New(gateway.Config{Store: store, Producer: producer.New(&queue{}, "https://sqs.local/1/q.fifo"), Model: m, ModelID: "m", MaxToolRounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	th := g.NewThread(ana, "th-1")
	r, err := g.Ask(ctx, th, "forget my role", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ins) != 2 || len(r.Tools) != 1 {
		t.Fatalf("model calls %d, tool runs %d; want 2 and 1", len(m.ins), len(r.Tools))
	}
	if _, err := g.Ask(ctx, th, "hello", nil); err != nil {
		t.Fatal(err)
	}
	msgs := m.ins[2].Messages
	for i, msg := range msgs {
		want := types.ConversationRoleUser
		if i%2 == 1 {
			want = types.ConversationRoleAssistant
		}
		if msg.Role != want {
			t.Errorf("message %d has role %s, want %s", i, msg.Role, want)
		}
		for _, c := range msg.Content {
			if _, ok := c.(*types.ContentBlockMemberToolUse); ok {
				t.Errorf("message %d keeps a tool use that was never answered", i)
			}
		}
	}
}
