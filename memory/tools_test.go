package memory_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/usermemory/usermemory/memory"
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
	defs := append([]memory.ToolDefinition{memory.OperationsTool(8, 200)}, memory.UserTools()...)
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
	cut, _ := memory.OperationsTool(8, 200).WithTopLevel("type", "properties", "required")
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
