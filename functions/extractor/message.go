package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/usermemory/usermemory/producer"
)

// errMalformed is the cause of a record whose body is not a valid message:
// not JSON, not the schema, or counts going backwards. Its text holds
// schema locations only, never a value of the body.
type errMalformed struct{ reason string }

func (e *errMalformed) Error() string { return "malformed message: " + e.reason }

// errOversized is the cause of a record whose body is over the size limit.
var errOversized = errors.New("message over the size limit")

// decode checks the size of body, validates it against the schema and
// returns the message. Errors: errOversized, or an *errMalformed.
func (h *Handler) decode(body string) (producer.Message, error) {
	if len(body) > h.maxBodyBytes {
		return producer.Message{}, errOversized
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		return producer.Message{}, &errMalformed{reason: "not JSON"}
	}
	if err := h.schema.Validate(v); err != nil {
		return producer.Message{}, &errMalformed{reason: "not the schema at " + schemaLocations(err)}
	}
	var m producer.Message
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		// The schema accepted it: only a bug in the Go type gets here.
		return producer.Message{}, &errMalformed{reason: "does not decode into the Go type"}
	}
	if m.TurnCount < m.PreviousTurnCount {
		return producer.Message{}, &errMalformed{reason: "turnCount below previousTurnCount"}
	}
	return m, nil
}

// schemaLocations lists where in the instance the schema failed, as JSON
// pointers with the keyword at fault, without the values themselves: a
// message that fails may carry turn text anywhere.
func schemaLocations(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "?"
	}
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			kw := e.ErrorKind.KeywordPath()
			last := ""
			if len(kw) > 0 {
				last = kw[len(kw)-1]
			}
			seen["/"+strings.Join(pointerTokens(e.InstanceLocation), "/")+" ("+last+")"] = true
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("and %d more", len(out)-5))
	}
	return strings.Join(out, ", ")
}

// pointerTokens returns the tokens of an instance location with the names
// of unknown members replaced: a member name is content too.
func pointerTokens(loc []string) []string {
	out := make([]string, len(loc))
	for i, tok := range loc {
		switch {
		case knownMembers[tok]:
			out[i] = tok
		case isIndex(tok):
			out[i] = tok
		default:
			out[i] = "*"
		}
	}
	return out
}

var knownMembers = map[string]bool{
	"version": true, "tenantId": true, "userId": true, "threadId": true,
	"previousTurnCount": true, "turnCount": true, "turns": true, "role": true,
	"text": true, "sentAt": true, "cheapModelId": true, "meta": true,
	"requestId": true, "traceId": true,
}

func isIndex(tok string) bool {
	_, err := strconv.Atoi(tok)
	return err == nil
}

// sentAt returns the time the record was sent: the queue's SentTimestamp
// attribute (epoch milliseconds, set by SQS on AWS's clock), or the
// message's own sentAt when the attribute is missing or unreadable, and
// which of the two it used.
func sentAt(rec events.SQSMessage, m producer.Message) (time.Time, string) {
	if raw := rec.Attributes["SentTimestamp"]; raw != "" {
		if ms, err := strconv.ParseInt(raw, 10, 64); err == nil && ms > 0 {
			return time.UnixMilli(ms).UTC(), "sqs"
		}
	}
	return m.SentAt.UTC(), "message"
}
