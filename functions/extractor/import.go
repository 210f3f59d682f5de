package main

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/schema"
)

// isImport reports whether the body of rec, within the size limit, is an
// import message (schema.IsImportMessage) rather than an extraction one.
func (h *Handler) isImport(rec events.SQSMessage) bool {
	return len(rec.Body) <= h.maxBodyBytes && schema.IsImportMessage([]byte(rec.Body))
}

// decodeImport decodes an import message strictly and validates it
// (schema.DecodeImportMessageV1). Errors: an *errMalformed whose reason
// names schema locations and keywords only, never a value.
func decodeImport(body string) (schema.ImportMessage, error) {
	m, err := schema.DecodeImportMessageV1([]byte(body))
	var bad *schema.InvalidError
	switch {
	case errors.As(err, &bad) && bad.NotJSON:
		return schema.ImportMessage{}, &errMalformed{reason: "not JSON"}
	case errors.As(err, &bad):
		return schema.ImportMessage{}, &errMalformed{reason: "not the import schema at " + bad.Where()}
	case err != nil:
		return schema.ImportMessage{}, &errMalformed{reason: "unreadable"}
	}
	return m, nil
}

// importRequest returns the import m asks for: the scope from the message
// only, the import's ID, source and text, the time the route accepted it
// (the time its facts were said and the fence of an erasure or a clear),
// the model override and the trace IDs. finalAttempt says a transient
// model failure will not be retried.
func importRequest(m schema.ImportMessage, finalAttempt bool) memory.ImportRequest {
	req := memory.ImportRequest{
		Scope:        memory.Scope{TenantID: m.TenantID, UserID: m.UserID},
		ImportID:     m.ImportID,
		Source:       m.Source,
		Text:         m.Text,
		SentAt:       m.SentAt.UTC(),
		FinalAttempt: finalAttempt,
		CheapModelID: m.CheapModelID,
	}
	if m.Meta != nil {
		req.Meta = memory.CallMeta{RequestID: m.Meta.RequestID, TraceID: m.Meta.TraceID}
	}
	return req
}

// importRecord processes one record whose body is an import message: it
// goes to memory.Store.Import, a final attempt when the record's receive
// count reached the most model receives.
func (h *Handler) importRecord(ctx context.Context, rec events.SQSMessage, r result) result {
	r.kind = memory.KindMemoryImport
	m, err := decodeImport(rec.Body)
	if err != nil {
		r.outcome, r.reason, r.failed = outcomeMalformed, err.(*errMalformed).reason, true
		return r
	}
	if g := rec.Attributes["MessageGroupId"]; g != "" && g != schema.GroupID(m.TenantID, m.UserID) {
		r.outcome, r.reason, r.failed = outcomeMalformed, "group ID does not match tenantId/userId", true
		return r
	}
	r.tenant, r.userRef, r.importID = m.TenantID, logref.User(m.TenantID, m.UserID), m.ImportID
	r.sentFrom = "message"
	final := r.receives >= h.maxModelReceives
	res, err := h.store.Import(ctx, importRequest(m, final))
	return h.imported(r, res, err, final)
}

// imported returns r completed with what an import did. A model failure
// before the final attempt is retried, transient or not, so that the last
// receive marks the import failed rather than leave it without a mark;
// the final attempt's is acknowledged (the store marked it failed).
func (h *Handler) imported(r result, res memory.ImportResult, err error, final bool) result {
	r.importRes = res
	r.extract = importCounts(res)
	if err != nil {
		return failedWith(r, err)
	}
	r.outcome = string(res.Outcome)
	switch res.Outcome {
	case memory.OutcomeModelFailed:
		r.reason = errorClass(res.Reported)
		kind := " (permanent"
		if h.transient(res.Reported) {
			kind = " (transient"
		}
		if final {
			r.reason += kind + ": given up, marked failed)"
		} else {
			r.failed = true
			r.reason += kind + ": retried)"
		}
	case memory.OutcomeBadAnswer:
		r.reason = errorClass(res.Reported)
	case memory.OutcomeRefused:
		r.reason = res.Mark.Reason
	}
	return r
}

// importCounts returns what an import did in the form of an extraction's
// result, for the metrics and the log line every record has: its outcome,
// model calls and usage; Pending counts the facts proposed, Secrets,
// Unsupported, Ended and Deletes what it left out for those reasons.
func importCounts(res memory.ImportResult) memory.ExtractResult {
	lo := res.Mark.LeftOut
	return memory.ExtractResult{
		Outcome:     res.Outcome,
		ModelCalls:  res.ModelCalls,
		Usage:       res.Usage,
		Pending:     res.Mark.Proposed,
		Secrets:     lo.Secrets,
		Unsupported: lo.Unsupported,
		Ended:       lo.Ended,
		Deletes:     lo.Deletes,
	}
}
