package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/usermemory/usermemory/memory"
)

// ConverseTool turns a tool definition into the Converse tool spec that a
// chat gateway offers its model, for instance each of memory.UserTools().
// It returns an error when the definition has no name or its input schema
// is not a JSON object.
func ConverseTool(def memory.ToolDefinition) (types.Tool, error) {
	if def.Name == "" {
		return nil, errors.New("bedrock: a tool needs a name")
	}
	schema, err := decodeSchema(def.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("bedrock: tool %s: %w", def.Name, err)
	}
	spec := types.ToolSpecification{
		Name:        aws.String(def.Name),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
	}
	if def.Description != "" {
		spec.Description = aws.String(def.Description)
	}
	return &types.ToolMemberToolSpec{Value: spec}, nil
}

// ToolCall turns a tool-use block of a Converse answer into the call that
// memory.Store.ExecuteTool runs. It returns an error when the block has no
// name or its input cannot be encoded as JSON.
func ToolCall(block types.ToolUseBlock) (memory.ToolCall, error) {
	if block.Name == nil || *block.Name == "" {
		return memory.ToolCall{}, errors.New("bedrock: a tool use without a name")
	}
	input, err := toolInput(block)
	if err != nil {
		return memory.ToolCall{}, err
	}
	return memory.ToolCall{Name: *block.Name, Input: input}, nil
}

// toolInput returns the input of a tool use as JSON.
func toolInput(block types.ToolUseBlock) (json.RawMessage, error) {
	if block.Input == nil {
		return nil, errors.New("bedrock: a tool use without input")
	}
	b, err := block.Input.MarshalSmithyDocument()
	if err != nil {
		return nil, fmt.Errorf("bedrock: tool input: %w", err)
	}
	return b, nil
}

// decodeSchema decodes a JSON Schema that must be an object.
func decodeSchema(raw json.RawMessage) (map[string]any, error) {
	var schema map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&schema); err != nil || schema == nil {
		return nil, errors.New("the input schema is not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("the input schema has trailing data")
	}
	return schema, nil
}
