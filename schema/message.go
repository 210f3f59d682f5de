package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// Limits of the extraction message, version 1.
const (
	// ExtractionMessageVersion is the value of the version member.
	ExtractionMessageVersion = 1
	// MaxTurns is the most turns one message carries (maxItems of turns).
	MaxTurns = 2000
	// MaxMessageBytes is the SQS limit of one message, body and attributes
	// together: 256 KiB.
	MaxMessageBytes = 256 * 1024
	// MaxThreadTitleChars is the longest threadTitle, in characters
	// (maxLength of threadTitle): memory.MaxThreadTitleChars, the title a
	// fact keeps.
	MaxThreadTitleChars = memory.MaxThreadTitleChars
	// MaxCount is the largest turn count (maximum of previousTurnCount and
	// turnCount).
	MaxCount = 1<<31 - 1
)

// ExtractionMessage is the SQS message a gateway sends after every answer
// of a thread, version 1: the Go form of extraction-message.v1.json, whose
// JSON members its fields are. The producer writes it, checked with
// [ExtractionMessage.Validate], and the extractor reads it with
// [DecodeExtractionMessageV1]; both hold it to the schema's own rules.
type ExtractionMessage struct {
	// Version is ExtractionMessageVersion.
	Version int `json:"version"`
	// TenantID and UserID name the user whose facts the extraction writes:
	// the only source of that scope. Both are 1 to 128 of A-Z a-z 0-9 and
	// - _ . : @ | + =.
	TenantID string `json:"tenantId"`
	UserID   string `json:"userId"`
	// ThreadID is the thread of the turns, with the same rule as the IDs.
	ThreadID string `json:"threadId"`
	// ThreadTitle, optional, is the thread's title as a person knows it:
	// 1 to [MaxThreadTitleChars] characters, kept with the facts the
	// extraction sets (memory.ExtractRequest).
	ThreadTitle string `json:"threadTitle,omitempty"`
	// PreviousTurnCount is the thread's turn count before the call that
	// just ended; TurnCount the count now, at least PreviousTurnCount.
	PreviousTurnCount int `json:"previousTurnCount"`
	TurnCount         int `json:"turnCount"`
	// Turns are the turns since the last extraction, oldest first.
	Turns []Turn `json:"turns"`
	// ContextTurns, optional, are the turns just before Turns, oldest
	// first, already read: context for the model, never counted in the
	// turn counts nor in the deduplication ID (memory.ExtractRequest).
	ContextTurns []Turn `json:"contextTurns,omitempty"`
	// SentAt is when the message was sent (RFC 3339).
	SentAt time.Time `json:"sentAt"`
	// CheapModelID, when not empty, overrides the configured cheap model.
	CheapModelID string `json:"cheapModelId,omitempty"`
	// Meta carries trace IDs; never user data.
	Meta *Meta `json:"meta,omitempty"`
}

// Turn is one turn of a thread. Role is "user", "assistant" or "tool".
type Turn struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// Meta carries the gateway's IDs of the call, for the trace and the logs.
// Each is printable ASCII without spaces, at most 256 bytes.
type Meta struct {
	RequestID string `json:"requestId,omitempty"`
	TraceID   string `json:"traceId,omitempty"`
}

// maxGroupIDLen is the longest MessageGroupId SQS accepts.
const maxGroupIDLen = 128

// GroupID returns the FIFO MessageGroupId of the messages of one user:
// "tenantId/userId", so that the extractions of one user run one at a time
// and in order. When that is over the 128 characters SQS allows (two IDs
// of up to 128 bytes each), it is "sha256:" and the hex SHA-256 of it:
// still exactly one group per user.
func GroupID(tenantID, userID string) string {
	g := tenantID + "/" + userID
	if len(g) <= maxGroupIDLen {
		return g
	}
	sum := sha256.Sum256([]byte(g))
	return "sha256:" + hex.EncodeToString(sum[:])
}
