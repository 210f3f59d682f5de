package fakebedrock_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/usermemory/usermemory/bedrock"
	converse "github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
)

// TestChatAnswers: a request that offers the memory tools without forcing
// one is answered as a chat model would, through the real client: from the
// memory block of the system prompt, or with a call of the remember tool;
// it takes no scripted step.
func TestChatAnswers(t *testing.T) {
	s, client := start(t)
	var tools types.ToolConfiguration
	for _, def := range memory.UserTools() {
		tool, err := bedrock.ConverseTool(def)
		if err != nil {
			t.Fatal(err)
		}
		tools.Tools = append(tools.Tools, tool)
	}
	system := "Be helpful.\n" + memory.RenderMemory([]memory.Fact{{Key: "home_city", Value: "Lisbon"}})
	ask := func(text string) *bedrockruntime.ConverseOutput {
		t.Helper()
		out, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{
			ModelId:    aws.String("chat"),
			System:     []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: system}},
			Messages:   []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}},
			ToolConfig: &tools,
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	s.Script(converse.Throttle()) // Would fail an extraction; a chat ignores it.

	out := ask("What do you know about me?")
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	if text := msg.Content[0].(*types.ContentBlockMemberText).Value; out.StopReason != types.StopReasonEndTurn || text != "(stand-in) Noted. What I know about you: home city is Lisbon." {
		t.Errorf("answer %q (%s), want the facts of the system prompt", text, out.StopReason)
	}

	out = ask("Please remember that my favourite colour is green.")
	msg = out.Output.(*types.ConverseOutputMemberMessage).Value
	use, ok := msg.Content[len(msg.Content)-1].(*types.ContentBlockMemberToolUse)
	if !ok || out.StopReason != types.StopReasonToolUse {
		t.Fatalf("answer %+v (%s), want a call of the remember tool", msg.Content, out.StopReason)
	}
	call, err := bedrock.ToolCall(use.Value)
	if err != nil {
		t.Fatal(err)
	}
	if call.Name != memory.RememberToolName || string(call.Input) != `{"key":"favourite_colour","value":"green"}` {
		t.Errorf("tool call %s %s, want remember_user_fact favourite_colour=green", call.Name, call.Input)
	}
	if s.Pending() != 1 {
		t.Errorf("pending steps = %d, want the scripted step left for an extraction", s.Pending())
	}
}
