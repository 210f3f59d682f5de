package schema

import (
	"errors"
	"time"
)

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
func IsImportMessage(body []byte) bool { return false }

// DecodeImportMessageV1 decodes body strictly and validates it against
// import-message.v1.json; errors are *InvalidError, as
// [DecodeExtractionMessageV1]'s.
func DecodeImportMessageV1(body []byte) (ImportMessage, error) {
	return ImportMessage{}, errors.New("schema: DecodeImportMessageV1: not built yet")
}

// Validate checks m against import-message.v1.json before it is sent.
func (m ImportMessage) Validate() error {
	return errors.New("schema: ImportMessage.Validate: not built yet")
}

// ImportDeduplicationID returns the FIFO MessageDeduplicationId of an
// import: a hash of the tenant, the user and the import ID.
func ImportDeduplicationID(tenantID, userID, importID string) string { return "" }
