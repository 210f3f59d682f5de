// Package schema holds the JSON Schemas of the messages usermemory accepts
// from other systems, embedded so that a program validates against the very
// file the repository publishes as the contract.
package schema

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed extraction-message.v1.json
var extractionMessageV1 []byte

// ExtractionMessageV1URL is the $id of the schema of the extraction message,
// version 1.
const ExtractionMessageV1URL = "https://github.com/usermemory/usermemory/schema/extraction-message.v1.json"

// ExtractionMessageV1 returns a copy of the JSON Schema (draft 2020-12) of
// the SQS message a gateway sends after every answer, version 1.
func ExtractionMessageV1() []byte {
	return bytes.Clone(extractionMessageV1)
}

// CompileExtractionMessageV1 compiles the schema of the extraction message,
// version 1, with formats (date-time) asserted. Compile it once, at start:
// the result is safe for concurrent use. Validate values decoded by
// jsonschema.UnmarshalJSON, which keeps numbers exact. It fails only when
// the embedded file is not a valid schema.
func CompileExtractionMessageV1() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(extractionMessageV1))
	if err != nil {
		return nil, fmt.Errorf("schema: parse extraction message schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(ExtractionMessageV1URL, doc); err != nil {
		return nil, fmt.Errorf("schema: add extraction message schema: %w", err)
	}
	sch, err := c.Compile(ExtractionMessageV1URL)
	if err != nil {
		return nil, fmt.Errorf("schema: compile extraction message schema: %w", err)
	}
	return sch, nil
}
