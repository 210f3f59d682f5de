package schema

import (
	"bytes"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/memory"
)

// TestCheckerReadsTheSchema checks that the schema-driven check reads the
// embedded schema, and refuses a schema with a rule it would not apply
// rather than skip the rule.
func TestCheckerReadsTheSchema(t *testing.T) {
	if _, err := messageRule(); err != nil {
		t.Fatalf("the embedded schema: %v", err)
	}
	edits := map[string][2]string{
		"a keyword it does not apply": {`"maxItems": 2000,`, `"maxItems": 2000, "minItems": 1,`},
		"a type it does not know":     {`"type": "array"`, `"type": "number"`},
		"a list of types":             {`"type": "array"`, `"type": ["array", "null"]`},
		"a format it does not know":   {`"format": "date-time"`, `"format": "email"`},
		"a reference it cannot find":  {`"$ref": "#/$defs/count"`, `"$ref": "#/$defs/counts"`},
		"a reference outside":         {`"$ref": "#/$defs/count"`, `"$ref": "other.json#/$defs/count"`},
		"a pattern Go cannot read":    {`"pattern": "^[!-~]{0,256}$"`, `"pattern": "^(?=a)$"`},
	}
	for name, e := range edits {
		if !bytes.Contains(extractionMessageV1, []byte(e[0])) {
			t.Fatalf("%s: the schema lacks %s", name, e[0])
		}
		doc := strings.Replace(string(extractionMessageV1), e[0], e[1], 1)
		if _, err := compile([]byte(doc)); err == nil {
			t.Errorf("%s: compile accepts %s", name, e[1])
		}
	}
}

// TestIDPatternIsValidID holds the schema's ID rule ($defs/id) and the
// core's, memory.ValidID, to each other: every byte alone, and lengths
// around the limit.
func TestIDPatternIsValidID(t *testing.T) {
	root, err := messageRule()
	if err != nil {
		t.Fatal(err)
	}
	id := root.Defs["id"]
	ids := []string{"", strings.Repeat("a", memory.MaxIDLen), strings.Repeat("a", memory.MaxIDLen+1), "acme/u", "é"}
	for b := range 256 {
		ids = append(ids, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	for _, s := range ids {
		if schemaOK, coreOK := len(id.check(s, "", nil)) == 0, memory.ValidID(s); schemaOK != coreOK {
			t.Errorf("%q: the schema accepts it %v, memory.ValidID %v", s, schemaOK, coreOK)
		}
	}
}

// TestImportCheckerReadsTheSchema checks that the schema-driven check
// reads the embedded import schema, and that its ID rule is the
// extraction message's.
func TestImportCheckerReadsTheSchema(t *testing.T) {
	root, err := importRule()
	if err != nil {
		t.Fatalf("the embedded import schema: %v", err)
	}
	ext, err := messageRule()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := root.Defs["id"].Pattern, ext.Defs["id"].Pattern; got != want {
		t.Errorf("import $defs/id pattern %q, extraction's %q", got, want)
	}
	if got, want := root.Defs["traceValue"].Pattern, ext.Defs["traceValue"].Pattern; got != want {
		t.Errorf("import $defs/traceValue pattern %q, extraction's %q", got, want)
	}
}
