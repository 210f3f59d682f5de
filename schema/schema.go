// Package schema holds the contract of the messages usermemory accepts from
// other systems (the extraction message of a gateway) and sends to itself
// (the import message of the import route): the JSON Schema files, embedded so that a program reads the
// very file the repository publishes, and their Go types, each with a
// Validate method and a strict decoder, used by the side that writes a
// message and the side that reads it.
//
// The rules are the schema's: a small schema-driven check (check.go) reads
// the embedded file and applies its keywords; the file is read with
// unknown keywords refused, so that a rule added to the schema that the
// check does not know stops it rather than being skipped. The Go code
// states only what a JSON Schema cannot: turnCount at least
// previousTurnCount, no count in a message marked uncounted, a sentAt
// that is set, UTF-8 in a Go string.
//
// Why the check is not the JSON Schema library, which only the tests link
// (through package schematest, to hold the check to it): docs/decisions.md,
// "Libraries not taken".
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
