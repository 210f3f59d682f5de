// Command imports is the Lambda function of the routes of an import: POST
// /v1/me/imports, a memory list pasted from another assistant (or a JSON
// list of statements), checked (memory.CheckImport), counted against the
// user's daily imports, marked queued in the user's record and sent to
// the extraction queue as an import
// message (schema/import-message.v1.json), answered 202 with the
// import's ID; GET /v1/me/imports/{importId}, where it stands and the
// facts it proposes for review; POST /v1/me/imports/{importId}/keep and
// DELETE /v1/me/imports/{importId}/pending, the user's yes or no to all
// of them (memory.Store.KeepImport, memory.Store.DiscardImport). Only the
// user imports and answers (it is their consent): there is no admin
// route. Each request but the read leaves an audit line.
//
// Environment: those of package setup, and EXTRACTION_QUEUE_URL, the
// queue the import messages go to.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/schema"
)

// Route keys of this function, as in template.yaml.
const (
	routeImport  = "POST /v1/me/imports"
	routeStatus  = "GET /v1/me/imports/{importId}"
	routeKeep    = "POST /v1/me/imports/{importId}/keep"
	routeDiscard = "DELETE /v1/me/imports/{importId}/pending"
)

// Sender sends a message to the queue: the one method of *sqs.Client
// this function calls.
type Sender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// importer serves the routes of an import over a store and a queue.
type importer struct {
	store    *memory.Store
	queue    Sender
	queueURL string
	now      func() time.Time
}

// newHandler returns the NewHandlerFunc of this function: its routes over
// the store, sending import messages with queue to queueURL, at the time
// now tells. The body limit of its routes is httpapi.ImportMaxBodyBytes.
func newHandler(queue Sender, queueURL string, now func() time.Time) httpapi.NewHandlerFunc {
	return func(store *memory.Store, auth httpapi.RequestConfig, log *slog.Logger) (*httpapi.Handler, error) {
		if queue == nil || queueURL == "" {
			return nil, errors.New("imports: a queue and its URL are needed")
		}
		auth.MaxBodyBytes = httpapi.ImportMaxBodyBytes
		im := &importer{store: store, queue: queue, queueURL: queueURL, now: now}
		return httpapi.New(auth, log, im.serve, routeImport, routeStatus, routeKeep, routeDiscard)
	}
}

// serve runs the operation of r's route.
func (im *importer) serve(ctx context.Context, r httpapi.Request) (int, any, error) {
	switch r.Route {
	case routeImport:
		body, err := im.create(ctx, r)
		return http.StatusAccepted, body, err
	case routeStatus:
		body, err := im.status(ctx, r)
		return http.StatusOK, body, err
	case routeKeep:
		kept, err := im.store.KeepImport(ctx, r.Scope, r.ImportID)
		return http.StatusOK, httpapi.NewKeptBody(kept), err
	default:
		n, err := im.store.DiscardImport(ctx, r.Scope, r.ImportID)
		return http.StatusOK, httpapi.DiscardedBody{Discarded: n}, err
	}
}

// create checks the import r asks for, leaves its mark queued in the
// user's record (memory.Store.QueueImport, which refuses it when the
// user's daily imports ran out) and sends its message: the answer is the
// import, queued, at its Location.
func (im *importer) create(ctx context.Context, r httpapi.Request) (any, error) {
	in, err := decodeImport(r.Body)
	if err != nil {
		return nil, err
	}
	source, text, err := memory.CheckImport(in)
	if err != nil {
		return nil, err
	}
	now := im.now().UTC()
	id := memory.NewImportID(now)
	mark, err := im.store.QueueImport(ctx, r.Scope, id, source, now)
	if err != nil {
		return nil, err
	}
	m := schema.ImportMessage{Version: schema.ImportMessageVersion, Kind: schema.ImportKind,
		TenantID: r.Scope.TenantID, UserID: r.Scope.UserID, ImportID: id, Source: source, Text: text, SentAt: mark.RequestedAt}
	if r.RequestID != "" {
		m.Meta = &schema.Meta{RequestID: r.RequestID}
	}
	if err := im.send(ctx, m); err != nil {
		// Not sent: the mark goes, so that it neither reads as queued for
		// ever nor counts against the user's day. A failure here leaves
		// it queued; the send's error is the answer either way.
		_ = im.store.UnqueueImport(context.WithoutCancel(ctx), r.Scope, id)
		return nil, err
	}
	return httpapi.Located{Body: httpapi.ImportBody{Import: httpapi.ImportViewOf(mark)},
		Location: "/v1/me/imports/" + id}, nil
}

// send validates m and sends it to the extraction queue, in the user's
// message group, deduplicated by the import.
func (im *importer) send(ctx context.Context, m schema.ImportMessage) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("imports: the message: %w", err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("imports: the message: %w", err)
	}
	_, err = im.queue.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:               aws.String(im.queueURL),
		MessageBody:            aws.String(string(body)),
		MessageGroupId:         aws.String(schema.GroupID(m.TenantID, m.UserID)),
		MessageDeduplicationId: aws.String(schema.ImportDeduplicationID(m.TenantID, m.UserID, m.ImportID)),
	})
	if err != nil {
		return fmt.Errorf("imports: send: %w", err)
	}
	return nil
}

// status returns where the import r names stands, in one read
// (memory.Store.ReviewImport): its mark, queued from the moment POST
// accepted it, its pending facts and the values they would replace; 404
// (CodeImportNotFound) at once for an ID the user's record holds no mark
// of.
func (im *importer) status(ctx context.Context, r httpapi.Request) (any, error) {
	rv, err := im.store.ReviewImport(ctx, r.Scope, r.ImportID)
	if err != nil {
		return nil, err
	}
	return httpapi.NewImportStatusBody(im.store, httpapi.ImportViewOf(rv.Mark), rv), nil
}

// importJSON is the JSON form of an import body. Its members stay raw, so
// that each is read with its own error; every other member lands in
// unknown.
type importJSON struct {
	Source     jsontext.Value            `json:"source"`
	Text       jsontext.Value            `json:"text"`
	Statements jsontext.Value            `json:"statements"`
	Unknown    map[string]jsontext.Value `json:",unknown"`
}

// decodeImport returns the members of an import body, already checked as
// every body is: one object, no identity member, no member but source,
// text and statements, each of its type (null is absent). What they must
// hold is memory.CheckImport's.
func decodeImport(raw string) (memory.ImportText, error) {
	var body importJSON
	if jsontext.Value(bytes.TrimSpace([]byte(raw))).Kind() != '{' || json.Unmarshal([]byte(raw), &body) != nil {
		return memory.ImportText{}, malformed(`the body must be a JSON object {"source": "…", "text": "…"}`)
	}
	for name := range body.Unknown {
		switch strings.ToLower(name) {
		case "tenantid", "tenant_id", "userid", "user_id", "sub", "tenant", "user":
			return memory.ImportText{}, &memory.Error{Code: httpapi.CodeIdentityInBody,
				Message: "the body may not name a tenant or a user: they come from the token"}
		}
	}
	if len(body.Unknown) > 0 {
		return memory.ImportText{}, &memory.Error{Code: httpapi.CodeUnknownField,
			Message: `the body's members are "source" and one of "text" and "statements"`}
	}
	var in memory.ImportText
	for _, m := range []struct {
		name string
		raw  jsontext.Value
		into any
	}{{"source", body.Source, &in.Source}, {"text", body.Text, &in.Text}, {"statements", body.Statements, &in.Statements}} {
		if m.raw == nil || m.raw.Kind() == 'n' {
			continue
		}
		if err := json.Unmarshal(m.raw, m.into); err != nil {
			return memory.ImportText{}, malformed(`the body's "` + m.name + `" must be ` + kindOf(m.name))
		}
	}
	return in, nil
}

// kindOf names the JSON type of an import body's member.
func kindOf(member string) string {
	if member == "statements" {
		return "an array of strings"
	}
	return "a string"
}

// malformed returns the 400 of a body that is not the import's shape.
func malformed(msg string) error {
	return &memory.Error{Code: httpapi.CodeMalformedBody, Message: msg}
}
