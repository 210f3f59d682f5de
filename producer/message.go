package producer

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/usermemory/usermemory/schema"
)

// Version is the version of the message format this package writes and
// the extractor reads.
const Version = schema.ExtractionMessageVersion

// MaxTurns is the most turns one message carries; a producer keeps the
// newest ones.
const MaxTurns = schema.MaxTurns

// Message is the SQS message a gateway sends after every answer of a
// thread, version 1: schema.ExtractionMessage, the Go form of
// schema/extraction-message.v1.json, whose JSON members its fields are.
// The extractor decodes the same type, without linking this package.
type Message = schema.ExtractionMessage

// Turn is one turn of a thread. Role is "user", "assistant" or "tool".
type Turn = schema.Turn

// Meta carries the gateway's IDs of the call, for the trace and the logs.
// Each is printable ASCII without spaces, at most 256 bytes.
type Meta = schema.Meta

// GroupID returns the FIFO MessageGroupId of the messages of one user; it
// is schema.GroupID: "tenantId/userId", or "sha256:" and the hex SHA-256
// of it when that is over the 128 characters SQS allows.
func GroupID(tenantID, userID string) string { return schema.GroupID(tenantID, userID) }

// DeduplicationID returns the FIFO MessageDeduplicationId of a counted
// message: the hex SHA-256 of tenant, user, thread and turn count, each
// followed by a zero byte, 64 characters. The same answer sent twice
// within SQS's five-minute window is delivered once.
func DeduplicationID(tenantID, userID, threadID string, turnCount int) string {
	return deduplicationID(tenantID, userID, threadID, strconv.Itoa(turnCount))
}

// DigestDeduplicationID returns the FIFO MessageDeduplicationId of an
// uncounted message: the construction of [DeduplicationID] with digest,
// the memory.TurnsDigest of the turns it sends ("#" included), in place
// of the turn count. The same turns sent twice within SQS's five-minute
// window are delivered once.
func DigestDeduplicationID(tenantID, userID, threadID, digest string) string {
	return deduplicationID(tenantID, userID, threadID, digest)
}

// deduplicationID is the hex SHA-256 of the four parts, each followed by
// a zero byte.
func deduplicationID(tenantID, userID, threadID, mark string) string {
	h := sha256.New()
	for _, s := range []string{tenantID, userID, threadID, mark} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
