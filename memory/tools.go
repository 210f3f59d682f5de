package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ToolDefinition is a tool offered to a model, as plain data: the bedrock
// package turns it into a Converse tool spec.
type ToolDefinition struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the tool's input.
	InputSchema json.RawMessage
	// NeedsApproval says the host must ask the user before running it.
	NeedsApproval bool
}

// WithTopLevel returns a copy of d whose input schema's top-level object
// holds only the keywords named by keep (for instance type, properties and
// required, all that Amazon Nova supports there); nested schemas are left
// whole. It returns an error when the input schema is not a JSON object.
func (d ToolDefinition) WithTopLevel(keep ...string) (ToolDefinition, error) {
	var schema map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(d.InputSchema))
	if err := dec.Decode(&schema); err != nil || schema == nil || dec.More() {
		return ToolDefinition{}, fmt.Errorf("memory: tool %s: the input schema is not one JSON object", d.Name)
	}
	kept := make(map[string]json.RawMessage, len(keep))
	for _, k := range keep {
		if v, ok := schema[k]; ok {
			kept[k] = v
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return ToolDefinition{}, fmt.Errorf("memory: tool %s: %w", d.Name, err)
	}
	d.InputSchema = b
	return d, nil
}

// Names of the tools.
const (
	OperationsToolName = "record_memory_operations"
	RememberToolName   = "remember_user_fact"
	ForgetToolName     = "forget_user_fact"
)

// OperationsTool returns the tool an extraction forces the model to call:
// its input is the list of SET/DELETE operations. Each quotes its
// evidence (required when evidence is true, the default of the store;
// the store checks it on SETs, where a made-up fact would enter the
// prompts), and a SET may carry validUntil and category.
func OperationsTool(maxOperations, maxFactChars int, evidence bool) ToolDefinition {
	required := `["op","key"]`
	if evidence {
		required = `["op","key","evidence"]`
	}
	schema := fmt.Sprintf(`{"type":"object","properties":{"operations":{"type":"array","maxItems":%d,`+
		`"description":"The changes to the known facts; empty when there is nothing to change.",`+
		`"items":{"type":"object","properties":{`+
		`"op":{"type":"string","enum":["SET","DELETE"]},`+
		`"key":{"type":"string","minLength":1,"maxLength":%d,"description":"snake_case name of the fact"},`+
		`"value":{"type":"string","maxLength":%d,"description":"the value, for SET only"},`+
		`"evidence":{"type":"string","maxLength":%d,"description":"the user's own words the change rests on, copied exactly from a User turn of the new turns"},`+
		`"validUntil":{"type":"string","description":"for SET of a fact the user stated as temporary: its last day, YYYY-MM-DD"},`+
		`"category":{"type":"string","enum":%s,"description":"for SET of a special category of personal data only"}},`+
		`"required":%s,"additionalProperties":false}}},`+
		`"required":["operations"],"additionalProperties":false}`,
		maxOperations, maxFactChars, maxFactChars, MaxEvidenceChars, jsonList(Categories), required)
	return ToolDefinition{
		Name:        OperationsToolName,
		Description: "Record the changes to the durable facts known about the user.",
		InputSchema: json.RawMessage(schema),
	}
}

// LargestAnswer returns the longest input [OperationsTool] admits under
// the caps maxOperations and maxFactChars: maxOperations operations, each
// with every member at its longest (the longer op, key and value of
// maxFactChars characters, evidence of [MaxEvidenceChars], an end date,
// the longest category), in one-byte characters. A model's answer is
// this JSON, or shorter; an adapter sizes the model's output by it.
func LargestAnswer(maxOperations, maxFactChars int) []byte {
	longest := ""
	for _, c := range Categories {
		if len(c) > len(longest) {
			longest = c
		}
	}
	op := Operation{Op: OpDelete, Key: strings.Repeat("k", maxFactChars), Value: strings.Repeat("v", maxFactChars),
		Evidence: strings.Repeat("e", MaxEvidenceChars), ValidUntil: "2026-12-31", Category: longest}
	ops := make([]Operation, max(maxOperations, 0))
	for i := range ops {
		ops[i] = op
	}
	b, _ := json.Marshal(map[string][]Operation{"operations": ops}) // Plain strings always marshal.
	return b
}

// jsonList returns words as a JSON array of strings.
func jsonList(words []string) string {
	b, _ := json.Marshal(words) // A string slice always marshals.
	return string(b)
}

// ParseOperations decodes the input of an OperationsTool call. Input that
// is not an object with an "operations" array of {op, key, value,
// evidence, validUntil, category} objects is an error wrapping
// ErrMalformedAnswer. The operations are not yet validated: the store
// does that.
func ParseOperations(input []byte) ([]Operation, error) {
	var in struct {
		Operations *[]Operation `json:"operations"`
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, malformed("tool input: %v", err)
	}
	if dec.More() {
		return nil, malformed("tool input: trailing data")
	}
	if in.Operations == nil {
		return nil, malformed("tool input: no operations array")
	}
	return *in.Operations, nil
}

// UserTools returns the two built-in tools a chat model may call to edit
// the user's memory: remember one fact (which needs the user's approval)
// and forget one fact.
func UserTools() []ToolDefinition {
	return []ToolDefinition{
		{
			Name:        RememberToolName,
			Description: "Remember one durable fact the user asked you to remember about them, such as their preferred language or their role. Ask the user first.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"key":{"type":"string","minLength":1,"description":"short snake_case name of the fact, e.g. preferred_language"},` +
				`"value":{"type":"string","minLength":1,"description":"the fact, in the user's words"}},` +
				`"required":["key","value"],"additionalProperties":false}`),
			NeedsApproval: true,
		},
		{
			Name:        ForgetToolName,
			Description: "Forget one fact remembered about the user, when the user asks you to.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"key":{"type":"string","minLength":1,"description":"the name of the fact to forget"}},` +
				`"required":["key"],"additionalProperties":false}`),
		},
	}
}

// ToolCall is one call of a user tool by a model.
type ToolCall struct {
	Name  string
	Input json.RawMessage
}

// ToolResult is what a tool call did, as text for the model, and the fact
// it stored (remember only).
type ToolResult struct {
	Text string
	Fact *Fact
}

// ExecuteTool runs a call of one of [UserTools] for the user of sc.
// approved says the user approved the call; the remember tool refuses to
// run without it. Errors: *Error with CodeUnknownTool, CodeBadToolInput,
// CodeEmptyFact or CodeFactTooLong; CodeApprovalRequired; those of
// Put and RemoveFact. A remembered fact is of
// OriginRememberTool.
func (s *Store) ExecuteTool(ctx context.Context, sc Scope, call ToolCall, approved bool) (ToolResult, error) {
	var in struct {
		Key   *string `json:"key"`
		Value *string `json:"value"`
	}
	decode := func(needValue bool) error {
		dec := json.NewDecoder(bytes.NewReader(call.Input))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil || in.Key == nil || (needValue && in.Value == nil) || (!needValue && in.Value != nil) {
			return badRequest(CodeBadToolInput, "the tool input does not match the tool's schema", "")
		}
		return nil
	}
	switch call.Name {
	case RememberToolName:
		if err := decode(true); err != nil {
			return ToolResult{}, err
		}
		if !approved {
			return ToolResult{}, &Error{Code: CodeApprovalRequired,
				Message: "remembering a fact needs the user's approval", UserMessage: "Allow the assistant to remember this?"}
		}
		f, err := s.Put(ctx, sc, FactInput{Key: *in.Key, Value: *in.Value, Origin: OriginRememberTool})
		if err != nil {
			return ToolResult{}, err
		}
		return ToolResult{Text: "Remembered " + f.Key + ".", Fact: &f}, nil
	case ForgetToolName:
		if err := decode(false); err != nil {
			return ToolResult{}, err
		}
		if err := s.RemoveFact(ctx, sc, *in.Key); err != nil {
			return ToolResult{}, err
		}
		return ToolResult{Text: "Forgot " + CanonicalKey(*in.Key) + "."}, nil
	default:
		return ToolResult{}, badRequest(CodeUnknownTool, "unknown tool", "")
	}
}
