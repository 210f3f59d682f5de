// Package schema holds the contract of the messages usermemory accepts from
// other systems: the JSON Schema files, embedded so that a program reads the
// very file the repository publishes, and their Go types, each with a
// Validate method and a strict decoder, used by the side that writes a
// message and the side that reads it.
//
// The functions link no JSON Schema library; package schematest holds the
// library-backed reference that tests hold the Go types to.
package schema

import (
	"bytes"
	_ "embed"
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
