package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/schema"
)

// Defaults of a [Handler].
const (
	// DefaultSafetyMargin is the time left in the invocation under which a
	// record is not started but reported as failed, to be delivered again.
	DefaultSafetyMargin = 15 * time.Second
	// DefaultMaxModelReceives is the receive count up to which a record
	// whose model call failed transiently is reported as failed, to be
	// retried after the visibility timeout; from it on, the failure is
	// acknowledged. Keep it below the queue's maxReceiveCount, so that
	// model outages do not fill the dead-letter queue.
	DefaultMaxModelReceives = 3
	// DefaultMaxBodyBytes is the largest body accepted: the SQS limit.
	DefaultMaxBodyBytes = schema.MaxMessageBytes
	// DefaultNamespace is the CloudWatch namespace of the metrics.
	DefaultNamespace = "usermemory/extractor"
	// finishReserve is kept from the invocation's deadline for every
	// record, so that a record that runs late fails by itself and the
	// batch response still gets out.
	finishReserve = time.Second
)

// Outcomes a record may have besides the store's memory.Outcome values.
const (
	outcomeNotDue       = "not_due"       // no extraction due: acknowledged
	outcomeMalformed    = "malformed"     // not a valid message: failed, to the DLQ
	outcomeOversized    = "oversized"     // over the size limit: failed, to the DLQ
	outcomeRepository   = "repo_failed"   // the repository failed: failed, retried
	outcomeConflict     = "conflict"      // concurrent writers kept winning: failed, retried
	outcomeDeadline     = "deadline"      // not started, too little time: failed, retried
	outcomeGroupBlocked = "group_blocked" // an earlier record of its group failed: failed, retried
	outcomeInternal     = "internal"      // a bug (a recovered panic): failed, retried
	outcomeIdleWaiting  = "idle_waiting"  // an idle copy sent again: the idle time has not elapsed
	outcomeQueueFailed  = "queue_failed"  // the idle copy could not be sent: failed, retried
)

// Handler processes the batches of extraction and import messages the
// SQS event source delivers. It is safe for concurrent use.
type Handler struct {
	store            *memory.Store
	log              *slog.Logger
	metrics          io.Writer
	namespace        string
	margin           time.Duration
	maxModelReceives int
	maxBodyBytes     int
	transient        func(error) bool
	now              func() time.Time
	idle             idleRead
}

// Option configures a [Handler].
type Option func(*Handler)

// WithLogger sets the logger; the default discards.
func WithLogger(l *slog.Logger) Option { return func(h *Handler) { h.log = l } }

// WithMetrics sets where the CloudWatch Embedded Metric Format lines go
// (os.Stdout in Lambda); the default discards.
func WithMetrics(w io.Writer) Option { return func(h *Handler) { h.metrics = w } }

// WithSafetyMargin sets the remaining time under which records are not
// started; see [DefaultSafetyMargin].
func WithSafetyMargin(d time.Duration) Option { return func(h *Handler) { h.margin = d } }

// WithMaxModelReceives sets how many receives a transient model failure is
// retried for; see [DefaultMaxModelReceives].
func WithMaxModelReceives(n int) Option { return func(h *Handler) { h.maxModelReceives = n } }

// WithMaxBodyBytes sets the largest body accepted.
func WithMaxBodyBytes(n int) Option { return func(h *Handler) { h.maxBodyBytes = n } }

// WithTransient replaces the classification of model failures; the
// default is [Transient].
func WithTransient(f func(error) bool) Option { return func(h *Handler) { h.transient = f } }

// WithClock sets the clock of durations and metric timestamps.
func WithClock(now func() time.Time) Option { return func(h *Handler) { h.now = now } }

// NewHandler returns a Handler that extracts through store. It checks
// each message with schema.DecodeExtractionMessageV1, or, when its kind
// says it is an import (schema.IsImportMessage), with
// schema.DecodeImportMessageV1 and hands it to memory.Store.Import; it
// fails only when store is nil.
func NewHandler(store *memory.Store, opts ...Option) (*Handler, error) {
	if store == nil {
		return nil, errors.New("extractor: NewHandler needs a store")
	}
	h := &Handler{
		store:            store,
		log:              slog.New(slog.DiscardHandler),
		metrics:          io.Discard,
		namespace:        DefaultNamespace,
		margin:           DefaultSafetyMargin,
		maxModelReceives: DefaultMaxModelReceives,
		maxBodyBytes:     DefaultMaxBodyBytes,
		transient:        Transient,
		now:              time.Now,
	}
	for _, o := range opts {
		o(h)
	}
	return h, nil
}

// result is what became of one record: its outcome, whether it is
// reported as failed (to be delivered again), and what to log.
type result struct {
	outcome  string
	failed   bool
	reason   string // a short code, never content
	tenant   string // "" until the message is valid
	userRef  string
	receives int
	sentFrom string
	// uncounted says the message carried no turn counts (logged).
	uncounted bool
	extract   memory.ExtractResult
	// kind is memory.KindMemoryImport for an import message, "" for an
	// extraction; importID and importRes are an import's.
	kind      string
	importID  string
	importRes memory.ImportResult
}

// Handle processes the records of a batch in order and returns the ones
// to deliver again as batch item failures; it never returns an error, so
// that one bad record never fails the batch (the event source mapping must
// have ReportBatchItemFailures).
//
// Records of one message group (one user) stay in order: once a record of
// a group fails, the later records of that group in the batch are not
// processed and are reported as failed too; records of other groups go on.
// Records not started when less than the safety margin is left before the
// invocation's deadline are reported as failed, not lost.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	requestID := ""
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		requestID = lc.AwsRequestID
	}
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	failedGroups := map[string]bool{}
	for _, rec := range ev.Records {
		start := h.now()
		group := rec.Attributes["MessageGroupId"]
		var r result
		switch {
		case group != "" && failedGroups[group]:
			r = result{outcome: outcomeGroupBlocked, failed: true}
		case h.timeShort(ctx):
			r = result{outcome: outcomeDeadline, failed: true}
		default:
			r = h.record(ctx, rec)
		}
		if r.failed {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			if group != "" {
				failedGroups[group] = true
			}
		}
		h.observe(ctx, requestID, rec, r, h.now().Sub(start))
	}
	return resp, nil
}

// due reports whether m asks for an extraction: an uncounted message
// always does (its sender's caller judged it due), unless extraction is
// switched off; a counted one when memory.Store.IsExtractDue says so.
func (h *Handler) due(m schema.ExtractionMessage) bool {
	if m.Uncounted {
		return !h.store.Config().ExtractionDisabled
	}
	return h.store.IsExtractDue(m.PreviousTurnCount, m.TurnCount)
}

// timeShort reports whether less than the safety margin is left.
func (h *Handler) timeShort(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && d.Sub(h.now()) < h.margin
}

// record processes one record; a panic becomes a failed record.
func (h *Handler) record(ctx context.Context, rec events.SQSMessage) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{outcome: outcomeInternal, failed: true, reason: fmt.Sprintf("panic: %T", p)}
		}
	}()
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-finishReserve))
		defer cancel()
	}
	r.receives, _ = strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	if h.isImport(rec) {
		return h.importRecord(ctx, rec, r)
	}

	m, err := h.decode(rec.Body)
	if err != nil {
		var bad *errMalformed
		switch {
		case errors.As(err, &bad):
			r.outcome, r.reason = outcomeMalformed, bad.reason
		default:
			r.outcome, r.reason = outcomeOversized, "over "+strconv.Itoa(h.maxBodyBytes)+" bytes"
		}
		r.failed = true
		return r
	}
	if g := rec.Attributes["MessageGroupId"]; g != "" && g != schema.GroupID(m.TenantID, m.UserID) {
		// The body names another user than the group it was sent in.
		r.outcome, r.reason, r.failed = outcomeMalformed, "group ID does not match tenantId/userId", true
		return r
	}
	r.tenant, r.userRef, r.uncounted = m.TenantID, logref.User(m.TenantID, m.UserID), m.Uncounted

	req := extractRequest(m)
	req.SentAt, r.sentFrom = sentAt(rec, m)
	if h.isIdle(rec) {
		return h.readIdle(ctx, rec, req, r)
	}
	if !h.due(m) {
		return h.notDue(ctx, rec, req, r)
	}
	res, err := h.store.Extract(ctx, req)
	return h.extracted(r, res, err)
}

// extracted returns r completed with what an extraction did: its outcome,
// or the failure of its error, and whether the record is retried.
func (h *Handler) extracted(r result, res memory.ExtractResult, err error) result {
	r.extract = res
	if err != nil {
		return failedWith(r, err)
	}
	r.outcome = string(res.Outcome)
	if res.Outcome == memory.OutcomeModelFailed {
		r.reason = errorClass(res.Reported)
		if h.transient(res.Reported) && r.receives < h.maxModelReceives {
			r.failed = true
			r.reason += " (transient: retried)"
		} else if h.transient(res.Reported) {
			r.reason += " (transient: given up)"
		} else {
			r.reason += " (permanent)"
		}
	}
	if res.Outcome == memory.OutcomeBadAnswer {
		r.reason = errorClass(res.Reported)
	}
	return r
}

// failedWith returns r failed by err, an error of the store: malformed,
// conflict or a repository failure.
func failedWith(r result, err error) result {
	r.failed = true
	r.reason = errorClass(err)
	switch memory.ErrorCode(err) {
	case memory.CodeInvalidID, memory.CodeInvalidTurnCount, memory.CodeInvalidImport, memory.CodeImportTooLong:
		r.outcome = outcomeMalformed
	case memory.CodeConflict:
		r.outcome = outcomeConflict
	default:
		r.outcome = outcomeRepository
	}
	return r
}
