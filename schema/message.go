package schema

import (
	"crypto/sha256"
	"encoding/hex"
	stdjson "encoding/json"
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
// of a thread, version 1: the Go form of extraction-message.v1.json. Its
// JSON ([ExtractionMessage.MarshalJSON]) has one member per field but
// Uncounted, under the names the field comments give. The producer writes
// it, checked with [ExtractionMessage.Validate], and the extractor reads
// it with [DecodeExtractionMessageV1]; both hold it to the schema's own
// rules.
//
// A message is counted (PreviousTurnCount and TurnCount are sent, 0
// included) unless Uncounted is set: the zero value is a counted message,
// as every message was before uncounted ones existed. An uncounted message
// sends neither count (both fields must be 0): its sender's caller judged
// the extraction due, and its watermark is the digest of its turns
// (memory.TurnsDigest).
type ExtractionMessage struct {
	// Version (version) is ExtractionMessageVersion.
	Version int
	// TenantID (tenantId) and UserID (userId) name the user whose facts
	// the extraction writes: the only source of that scope. Both are 1 to
	// 128 of A-Z a-z 0-9 and - _ . : @ | + =.
	TenantID string
	UserID   string
	// ThreadID (threadId) is the thread of the turns, with the same rule
	// as the IDs.
	ThreadID string
	// ThreadTitle (threadTitle), optional, is the thread's title as a
	// person knows it: 1 to [MaxThreadTitleChars] characters, kept with
	// the facts the extraction sets (memory.ExtractRequest).
	ThreadTitle string
	// PreviousTurnCount (previousTurnCount) is the thread's turn count
	// before the call that just ended; TurnCount (turnCount) the count
	// now, at least PreviousTurnCount. Neither is sent when Uncounted.
	PreviousTurnCount int
	TurnCount         int
	// Uncounted leaves both counts out of the message; it is not a member
	// of its own: a message read without counts has it set.
	Uncounted bool
	// Turns (turns) are the turns since the last extraction, oldest first.
	Turns []Turn
	// ContextTurns (contextTurns), optional, are the turns just before
	// Turns, oldest first, already read: context for the model, never
	// counted in the turn counts nor in the digest or the deduplication
	// ID (memory.ExtractRequest).
	ContextTurns []Turn
	// SentAt (sentAt) is when the message was sent (RFC 3339).
	SentAt time.Time
	// CheapModelID (cheapModelId), when not empty, overrides the
	// configured cheap model.
	CheapModelID string
	// Meta (meta) carries trace IDs; never user data.
	Meta *Meta
}

// wire is the JSON form of an [ExtractionMessage]: its members, each
// optional one left out when empty, the counts left out of an uncounted
// message.
type wire struct {
	Version           int       `json:"version"`
	TenantID          string    `json:"tenantId"`
	UserID            string    `json:"userId"`
	ThreadID          string    `json:"threadId"`
	ThreadTitle       string    `json:"threadTitle,omitempty"`
	PreviousTurnCount *int      `json:"previousTurnCount,omitempty"`
	TurnCount         *int      `json:"turnCount,omitempty"`
	Turns             []Turn    `json:"turns"`
	ContextTurns      []Turn    `json:"contextTurns,omitempty"`
	SentAt            time.Time `json:"sentAt"`
	CheapModelID      string    `json:"cheapModelId,omitempty"`
	Meta              *Meta     `json:"meta,omitempty"`
}

// wire returns the JSON form of m; no turns are written [], never null.
func (m ExtractionMessage) wire() wire {
	if m.Turns == nil {
		m.Turns = []Turn{}
	}
	w := wire{Version: m.Version, TenantID: m.TenantID, UserID: m.UserID, ThreadID: m.ThreadID, ThreadTitle: m.ThreadTitle,
		Turns: m.Turns, ContextTurns: m.ContextTurns, SentAt: m.SentAt, CheapModelID: m.CheapModelID, Meta: m.Meta}
	if !m.Uncounted {
		w.PreviousTurnCount, w.TurnCount = &m.PreviousTurnCount, &m.TurnCount
	}
	return w
}

// message returns the message of the JSON form w: uncounted when it has
// neither count. One count without the other is refused before (by the
// schema, or by UnmarshalJSON); the missing one would read as 0.
func (w wire) message() ExtractionMessage {
	m := ExtractionMessage{Version: w.Version, TenantID: w.TenantID, UserID: w.UserID, ThreadID: w.ThreadID, ThreadTitle: w.ThreadTitle,
		Uncounted: w.PreviousTurnCount == nil && w.TurnCount == nil,
		Turns:     w.Turns, ContextTurns: w.ContextTurns, SentAt: w.SentAt, CheapModelID: w.CheapModelID, Meta: w.Meta}
	if w.PreviousTurnCount != nil {
		m.PreviousTurnCount = *w.PreviousTurnCount
	}
	if w.TurnCount != nil {
		m.TurnCount = *w.TurnCount
	}
	return m
}

// MarshalJSON returns the JSON of m as encoding/json writes its members in
// the order of the fields: previousTurnCount and turnCount always for a
// counted message (0 included), never for an uncounted one. It does not
// validate m ([ExtractionMessage.Validate] does).
func (m ExtractionMessage) MarshalJSON() ([]byte, error) {
	return stdjson.Marshal(m.wire())
}

// UnmarshalJSON sets m from JSON as encoding/json reads it, Uncounted when
// neither count is present. One count without the other, which m cannot
// hold, is an *InvalidError (dependentRequired); nothing else is
// validated ([DecodeExtractionMessageV1] reads a body strictly and
// validates it).
func (m *ExtractionMessage) UnmarshalJSON(b []byte) error {
	var w wire
	if err := stdjson.Unmarshal(b, &w); err != nil {
		return err
	}
	switch {
	case w.PreviousTurnCount != nil && w.TurnCount == nil:
		return &InvalidError{Violations: []Violation{{"", "dependentRequired", "has turnCount with previousTurnCount"}}}
	case w.TurnCount != nil && w.PreviousTurnCount == nil:
		return &InvalidError{Violations: []Violation{{"", "dependentRequired", "has previousTurnCount with turnCount"}}}
	}
	*m = w.message()
	return nil
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
