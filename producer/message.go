package producer

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// Version is the version of the message format this package writes and
// the extractor reads.
const Version = 1

// MaxTurns is the most turns one message carries; a producer keeps the
// newest ones.
const MaxTurns = 2000

// Message is the SQS message a gateway sends after every answer of a
// thread, version 1: the Go form of schema/extraction-message.v1.json, whose
// JSON members its fields are. The extractor decodes the same type.
type Message struct {
	// Version is 1; Build sets it.
	Version int `json:"version"`
	// TenantID and UserID name the user whose facts the extraction writes:
	// the only source of that scope. Both are memory.ValidID.
	TenantID string `json:"tenantId"`
	UserID   string `json:"userId"`
	// ThreadID is the thread of the turns, a memory.ValidID.
	ThreadID string `json:"threadId"`
	// PreviousTurnCount is the thread's turn count before the call that
	// just ended; TurnCount the count now, at least PreviousTurnCount.
	PreviousTurnCount int `json:"previousTurnCount"`
	TurnCount         int `json:"turnCount"`
	// Turns are the turns since the last extraction, oldest first.
	Turns []Turn `json:"turns"`
	// SentAt is when the message was sent; Build sets it when zero.
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

// DeduplicationID returns the FIFO MessageDeduplicationId of a message: the
// hex SHA-256 of tenant, user, thread and turn count, 64 characters. The
// same answer sent twice within SQS's five-minute window is delivered once.
func DeduplicationID(tenantID, userID, threadID string, turnCount int) string {
	h := sha256.New()
	for _, s := range []string{tenantID, userID, threadID, strconv.Itoa(turnCount)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

var (
	modelIDPattern    = regexp.MustCompile(`^[A-Za-z0-9._:/+-]{1,256}$`)
	traceValuePattern = regexp.MustCompile(`^[!-~]{0,256}$`)
)

// ValidModelID reports whether id may be sent as cheapModelId: 1 to 256
// characters of letters, digits and . _ : / + -.
func ValidModelID(id string) bool { return modelIDPattern.MatchString(id) }

// ValidTraceValue reports whether v may be sent as a Meta field: at most
// 256 printable ASCII characters, no spaces.
func ValidTraceValue(v string) bool { return traceValuePattern.MatchString(v) }

// ValidRole reports whether role is one of the roles of a turn.
func ValidRole(role string) bool {
	switch role {
	case memory.RoleUser, memory.RoleAssistant, memory.RoleTool:
		return true
	}
	return false
}
