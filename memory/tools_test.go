package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// topLevel returns the sorted keywords of the top-level object of a
// tool's input schema, and the schema decoded.
func topLevel(t *testing.T, d memory.ToolDefinition) ([]string, map[string]any) {
	t.Helper()
	var schema map[string]any
	if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
		t.Fatalf("%s: input schema: %v", d.Name, err)
	}
	return slices.Sorted(maps.Keys(schema)), schema
}

func TestWithTopLevelKeepsOnlyWhatNovaSupports(t *testing.T) {
	defs := append([]memory.ToolDefinition{memory.OperationsTool(8, 200, true)}, memory.UserTools()...)
	for _, d := range defs {
		full, fullSchema := topLevel(t, d)
		if !slices.Contains(full, "additionalProperties") {
			t.Fatalf("%s: the full schema has no top-level additionalProperties (%q): the test checks nothing", d.Name, full)
		}
		cut, err := d.WithTopLevel("type", "properties", "required")
		if err != nil {
			t.Fatalf("%s: WithTopLevel: %v", d.Name, err)
		}
		got, schema := topLevel(t, cut)
		if want := []string{"properties", "required", "type"}; !slices.Equal(got, want) {
			t.Errorf("%s: top-level keywords %q, want %q", d.Name, got, want)
		}
		// Nested schemas are whole: the same properties as before.
		a, _ := json.Marshal(fullSchema["properties"])
		b, _ := json.Marshal(schema["properties"])
		if string(a) != string(b) {
			t.Errorf("%s: properties changed:\n got %s\nwant %s", d.Name, b, a)
		}
		if cut.Name != d.Name || cut.Description != d.Description || cut.NeedsApproval != d.NeedsApproval {
			t.Errorf("%s: WithTopLevel changed more than the schema: %+v", d.Name, cut)
		}
		if again, _ := topLevel(t, d); !slices.Equal(again, full) {
			t.Errorf("%s: WithTopLevel changed the original definition", d.Name)
		}
	}
	// The operations tool keeps additionalProperties:false on each
	// operation, below the top level.
	cut, _ := memory.OperationsTool(8, 200, true).WithTopLevel("type", "properties", "required")
	var s struct {
		Properties struct {
			Operations struct {
				Items map[string]any `json:"items"`
			} `json:"operations"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(cut.InputSchema, &s); err != nil || s.Properties.Operations.Items["additionalProperties"] != false {
		t.Errorf("operation items %v (%v), want additionalProperties false kept", s.Properties.Operations.Items, err)
	}
}

func TestWithTopLevelRefusesASchemaThatIsNotAnObject(t *testing.T) {
	for _, raw := range []string{``, `[]`, `null`, `{"type":"object"} {}`, `"x"`} {
		d := memory.ToolDefinition{Name: "t", InputSchema: json.RawMessage(raw)}
		if _, err := d.WithTopLevel("type"); err == nil {
			t.Errorf("WithTopLevel of %q: no error", raw)
		}
	}
}

func TestOperationsToolSchemaIsJSON(t *testing.T) {
	tool := memory.OperationsTool(60, 200, true)
	var v map[string]any
	if err := json.Unmarshal(tool.InputSchema, &v); err != nil {
		t.Fatalf("schema: %v", err)
	}
	for _, d := range memory.UserTools() {
		if err := json.Unmarshal(d.InputSchema, &v); err != nil {
			t.Errorf("%s schema: %v", d.Name, err)
		}
	}
}

func TestParseOperations(t *testing.T) {
	ops, err := memory.ParseOperations([]byte(`{"operations":[{"op":"SET","key":"name","value":"Ana"},{"op":"DELETE","key":"city"}]}`))
	if err != nil || len(ops) != 2 || ops[0].Value != "Ana" || ops[1].Op != "DELETE" {
		t.Fatalf("ParseOperations = %+v, %v", ops, err)
	}
	if ops, err := memory.ParseOperations([]byte(`{"operations":[]}`)); err != nil || len(ops) != 0 {
		t.Errorf("empty list = %v, %v", ops, err)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"operations":{}}`, `{"operations":[{"op":1}]}`, `{"operations":[],"x":1}`, `{"operations":[]} {}`, `null`} {
		if _, err := memory.ParseOperations([]byte(bad)); err == nil || !isMalformed(err) {
			t.Errorf("ParseOperations(%q) = %v, want ErrMalformedAnswer", bad, err)
		}
	}
}

// TestOperationJSONIsTheToolInput holds Operation's JSON form to the
// operations tool: its members are the schema's item properties, the
// optional ones are left out when empty, and ParseOperations reads back
// what it writes.
func TestOperationJSONIsTheToolInput(t *testing.T) {
	full := memory.Operation{Op: "SET", Key: "k", Value: "v", Evidence: "e", ValidUntil: "2026-12-31", Category: memory.Categories[0]}
	_, schema := topLevel(t, memory.OperationsTool(4, 100, true))
	items := walkMap(t, schema, "properties", "operations", "items", "properties")
	for _, tt := range []struct {
		op   memory.Operation
		want []string
	}{
		{full, slices.Sorted(maps.Keys(items))},
		{memory.Operation{Op: "DELETE", Key: "k"}, []string{"key", "op"}},
	} {
		b, err := json.Marshal(tt.op)
		if err != nil {
			t.Fatal(err)
		}
		var members map[string]any
		if err := json.Unmarshal(b, &members); err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(members)); !slices.Equal(got, tt.want) {
			t.Errorf("%s has members %v, want %v", b, got, tt.want)
		}
		ops, err := memory.ParseOperations([]byte(`{"operations":[` + string(b) + `]}`))
		if err != nil || len(ops) != 1 || ops[0] != tt.op {
			t.Errorf("ParseOperations(%s) = %+v, %v; want %+v", b, ops, err, tt.op)
		}
	}
}

// walkMap returns the object at path in v.
func walkMap(t *testing.T, v map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, p := range path {
		next, ok := v[p].(map[string]any)
		if !ok {
			t.Fatalf("no object at %q of %v", p, path)
		}
		v = next
	}
	return v
}

func isMalformed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "malformed") && errors.Is(err, memory.ErrMalformedAnswer)
}

func TestExecuteTool(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true})
	remember := memory.ToolCall{Name: memory.RememberToolName, Input: json.RawMessage(`{"key":"Preferred Language","value":"Portuguese"}`)}
	if _, err := s.ExecuteTool(ctx, memorytest.Ana, remember, false); memory.ErrorCode(err) != memory.CodeApprovalRequired {
		t.Errorf("without approval: %v", err)
	}
	if repo.Calls("SetFact") != 0 {
		t.Error("an unapproved remember wrote")
	}
	res, err := s.ExecuteTool(ctx, memorytest.Ana, remember, true)
	if err != nil || res.Fact == nil || res.Fact.Key != "preferred_language" || res.Fact.Origin != memory.OriginRememberTool {
		t.Fatalf("remember = %+v, %v", res, err)
	}
	if got := mustFacts(t, s, memorytest.Ana); len(got) != 1 || got[0].Origin != memory.OriginRememberTool {
		t.Errorf("stored %+v, want the remembered fact of origin remember_tool", got)
	}
	forget := memory.ToolCall{Name: memory.ForgetToolName, Input: json.RawMessage(`{"key":"preferred language"}`)}
	if _, err := s.ExecuteTool(ctx, memorytest.Ana, forget, false); err != nil {
		t.Fatalf("forget: %v", err)
	}
	if facts := mustFacts(t, s, memorytest.Ana); len(facts) != 0 {
		t.Errorf("after forget: %v", facts)
	}
	bad := []struct {
		call memory.ToolCall
		code int64
	}{
		{memory.ToolCall{Name: "rm_rf", Input: json.RawMessage(`{}`)}, memory.CodeUnknownTool},
		{memory.ToolCall{Name: memory.RememberToolName, Input: json.RawMessage(`{"key":"a"}`)}, memory.CodeBadToolInput},
		{memory.ToolCall{Name: memory.RememberToolName, Input: json.RawMessage(`{"key":"a","value":"b","userId":"bob"}`)}, memory.CodeBadToolInput},
		{memory.ToolCall{Name: memory.ForgetToolName, Input: json.RawMessage(`not json`)}, memory.CodeBadToolInput},
		{memory.ToolCall{Name: memory.ForgetToolName, Input: json.RawMessage(`{"key":"a","value":"b"}`)}, memory.CodeBadToolInput},
		{memory.ToolCall{Name: memory.RememberToolName, Input: json.RawMessage(`{"key":"Bad Key!","value":"b"}`)}, memory.CodeInvalidKeyChars},
		{memory.ToolCall{Name: memory.ForgetToolName, Input: json.RawMessage(`{"key":"Bad Key!"}`)}, memory.CodeInvalidKeyChars},
	}
	for _, b := range bad {
		if _, err := s.ExecuteTool(ctx, memorytest.Ana, b.call, true); memory.ErrorCode(err) != b.code {
			t.Errorf("ExecuteTool(%s, %s) = %v, want code %d", b.call.Name, b.call.Input, err, b.code)
		}
	}
	if defs := memory.UserTools(); !defs[0].NeedsApproval || defs[1].NeedsApproval {
		t.Error("only the remember tool needs approval")
	}
}
