// Package schematest holds the reference against which tests hold the
// validators of package schema: the schemas compiled by the JSON Schema
// library santhosh-tekuri/jsonschema (draft 2020-12, formats asserted).
//
// Only tests import it, so that no function links the library.
package schematest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/usermemory/usermemory/schema"
)

// CompileExtractionMessageV1 compiles the schema of the extraction message,
// version 1, with formats (date-time) asserted. The result is safe for
// concurrent use. It fails only when the embedded file is not a valid
// schema.
func CompileExtractionMessageV1() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.ExtractionMessageV1()))
	if err != nil {
		return nil, fmt.Errorf("schematest: parse extraction message schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schema.ExtractionMessageV1URL, doc); err != nil {
		return nil, fmt.Errorf("schematest: add extraction message schema: %w", err)
	}
	sch, err := c.Compile(schema.ExtractionMessageV1URL)
	if err != nil {
		return nil, fmt.Errorf("schematest: compile extraction message schema: %w", err)
	}
	return sch, nil
}

// CompileImportMessageV1 compiles the schema of the import message,
// version 1, as [CompileExtractionMessageV1] compiles the extraction
// message's.
func CompileImportMessageV1() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.ImportMessageV1()))
	if err != nil {
		return nil, fmt.Errorf("schematest: parse import message schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schema.ImportMessageV1URL, doc); err != nil {
		return nil, fmt.Errorf("schematest: add import message schema: %w", err)
	}
	sch, err := c.Compile(schema.ImportMessageV1URL)
	if err != nil {
		return nil, fmt.Errorf("schematest: compile import message schema: %w", err)
	}
	return sch, nil
}

// Verdict is what the library says of a body: whether it is one JSON
// value, and where it breaks the schema, in the form of
// schema.Violation.String ("/turns/1/role (enum)"), sorted and without
// repeats. A valid body has JSON set and no violations.
type Verdict struct {
	JSON       bool
	Violations []string
}

// Check reads body as the library does and validates it with sch.
func Check(sch *jsonschema.Schema, body []byte) Verdict {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return Verdict{}
	}
	out := Verdict{JSON: true}
	err = sch.Validate(v)
	if err == nil {
		return out
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return Verdict{JSON: true, Violations: []string{"? (" + err.Error() + ")"}}
	}
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			kw := e.ErrorKind.KeywordPath()
			last := ""
			if len(kw) > 0 {
				last = kw[len(kw)-1]
			}
			if len(kw) > 1 && kw[len(kw)-2] == "dependentRequired" {
				last = "dependentRequired" // the path ends with the member that requires
			}
			seen[schema.Violation{Pointer: pointer(e.InstanceLocation), Keyword: last}.String()] = true
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	for k := range seen {
		out.Violations = append(out.Violations, k)
	}
	sort.Strings(out.Violations)
	return out
}

// pointer returns the JSON pointer of an instance location.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}
