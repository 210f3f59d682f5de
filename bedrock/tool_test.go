package bedrock_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/memory"
)

func TestConverseToolOfUserTools(t *testing.T) {
	for _, def := range memory.UserTools() {
		tool, err := bedrock.ConverseTool(def)
		if err != nil {
			t.Fatalf("ConverseTool(%s): %v", def.Name, err)
		}
		spec, ok := tool.(*types.ToolMemberToolSpec)
		if !ok {
			t.Fatalf("ConverseTool(%s) = %T, want a tool spec", def.Name, tool)
		}
		if aws.ToString(spec.Value.Name) != def.Name || aws.ToString(spec.Value.Description) != def.Description {
			t.Errorf("spec = %s %q, want %s %q", aws.ToString(spec.Value.Name), aws.ToString(spec.Value.Description), def.Name, def.Description)
		}
		js, ok := spec.Value.InputSchema.(*types.ToolInputSchemaMemberJson)
		if !ok {
			t.Fatalf("input schema = %T, want JSON", spec.Value.InputSchema)
		}
		raw, err := js.Value.MarshalSmithyDocument()
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(def.InputSchema, &want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s schema (-want +got):\n%s", def.Name, diff)
		}
	}
}

func TestConverseToolRefusesBadDefinitions(t *testing.T) {
	for name, def := range map[string]memory.ToolDefinition{
		"no name":          {InputSchema: json.RawMessage(`{"type":"object"}`)},
		"schema not JSON":  {Name: "t", InputSchema: json.RawMessage(`{`)},
		"schema an array":  {Name: "t", InputSchema: json.RawMessage(`[]`)},
		"no schema":        {Name: "t"},
		"trailing content": {Name: "t", InputSchema: json.RawMessage(`{} {}`)},
	} {
		if _, err := bedrock.ConverseTool(def); err == nil {
			t.Errorf("%s: ConverseTool = nil error", name)
		}
	}
}

func TestToolCall(t *testing.T) {
	block := types.ToolUseBlock{
		ToolUseId: aws.String("t1"),
		Name:      aws.String(memory.RememberToolName),
		Input:     document.NewLazyDocument(map[string]any{"key": "preferred_language", "value": "Portuguese"}),
	}
	call, err := bedrock.ToolCall(block)
	if err != nil {
		t.Fatalf("ToolCall: %v", err)
	}
	if call.Name != memory.RememberToolName || string(call.Input) != `{"key":"preferred_language","value":"Portuguese"}` {
		t.Errorf("ToolCall = %s %s", call.Name, call.Input)
	}
	if _, err := bedrock.ToolCall(types.ToolUseBlock{Input: block.Input}); err == nil {
		t.Error("ToolCall without a name = nil error")
	}
	if _, err := bedrock.ToolCall(types.ToolUseBlock{Name: block.Name}); err == nil {
		t.Error("ToolCall without input = nil error")
	}
}
