package schema

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	stdjson "encoding/json"
	"sync"
	"time"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
)

//go:embed import-message.v1.json
var importMessageV1 []byte

// ImportMessageV1URL is the $id of the schema of the import message,
// version 1.
const ImportMessageV1URL = "https://github.com/usermemory/usermemory/schema/import-message.v1.json"

// ImportMessageV1 returns a copy of the JSON Schema (draft 2020-12) of the
// SQS message the import route sends, version 1.
func ImportMessageV1() []byte {
	return bytes.Clone(importMessageV1)
}

// ImportMessageVersion is the value of the version member of an
// [ImportMessage].
const ImportMessageVersion = 1

// ImportKind is the kind member of an [ImportMessage]: the one member
// that tells it from an [ExtractionMessage] on the same queue.
const ImportKind = "import"

// ImportMessage is the SQS message the import route sends when a user
// asks to import what another assistant remembers, version 1: the Go
// form of import-message.v1.json. It goes to the extraction queue, in the
// user's message group ([GroupID]), with the deduplication ID
// [ImportDeduplicationID]; the extractor tells it from an extraction
// message by its kind ([IsImportMessage]).
type ImportMessage struct {
	// Version (version) is 1.
	Version int `json:"version"`
	// Kind (kind) is ImportKind.
	Kind string `json:"kind"`
	// TenantID (tenantId) and UserID (userId) name the user, as in an
	// extraction message.
	TenantID string `json:"tenantId"`
	UserID   string `json:"userId"`
	// ImportID (importId) names the import, with the rule of the IDs.
	ImportID string `json:"importId"`
	// Source (source) is the assistant the list comes from, as the user
	// named it: 1 to memory.MaxImportSourceChars characters.
	Source string `json:"source"`
	// Text (text) is the pasted text, 1 to memory.MaxImportChars
	// characters.
	Text string `json:"text"`
	// SentAt (sentAt) is when the route accepted the import.
	SentAt time.Time `json:"sentAt"`
	// CheapModelID (cheapModelId), optional, overrides the cheap model.
	CheapModelID string `json:"cheapModelId,omitempty"`
	// Meta (meta), optional, carries the IDs of the request.
	Meta *Meta `json:"meta,omitempty"`
}

// IsImportMessage reports whether body is a JSON object whose kind member
// is ImportKind, without validating the rest.
func IsImportMessage(body []byte) bool {
	var head struct {
		Kind *string `json:"kind"`
	}
	// Case-sensitive, unknown members ignored: only the kind is read.
	if json.Unmarshal(body, &head) != nil || head.Kind == nil {
		return false
	}
	return *head.Kind == ImportKind
}

// importRule returns the schema of the import message, version 1, read
// once from the embedded file, or why the checker cannot apply it.
var importRule = sync.OnceValues(func() (*rule, error) {
	return compile(importMessageV1)
})

// checkImportValue returns the violations of value, a JSON value read
// into any, against the embedded import schema.
func checkImportValue(value any) []Violation {
	root, err := importRule()
	if err != nil {
		panic(err) // The embedded file; TestImportCheckerReadsTheSchema holds it readable.
	}
	return root.check(value, "", nil)
}

// DecodeImportMessageV1 decodes body strictly and validates it against
// import-message.v1.json; errors are *InvalidError, as
// [DecodeExtractionMessageV1]'s: the body is read once as plain JSON (one
// value, UTF-8, no member twice), checked against the embedded schema,
// then decoded with unknown members refused. SentAt comes back in UTC.
func DecodeImportMessageV1(body []byte) (ImportMessage, error) {
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return ImportMessage{}, readError(err, body)
	}
	if err := invalid(checkImportValue(value)); err != nil {
		return ImportMessage{}, err
	}
	var m ImportMessage
	if err := json.Unmarshal(body, &m, json.RejectUnknownMembers(true)); err != nil {
		return ImportMessage{}, decodeError(err, body)
	}
	m.SentAt = m.SentAt.UTC()
	return m, nil
}

// Validate checks m against import-message.v1.json before it is sent: m
// as JSON meets the schema, its sentAt is set, and its source and text
// are valid UTF-8 (a Go string may hold any bytes; JSON may not). It
// returns nil or an *InvalidError listing every violation. The size of
// the message is the sender's check.
func (m ImportMessage) Validate() error {
	var v []Violation
	if m.SentAt.IsZero() {
		v = append(v, sentAtFormat)
	}
	for name, s := range map[string]string{"/source": m.Source, "/text": m.Text} {
		if !utf8.ValidString(s) {
			v = append(v, Violation{name, "utf8", "valid UTF-8"})
		}
	}
	body, err := stdjson.Marshal(m)
	var value any
	if err == nil {
		err = json.Unmarshal(body, &value)
	}
	if err != nil {
		// Only a time JSON cannot hold (a year past 9999) is not written.
		v = append(v, sentAtFormat)
	} else {
		v = append(v, checkImportValue(value)...)
	}
	return invalid(v)
}

// ImportDeduplicationID returns the FIFO MessageDeduplicationId of an
// import: the hex SHA-256 of the tenant, the user, the word "import" and
// the import ID, each followed by a zero byte, 64 characters. An import
// sent twice within SQS's five-minute window is delivered once; a later
// copy is a duplicate to the store (its mark).
func ImportDeduplicationID(tenantID, userID, importID string) string {
	h := sha256.New()
	for _, s := range []string{tenantID, userID, ImportKind, importID} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
