package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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

// Family is a family of models on Bedrock that takes the same tool
// definitions: what the top-level object of a tool's input schema may hold.
type Family string

// Model families; see docs/extractor.md for their sources.
const (
	// FamilyNova is Amazon Nova (amazon.nova-*): the top-level object of
	// an input schema supports only type, properties and required.
	FamilyNova Family = "amazon.nova"
	// FamilyAnthropic is Anthropic Claude (anthropic.*): the whole JSON
	// Schema, additionalProperties at the top included.
	FamilyAnthropic Family = "anthropic"
	// FamilyOther is any other model, and IDs that name no model, such as
	// an application inference profile's ARN: they get the portable subset,
	// Nova's.
	FamilyOther Family = ""
)

// novaTopLevel is what Nova supports at the top of an input schema.
var novaTopLevel = []string{"type", "properties", "required"}

// FamilyOf returns the family of a model ID, a cross-Region inference
// profile ID (us., eu., apac., global. … before the model ID) or the ARN
// of either.
func FamilyOf(modelID string) Family {
	id := modelID
	if strings.HasPrefix(id, "arn:") {
		if i := strings.LastIndexByte(id, '/'); i >= 0 {
			id = id[i+1:]
		}
	}
	for _, f := range []Family{FamilyNova, FamilyAnthropic} {
		p := string(f) + "."
		if f == FamilyNova {
			p = string(f) + "-"
		}
		if strings.HasPrefix(id, p) {
			return f
		}
		// A cross-Region profile: one geography label before the model ID.
		if _, rest, ok := strings.Cut(id, "."); ok && strings.HasPrefix(rest, p) {
			return f
		}
	}
	return FamilyOther
}

// ToolFor turns a tool definition into the Converse tool spec for the
// model modelID, with an input schema its family supports: Anthropic
// models get the definition's schema whole; Nova and every other model get
// its top-level object cut to type, properties and required (nested
// objects keep every keyword). The answer is checked by
// memory.ParseOperations and the store whatever the schema said. The
// errors are those of ConverseTool.
func ToolFor(modelID string, def memory.ToolDefinition) (types.Tool, error) {
	if FamilyOf(modelID) != FamilyAnthropic {
		cut, err := def.WithTopLevel(novaTopLevel...)
		if err != nil {
			return nil, fmt.Errorf("bedrock: tool %s: %w", def.Name, err)
		}
		def = cut
	}
	return ConverseTool(def)
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
