package main

import (
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/schema"
)

// errMalformed is the cause of a record whose body is not a valid message:
// not JSON, not the schema, or counts going backwards. Its text holds
// schema locations only, never a value of the body.
type errMalformed struct{ reason string }

func (e *errMalformed) Error() string { return "malformed message: " + e.reason }

// errOversized is the cause of a record whose body is over the size limit.
var errOversized = errors.New("message over the size limit")

// decode checks the size of body, decodes it strictly and validates it
// (schema.DecodeExtractionMessageV1) and returns the message. Errors:
// errOversized, or an *errMalformed whose reason is "not JSON" or "not the
// schema at" and where (JSON pointers and keywords, never a value, nor the
// name of an unknown member).
func (h *Handler) decode(body string) (schema.ExtractionMessage, error) {
	if len(body) > h.maxBodyBytes {
		return schema.ExtractionMessage{}, errOversized
	}
	m, err := schema.DecodeExtractionMessageV1([]byte(body))
	var bad *schema.InvalidError
	switch {
	case errors.As(err, &bad) && bad.NotJSON:
		return schema.ExtractionMessage{}, &errMalformed{reason: "not JSON"}
	case errors.As(err, &bad):
		return schema.ExtractionMessage{}, &errMalformed{reason: "not the schema at " + bad.Where()}
	case err != nil:
		return schema.ExtractionMessage{}, &errMalformed{reason: "unreadable"}
	}
	return m, nil
}

// sentAt returns the time the record was sent: the queue's SentTimestamp
// attribute (epoch milliseconds, set by SQS on AWS's clock), or the
// message's own sentAt when the attribute is missing or unreadable, and
// which of the two it used.
func sentAt(rec events.SQSMessage, m schema.ExtractionMessage) (time.Time, string) {
	if raw := rec.Attributes["SentTimestamp"]; raw != "" {
		if ms, err := strconv.ParseInt(raw, 10, 64); err == nil && ms > 0 {
			return time.UnixMilli(ms).UTC(), "sqs"
		}
	}
	return m.SentAt.UTC(), "message"
}

// extractRequest returns the extraction m asks for, all but its SentAt:
// the scope from the message envelope only, the thread and its title, the
// counts or their absence, the turns and the context turns, the model override and the
// trace IDs. It is the one copy of the message into the core's request;
// TestExtractRequestCopiesEveryMember fails when a member is added to one
// of the two types and not here.
func extractRequest(m schema.ExtractionMessage) memory.ExtractRequest {
	req := memory.ExtractRequest{
		Scope:             memory.Scope{TenantID: m.TenantID, UserID: m.UserID},
		ThreadID:          m.ThreadID,
		ThreadTitle:       m.ThreadTitle,
		PreviousTurnCount: m.PreviousTurnCount,
		TurnCount:         m.TurnCount,
		Uncounted:         m.Uncounted,
		Turns:             memoryTurns(m.Turns),
		ContextTurns:      memoryTurns(m.ContextTurns),
		CheapModelID:      m.CheapModelID,
	}
	if m.Meta != nil {
		req.Meta = memory.CallMeta{RequestID: m.Meta.RequestID, TraceID: m.Meta.TraceID}
	}
	return req
}

// memoryTurns returns the turns of a message as the core's; nil for none.
func memoryTurns(turns []schema.Turn) []memory.Turn {
	if len(turns) == 0 {
		return nil
	}
	out := make([]memory.Turn, len(turns))
	for i, t := range turns {
		out[i] = memory.Turn{Role: t.Role, Text: t.Text}
	}
	return out
}
