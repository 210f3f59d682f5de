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
	if r.extract.Outcome != "" {
		usage, screening := extractionCounts(r.extract)
		for _, c := range append(usage, screening...) {
			attrs = append(attrs, slog.Int(lowerFirst(c.name), c.n))
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// count is one count of an extraction: its metric name and its value.
type count struct {
	name string
	n    int
}

// extractionCounts returns the counts of an extraction that both the log
// line (under the names in lowerCamelCase) and the metrics carry: the
// model's usage, and the screening counts of its SETs.
func extractionCounts(e memory.ExtractResult) (usage, screening []count) {
	u := e.Usage
	usage = []count{{"ModelCalls", e.ModelCalls}, {"InputTokens", u.InputTokens}, {"OutputTokens", u.OutputTokens},
		{"CacheReadTokens", u.CacheReadTokens}, {"CacheWriteTokens", u.CacheWriteTokens}}
	screening = []count{{"Sets", e.Sets}, {"Deletes", e.Deletes}, {"Forgotten", e.Forgotten},
		{"Unsupported", e.Unsupported}, {"Secrets", e.Secrets}, {"Ended", e.Ended}, {"Pending", e.Pending}}
	return usage, screening
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// metric is one metric of the EMF line: its name, unit and value.
type metric struct {
	name, unit string
	value      any
}

func counted(cs []count) []metric {
	ms := make([]metric, len(cs))
	for i, c := range cs {
		ms[i] = metric{c.name, "Count", c.n}
	}
	return ms
}

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
	retried := 0
	if r.failed {
		retried = 1
	}
	usage, screening := extractionCounts(r.extract)
	byOutcome := append([]metric{{"Records", "Count", 1}, {"Retried", "Count", retried}}, counted(usage)...)
	byOutcome = append(byOutcome, metric{"Duration", "Milliseconds", ms(took)})
	line := map[string]any{"kind": memory.KindMemoryUser, "tenant": tenant, "outcome": r.outcome}
	line["_aws"] = map[string]any{
		"Timestamp": h.now().UnixMilli(),
		// One dimension set, [outcome]: CloudWatch bills each metric
		// (name × dimension values) it keeps, so a tenant dimension would
		// multiply the bill by the tenants. The tenant stays a plain member
		// of the line, which Logs Insights can group by.
		"CloudWatchMetrics": []any{h.directive(line, "outcome", byOutcome), h.directive(line, "kind", counted(screening))},
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
