package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

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

// schemaCache holds the compiled tool schemas, keyed by their text: a
// schema is compiled once, whatever the number of calls.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*jsonschema.Schema
}

// maxCachedSchemas bounds the cache; a store builds its tool from a fixed
// configuration, so more than a handful of schemas means a misuse, and the
// cache then starts over rather than grow.
const maxCachedSchemas = 64

func (c *schemaCache) get(raw json.RawMessage) (*jsonschema.Schema, error) {
	key := string(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[key]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("bedrock: the tool's input schema is not JSON: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	const loc = "urn:usermemory:tool-input"
	if err := comp.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("bedrock: the tool's input schema: %w", err)
	}
	s, err := comp.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("bedrock: the tool's input schema does not compile: %w", err)
	}
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = make(map[string]*jsonschema.Schema)
	}
	c.m[key] = s
	return s, nil
}

// noLoader refuses every external reference: a tool schema is
// self-contained and never makes the model client read a file or the
// network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q not allowed", url)
}

// validateInput checks input against the schema. Its error names the
// place and the keyword that failed, never a value.
func validateInput(s *jsonschema.Schema, input []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return malformed("tool input is not JSON")
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return malformed("tool input does not match the tool's schema")
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	keyword := ""
	if ve.ErrorKind != nil {
		if kp := ve.ErrorKind.KeywordPath(); len(kp) > 0 {
			keyword = kp[len(kp)-1]
		}
	}
	return malformed("tool input does not match the tool's schema at /%s (%s)", strings.Join(ve.InstanceLocation, "/"), keyword)
}
