package schema_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/schema"
)

// jsonMembers returns the JSON member names of a struct type and whether
// each is written when empty.
func jsonMembers(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = opts != "omitempty"
	}
	return out
}

// TestGoTypeMatchesSchema holds the Go types to the schema: every JSON
// member of ExtractionMessage (its JSON form, Wire), Turn and Meta is a property of the schema at the same
// place and vice versa (a turn, of turns or contextTurns, at $defs/turn), and the members a Go type always writes are the
// schema's required ones.
func TestGoTypeMatchesSchema(t *testing.T) {
	type object struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	var top object
	if err := json.Unmarshal(schema.ExtractionMessageV1(), &top); err != nil {
		t.Fatal(err)
	}
	var turns, contextTurns, turn, meta object
	for _, x := range []struct {
		raw json.RawMessage
		dst *object
	}{{top.Properties["turns"], &turns}, {top.Properties["contextTurns"], &contextTurns},
		{top.Properties["meta"], &meta}, {top.Defs["turn"], &turn}} {
		if err := json.Unmarshal(x.raw, x.dst); err != nil {
			t.Fatal(err)
		}
	}
	// Both arrays of turns are arrays of the one turn definition.
	for name, items := range map[string]json.RawMessage{"turns": turns.Items, "contextTurns": contextTurns.Items} {
		if got := strings.Join(strings.Fields(string(items)), ""); got != `{"$ref":"#/$defs/turn"}` {
			t.Errorf("items of %s = %s, want the turn definition", name, got)
		}
	}
	tests := []struct {
		goType reflect.Type
		obj    object
	}{
		{reflect.TypeFor[schema.Wire](), top},
		{reflect.TypeFor[schema.Turn](), turn},
		{reflect.TypeFor[schema.Meta](), meta},
	}
	for _, tt := range tests {
		members := jsonMembers(tt.goType)
		for name := range members {
			if _, ok := tt.obj.Properties[name]; !ok {
				t.Errorf("%s member %q is not in the schema", tt.goType, name)
			}
		}
		for name := range tt.obj.Properties {
			if _, ok := members[name]; !ok {
				t.Errorf("schema property %q is not a member of %s", name, tt.goType)
			}
		}
		var always []string
		for name, written := range members {
			if written {
				always = append(always, name)
			}
		}
		sort.Strings(always)
		required := append([]string(nil), tt.obj.Required...)
		sort.Strings(required)
		if !slices.Equal(always, required) {
			t.Errorf("%s always writes %v, the schema requires %v", tt.goType, always, required)
		}
	}
}
