// Package httpapi is the HTTP plumbing the fact functions share: it turns
// an API Gateway HTTP API request (payload format 2.0, JWT authorizer) into
// an identity and an input, runs one operation of the memory core, and
// turns its result or error into a response. Errors are
// application/problem+json (RFC 9457) with the extension members code and
// userMessage; a 5xx body says nothing of its cause, which goes to the
// log: "internal error", or the fixed messages of a 503 (see [ProblemFor]).
//
// Identity comes only from the verified claims in
// requestContext.authorizer.jwt: the user is the sub claim, the tenant the
// configurable tenant claim. The tenant is never read from the path or
// the body; on /v1/me routes neither is the user. Scopes are checked again
// here, whatever the authorizer checked.
//
// Start at [NewHandlerFor], which each fact function calls with its routes
// and its one operation of the store.
package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/memory"
)

// Op is one operation of a function: it reads or writes the facts of
// r.Scope and returns the response's status and body (nil for no body).
// An error is mapped by [ProblemFor].
type Op func(ctx context.Context, r Request) (status int, body any, err error)

// Handler serves the routes of one function.
type Handler struct {
	auth   RequestConfig
	op     Op
	log    *slog.Logger
	routes map[string]route
}

// New returns a Handler that runs op for every request on one of routes,
// route keys as template.yaml names them ("PUT /v1/me/facts/{key}"). A
// nil log discards the log. It returns an error for a malformed route key.
func New(auth RequestConfig, log *slog.Logger, op Op, routes ...string) (*Handler, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{auth: auth.withDefaults(), op: op, log: log, routes: map[string]route{}}
	for _, k := range routes {
		r, err := parseRoute(k)
		if err != nil {
			return nil, err
		}
		h.routes[k] = r
	}
	if len(h.routes) == 0 {
		return nil, fmt.Errorf("httpapi: a handler needs at least one route")
	}
	return h, nil
}

// Routes returns the route keys h serves, sorted.
func (h *Handler) Routes() []string {
	return slices.Sorted(maps.Keys(h.routes))
}

// Decode returns the decoded request, or a 4xx *memory.Error: 404
// CodeRouteNotFound, 401 CodeUnauthenticated, 403 CodeForbidden, 400
// CodeInvalidID, CodeInvalidKey, CodeInvalidUTF8, CodeDuplicateMember,
// CodeMalformedBody, CodeUnknownField, CodeIdentityInBody or
// CodeEmptyFact, 413 CodeBodyTooLarge, 415 CodeUnsupportedMediaType.
func (h *Handler) Decode(req events.APIGatewayV2HTTPRequest) (Request, error) {
	_, r, err := h.decode(req)
	if err != nil {
		return Request{}, err
	}
	return r, nil
}

// decode is Decode that also returns the route, and with an error the
// part of the request decoded before it, for the log.
func (h *Handler) decode(req events.APIGatewayV2HTTPRequest) (route, Request, error) {
	rt, ok := h.routes[req.RouteKey]
	if !ok {
		return route{}, Request{}, fail(CodeRouteNotFound, "no such route")
	}
	r, err := h.auth.decode(rt, req)
	return rt, r, err
}

// Handle serves one request. It never returns an error: every failure is
// a problem response, so API Gateway always gets a well-formed answer.
// The operation runs only on a request decoded without error: a refused
// request reads and writes nothing. It runs within [AnswerBound].
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	start := time.Now()
	rt, r, err := h.decode(req)
	status, body := 0, any(nil)
	if err == nil {
		status, body, err = h.run(ctx, rt, r)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err != nil {
		resp = problemResponse(ProblemFor(err))
	} else {
		resp = jsonResponse(status, body)
	}
	h.logRequest(ctx, req, r, resp.StatusCode, err, time.Since(start))
	if rt.audited() {
		h.audit(ctx, rt, r, resp.StatusCode, err, body)
	}
	return resp, nil
}

// run runs the operation within the request's budget (see [AnswerBound]);
// a dependency that did not answer in time becomes a 503 with
// [CodeUnavailable] that says whether a write may have been applied.
func (h *Handler) run(ctx context.Context, rt route, r Request) (int, any, error) {
	ctx, cancel := withBudget(ctx)
	defer cancel()
	status, body, err := h.op(ctx, r)
	if IsUnavailable(ctx, err) {
		return 0, nil, unavailable(rt.action != "read", err)
	}
	return status, body, err
}

// jsonResponse returns the answer of status with body as JSON, none for
// a nil body; a [Located] body adds its Location header.
func jsonResponse(status int, body any) events.APIGatewayV2HTTPResponse {
	if l, ok := body.(Located); ok {
		resp := jsonResponse(status, l.Body)
		if resp.StatusCode == status {
			if resp.Headers == nil {
				resp.Headers = map[string]string{}
			}
			resp.Headers["location"] = l.Location
		}
		return resp
	}
	if body == nil {
		return events.APIGatewayV2HTTPResponse{StatusCode: status}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return problemResponse(ProblemFor(err))
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"content-type": "application/json"},
		Body:       string(b),
	}
}

// logRequest writes one line per request: request IDs, route, status and
// code, the tenant, hashed references of the user (and of the caller on
// an admin route), and for a 5xx the cause. Never a user ID, a fact key
// from the path or a fact value: the path, the request body and the
// response body stay out of the log.
func (h *Handler) logRequest(ctx context.Context, req events.APIGatewayV2HTTPRequest, r Request, status int, err error, took time.Duration) {
	attrs := []slog.Attr{
		slog.String("requestId", req.RequestContext.RequestID),
		slog.String("route", req.RouteKey),
		slog.Int("status", status),
		slog.Duration("took", took),
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		attrs = append(attrs, slog.String("awsRequestId", lc.AwsRequestID))
	}
	attrs = append(attrs, identity(r)...)
	level := slog.LevelInfo
	if err != nil {
		attrs = append(attrs, slog.Int64("code", ProblemFor(err).Code))
		if status >= 500 {
			level = slog.LevelError
			// The class of the cause, never its message: an AWS SDK
			// error's message may echo a key or a value (docs/api.md, Logs).
			attrs = append(attrs, slog.String("cause", logref.Error(err)))
		}
	}
	h.log.LogAttrs(ctx, level, "request", attrs...)
}

// identity returns the log attributes that say who a request is for and,
// on an admin route, who asked: the tenant ID as is, users as
// logref.User references only. An attribute is left out while unknown
// (a request refused before its token or path was read).
func identity(r Request) []slog.Attr {
	var attrs []slog.Attr
	if r.Scope.TenantID == "" {
		return nil
	}
	attrs = append(attrs, slog.String("tenantId", r.Scope.TenantID))
	if r.Scope.UserID != "" {
		attrs = append(attrs, slog.String("userRef", logref.User(r.Scope.TenantID, r.Scope.UserID)))
	}
	if r.Admin && r.Caller != "" {
		attrs = append(attrs, slog.String("callerRef", logref.User(r.Scope.TenantID, r.Caller)))
	}
	return append(attrs, slog.Bool("admin", r.Admin))
}

// audit writes the audit line of a request on an admin route, of an
// export on any route, or of a user's answer to a pending fact (their
// consent, or its refusal), refused or not: msg "audit", the action (read,
// export, put, delete, clear, forget_thread, erase, keep, discard), the
// tenant, the caller's and the target user's references, the outcome (ok,
// refused for a 4xx, failed for a 5xx) with its status and code, and for
// an erasure the number of facts removed and the dates until which
// backups and queued messages may still hold the user's data. The line's time is when the
// request finished. docs/api.md gives the Logs Insights query that
// answers "who erased this user?".
func (h *Handler) audit(ctx context.Context, rt route, r Request, status int, err error, body any) {
	outcome := "ok"
	switch {
	case status >= 500:
		outcome = "failed"
	case status >= 400:
		outcome = "refused"
	}
	attrs := []slog.Attr{
		slog.String("action", rt.action),
		slog.String("outcome", outcome),
		slog.Int("status", status),
		slog.String("requestId", r.RequestID),
	}
	if r.Scope.TenantID != "" {
		attrs = append(attrs, slog.String("tenantId", r.Scope.TenantID))
		if r.Caller != "" {
			attrs = append(attrs, slog.String("callerRef", logref.User(r.Scope.TenantID, r.Caller)))
		}
		if r.Scope.UserID != "" {
			attrs = append(attrs, slog.String("targetRef", logref.User(r.Scope.TenantID, r.Scope.UserID)))
		}
	}
	if err != nil {
		attrs = append(attrs, slog.Int64("code", ProblemFor(err).Code))
	}
	if e, ok := body.(ErasedBody); ok {
		attrs = append(attrs, slog.Int("removedFacts", e.RemovedFacts))
		if e.BackupsUntil != "" {
			attrs = append(attrs, slog.String("backupsUntil", e.BackupsUntil), slog.String("queuedMessagesUntil", e.QueuedMessagesUntil))
		}
	}
	h.log.LogAttrs(ctx, slog.LevelInfo, "audit", attrs...)
}

// Fact is a fact as the API shows it. Every answer that holds a fact
// builds it with [FactOf].
type Fact struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// UpdatedAt is RFC 3339 in UTC.
	UpdatedAt string `json:"updatedAt"`
	// Origin is how the fact came to be stored: conversation, manual or
	// remember_tool.
	Origin            string `json:"origin"`
	SourceThreadID    string `json:"sourceThreadId,omitempty"`
	SourceThreadTitle string `json:"sourceThreadTitle,omitempty"`
	// Evidence is the user's own words the fact was extracted from; none
	// for a fact set by hand or by the remember tool (Origin says why).
	Evidence string `json:"evidence,omitempty"`
	// ValidUntil is the last day of a temporary fact, "YYYY-MM-DD"; none
	// for a lasting one.
	ValidUntil string `json:"validUntil,omitempty"`
	// Category is the special category (memory.Categories) of the fact,
	// if any.
	Category string `json:"category,omitempty"`
	// SaidAt is, for a fact learned from a conversation, when the user
	// said it, RFC 3339 in UTC; none for a fact set by hand or by a tool.
	// An UpdatedAt after it is when the fact was kept or last changed.
	SaidAt string `json:"saidAt,omitempty"`
	// History are the fact's previous values, newest first; none when it
	// has none.
	History []PreviousValue `json:"history,omitempty"`
}

// PreviousValue is a value a fact held before a change replaced it, as
// the API shows it (memory.PreviousValue): the change's origin, thread,
// title and evidence, and the thread that had taught the value.
type PreviousValue struct {
	Value string `json:"value"`
	// ReplacedAt is RFC 3339 in UTC.
	ReplacedAt    string `json:"replacedAt"`
	Origin        string `json:"origin"`
	ThreadID      string `json:"threadId,omitempty"`
	ThreadTitle   string `json:"threadTitle,omitempty"`
	Evidence      string `json:"evidence,omitempty"`
	ValueThreadID string `json:"valueThreadId,omitempty"`
}

// WithHistory returns f with the API form of the previous values h.
func WithHistory(f Fact, h []memory.PreviousValue) Fact {
	for _, p := range h {
		f.History = append(f.History, PreviousValue{Value: p.Value, ReplacedAt: FormatTime(p.ReplacedAt), Origin: string(p.Origin),
			ThreadID: p.ThreadID, ThreadTitle: p.ThreadTitle, Evidence: p.Evidence, ValueThreadID: p.ValueThreadID})
	}
	return f
}

// FactOf returns the API form of f.
func FactOf(f memory.Fact) Fact {
	out := Fact{Key: f.Key, Value: f.Value, UpdatedAt: f.UpdatedAt.UTC().Format(time.RFC3339Nano),
		Origin: string(f.Origin), SourceThreadID: f.SourceThreadID, SourceThreadTitle: f.SourceThreadTitle,
		Evidence: f.Evidence, Category: f.Category}
	if !f.ValidUntil.IsZero() {
		out.ValidUntil = f.ValidUntil.UTC().Format(time.DateOnly)
	}
	if !f.SaidAt.IsZero() {
		out.SaidAt = f.SaidAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// PendingFact is a pending fact as the API shows it: a [Fact] and when it
// is dropped if the user neither keeps nor discards it.
type PendingFact struct {
	Fact
	// PendingUntil is RFC 3339 in UTC.
	PendingUntil string `json:"pendingUntil"`
}

// PendingOf returns the API form of the pending facts of s, never nil.
func PendingOf(s *memory.Store, pending []memory.Fact) []PendingFact {
	out := make([]PendingFact, 0, len(pending))
	for _, f := range pending {
		out = append(out, PendingFact{Fact: FactOf(f), PendingUntil: FormatTime(s.PendingUntil(f))})
	}
	return out
}

// Limits are the caps as the API shows them.
type Limits struct {
	MaxFacts     int `json:"maxFacts"`
	MaxFactChars int `json:"maxFactChars"`
}

// FactsBody is the body of a 200 to GET .../facts.
type FactsBody struct {
	Facts []Fact `json:"facts"`
	// Pending are the facts that wait for the user's yes, sorted by key.
	Pending []PendingFact `json:"pending"`
	Limits  Limits        `json:"limits"`
}

// NewFactsBody returns the body listing the memory m of a user of s: its
// facts and pending facts, empty lists rather than null, and the caps.
func NewFactsBody(s *memory.Store, m memory.FactsAndPending) FactsBody {
	l := s.Config()
	out := FactsBody{Facts: make([]Fact, 0, len(m.Facts)), Pending: PendingOf(s, m.Pending),
		Limits: Limits{MaxFacts: l.MaxFacts, MaxFactChars: l.MaxFactChars}}
	for _, f := range m.Facts {
		out.Facts = append(out.Facts, WithHistory(FactOf(f), m.History[f.Key]))
	}
	return out
}

// FactBody is the body of a 200 to PUT .../facts/{key}.
type FactBody struct {
	Fact Fact `json:"fact"`
}

// ForgottenThreadBody is the body of a 200 to DELETE
// .../threads/{threadId}/facts: what forgetting the thread forgot (see
// memory.ThreadForgetting), empty lists rather than null.
type ForgottenThreadBody struct {
	ThreadID string `json:"threadId"`
	// ForgottenAt is the thread's forget fence, RFC 3339 in UTC: a
	// message of the thread sent at or before it writes nothing.
	ForgottenAt string `json:"forgottenAt"`
	// Facts are the facts forgotten, sorted by key.
	Facts []Fact `json:"facts"`
	// Pending are the pending facts of the thread discarded, sorted by
	// key.
	Pending []Fact `json:"pending"`
}

// NewForgottenThreadBody returns the body answering the forget f.
func NewForgottenThreadBody(f memory.ThreadForgetting) ForgottenThreadBody {
	out := ForgottenThreadBody{ThreadID: f.ThreadID, ForgottenAt: FormatTime(f.At),
		Facts: make([]Fact, 0, len(f.Facts)), Pending: make([]Fact, 0, len(f.Pending))}
	for _, x := range f.Facts {
		out.Facts = append(out.Facts, FactOf(x))
	}
	for _, x := range f.Pending {
		out.Pending = append(out.Pending, FactOf(x))
	}
	return out
}

// Change is one change of a [ChangesBody]: a fact the thread set, with
// the value it replaced when it replaced one.
type Change struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Previous is the value the change replaced; absent when the change
	// added the fact.
	Previous string `json:"previous,omitempty"`
	// PreviousUnknown says the change replaced a value no longer kept:
	// its Undo is refused (memory.CodeEarlierValueUnknown).
	PreviousUnknown bool `json:"previousUnknown,omitempty"`
	// At is when the thread set it, RFC 3339 in UTC.
	At string `json:"at"`
}

// ChangesBody is the body of a 200 to GET .../threads/{threadId}/changes:
// the facts the thread set after since (see memory.Store.ThreadChanges),
// sorted by key, an empty list rather than null.
type ChangesBody struct {
	ThreadID string   `json:"threadId"`
	Changes  []Change `json:"changes"`
}

// NewChangesBody returns the body answering the changes cs of thread.
func NewChangesBody(thread string, cs []memory.Change) ChangesBody {
	out := ChangesBody{ThreadID: thread, Changes: make([]Change, 0, len(cs))}
	for _, c := range cs {
		x := Change{Key: c.Key, Value: c.Value, PreviousUnknown: c.PreviousUnknown, At: FormatTime(c.At)}
		if c.HadPrevious {
			x.Previous = c.Previous
		}
		out.Changes = append(out.Changes, x)
	}
	return out
}

// UndoneBody is the body of a 200 to POST
// .../threads/{threadId}/changes/{key}/undo: what undoing the thread's
// change of the key did (see memory.Store.UndoChange). Restored is the
// value set back (the fact as it was), absent when none; Removed says the thread's new fact
// was removed. Neither: nothing of the thread's was there to undo.
type UndoneBody struct {
	ThreadID string `json:"threadId"`
	Key      string `json:"key"`
	Restored string `json:"restored,omitempty"`
	Removed  bool   `json:"removed"`
}

// NewUndoneBody returns the body answering the undo u of thread.
func NewUndoneBody(thread string, u memory.Undo) UndoneBody {
	return UndoneBody{ThreadID: thread, Key: u.Key, Restored: u.Restored, Removed: u.Removed}
}

// ErasedBody is the body of a 200 to DELETE /v1/users/{userId}: the
// facts removed and what remains (see memory.Erasure), times in RFC 3339
// UTC.
type ErasedBody struct {
	RemovedFacts int `json:"removedFacts"`
	// ErasedAt is the erasure's time.
	ErasedAt string `json:"erasedAt,omitempty"`
	// BackupsUntil is when point-in-time backups stop holding the record.
	BackupsUntil string `json:"backupsUntil,omitempty"`
	// QueuedMessagesUntil is when the last message sent before the
	// erasure has expired from the queues.
	QueuedMessagesUntil string `json:"queuedMessagesUntil,omitempty"`
}

// NewErasedBody returns the body answering the erasure e.
func NewErasedBody(e memory.Erasure) ErasedBody {
	return ErasedBody{RemovedFacts: e.RemovedFacts, ErasedAt: FormatTime(e.At), BackupsUntil: FormatTime(e.BackupsUntil),
		QueuedMessagesUntil: FormatTime(e.MessagesUntil)}
}

// FormatTime returns t as the API shows times: RFC 3339 in UTC, "" for the zero
// time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// NewLogger returns the JSON logger the functions write to stdout with:
// CloudWatch Logs keeps one JSON object a line.
func NewLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, nil))
}
