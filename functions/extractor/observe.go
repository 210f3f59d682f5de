package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
)

// observe writes the log line and the metrics of one record. Neither holds
// a fact value, turn text or user ID: the tenant, the user's logref.User
// reference (log line only), counts, codes and durations.
func (h *Handler) observe(ctx context.Context, requestID string, rec events.SQSMessage, r result, took time.Duration) {
	attrs := []slog.Attr{
		slog.String("requestId", requestID),
		slog.String("messageId", rec.MessageId),
		slog.String("outcome", r.outcome),
		slog.Bool("retry", r.failed),
		slog.Int("receiveCount", r.receives),
		slog.Float64("durationMs", ms(took)),
	}
	if r.tenant != "" {
		attrs = append(attrs, slog.String("tenant", r.tenant), slog.String("userRef", r.userRef))
	}
	if r.reason != "" {
		attrs = append(attrs, slog.String("reason", r.reason))
	}
	if r.sentFrom != "" {
		attrs = append(attrs, slog.String("sentAtFrom", r.sentFrom))
	}
	if r.uncounted {
		attrs = append(attrs, slog.Bool("uncounted", true))
	}
	if r.kind != "" {
		attrs = append(attrs, importAttrs(r)...)
	}
	if r.extract.Outcome != "" {
		byOutcome, byKind := recordMetrics(r, took)
		for _, m := range append(byOutcome, byKind...) {
			if m.logged {
				attrs = append(attrs, slog.Any(lowerFirst(m.name), m.value))
			}
		}
		attrs = append(attrs, slog.Int("facts", len(r.extract.Facts)))
	}
	level := slog.LevelInfo
	if r.failed {
		level = slog.LevelWarn
	}
	h.log.LogAttrs(ctx, level, "extraction record", attrs...)

	b, err := json.Marshal(h.metricsLine(r, took))
	if err != nil {
		return // Only numbers and IDs: it always marshals.
	}
	_, _ = h.metrics.Write(append(b, '\n'))
}

// importAttrs returns the log attributes of an import record: its kind,
// its ID, and what its mark counts (status, parts, proposed, left out);
// never its text, its source or a value.
func importAttrs(r result) []slog.Attr {
	attrs := []slog.Attr{slog.String("kind", r.kind)}
	if r.importID != "" {
		attrs = append(attrs, slog.String("importId", r.importID))
	}
	if mk := r.importRes.Mark; mk.Status != "" {
		lo := mk.LeftOut
		attrs = append(attrs, slog.String("importStatus", string(mk.Status)), slog.Int("parts", mk.Parts),
			slog.Int("proposed", mk.Proposed), slog.Int("leftOutInstructions", lo.Instructions),
			slog.Int("leftOutKnown", lo.Known), slog.Int("leftOutDeclined", lo.Declined),
			slog.Int("statements", mk.Statements), slog.Int("leftOutSkipped", lo.Skipped), slog.Int("leftOutOverCap", lo.OverCap),
			slog.Int("leftOutNoRoom", lo.NoRoom))
	}
	return attrs
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// metric is one metric of a record's EMF line: its name, unit and value;
// logged says the log line carries it too, under its name in
// lowerCamelCase.
type metric struct {
	name, unit string
	value      any
	logged     bool
}

// recordMetrics returns the metrics of a record, in the order of the EMF
// line: those kept by outcome, and the screening counts of its SETs, kept
// by kind.
func recordMetrics(r result, took time.Duration) (byOutcome, byKind []metric) {
	e, u := r.extract, r.extract.Usage
	retried := 0
	if r.failed {
		retried = 1
	}
	byOutcome = []metric{
		{"Records", "Count", 1, false},
		{"Retried", "Count", retried, false},
		{"ModelCalls", "Count", e.ModelCalls, true},
		{"InputTokens", "Count", u.InputTokens, true},
		{"OutputTokens", "Count", u.OutputTokens, true},
		{"CacheReadTokens", "Count", u.CacheReadTokens, true},
		{"CacheWriteTokens", "Count", u.CacheWriteTokens, true},
		{"Duration", "Milliseconds", ms(took), false},
	}
	byKind = []metric{
		{"Sets", "Count", e.Sets, true},
		{"Deletes", "Count", e.Deletes, true},
		{"Forgotten", "Count", e.Forgotten, true},
		{"Unsupported", "Count", e.Unsupported, true},
		{"Secrets", "Count", e.Secrets, true},
		{"Ended", "Count", e.Ended, true},
		{"Pending", "Count", e.Pending, true},
	}
	return byOutcome, byKind
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// metricsLine returns the EMF line of one record: its counts under the
// dimension set [outcome], the screening counts of its SETs under [kind]
// alone (one series each: they are only ever non-zero for changed and
// unchanged records, and an alarm sums them whatever the outcome), and
// the tenant as a plain member.
func (h *Handler) metricsLine(r result, took time.Duration) map[string]any {
	tenant := r.tenant
	if tenant == "" {
		tenant = "-" // An invalid message names no tenant we may trust.
	}
	byOutcome, byKind := recordMetrics(r, took)
	kind := memory.KindMemoryUser
	if r.kind != "" {
		kind = r.kind
	}
	line := map[string]any{"kind": kind, "tenant": tenant, "outcome": r.outcome}
	line["_aws"] = map[string]any{
		"Timestamp": h.now().UnixMilli(),
		// One dimension set, [outcome]: CloudWatch bills each metric
		// (name × dimension values) it keeps, so a tenant dimension would
		// multiply the bill by the tenants. The tenant stays a plain member
		// of the line, which Logs Insights can group by.
		"CloudWatchMetrics": []any{h.directive(line, "outcome", byOutcome), h.directive(line, "kind", byKind)},
	}
	return line
}

// directive returns the EMF directive of ms under the one dimension dim,
// in h's namespace, and puts their values into line.
func (h *Handler) directive(line map[string]any, dim string, ms []metric) map[string]any {
	defs := make([]map[string]string, len(ms))
	for i, m := range ms {
		defs[i] = map[string]string{"Name": m.name, "Unit": m.unit}
		line[m.name] = m.value
	}
	return map[string]any{"Namespace": h.namespace, "Dimensions": [][]string{{dim}}, "Metrics": defs}
}
