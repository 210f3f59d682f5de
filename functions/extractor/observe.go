package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
)

// observe writes the log line and the metrics of one record. Neither holds
// a fact value, turn text or user ID: the tenant, the user's logref.User
// reference (log line only), counts, codes and durations.
func (h *Handler) observe(ctx context.Context, requestID string, rec events.SQSMessage, r result, took time.Duration) {
	u := r.extract.Usage
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
		attrs = append(attrs,
			slog.Int("modelCalls", r.extract.ModelCalls),
			slog.Int("inputTokens", u.InputTokens),
			slog.Int("outputTokens", u.OutputTokens),
			slog.Int("cacheReadTokens", u.CacheReadTokens),
			slog.Int("cacheWriteTokens", u.CacheWriteTokens),
			slog.Int("sets", r.extract.Sets),
			slog.Int("deletes", r.extract.Deletes),
			slog.Int("forgotten", r.extract.Forgotten),
			slog.Int("unsupported", r.extract.Unsupported),
			slog.Int("secrets", r.extract.Secrets),
			slog.Int("ended", r.extract.Ended),
			slog.Int("pending", r.extract.Pending),
			slog.Int("facts", len(r.extract.Facts)),
		)
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

// metricsLine returns the EMF line of one record: its counts under the
// dimension set [outcome], the screening counts of its SETs under [kind]
// alone (one series each: they are only ever non-zero for changed and
// unchanged records, and an alarm sums them whatever the outcome), and
// the tenant as a plain member.
func (h *Handler) metricsLine(r result, took time.Duration) map[string]any {
	u := r.extract.Usage
	tenant := r.tenant
	if tenant == "" {
		tenant = "-" // An invalid message names no tenant we may trust.
	}
	retried := 0
	if r.failed {
		retried = 1
	}
	return map[string]any{
		"_aws": map[string]any{
			"Timestamp": h.now().UnixMilli(),
			"CloudWatchMetrics": []any{map[string]any{
				"Namespace": h.namespace,
				// One dimension set, [outcome]: CloudWatch bills each
				// metric (name × dimension values) it keeps, so a tenant
				// dimension would multiply the bill by the tenants. The
				// tenant stays a plain member of the line, which Logs
				// Insights can group by.
				"Dimensions": [][]string{{"outcome"}},
				"Metrics": []map[string]string{
					{"Name": "Records", "Unit": "Count"},
					{"Name": "Retried", "Unit": "Count"},
					{"Name": "ModelCalls", "Unit": "Count"},
					{"Name": "InputTokens", "Unit": "Count"},
					{"Name": "OutputTokens", "Unit": "Count"},
					{"Name": "CacheReadTokens", "Unit": "Count"},
					{"Name": "CacheWriteTokens", "Unit": "Count"},
					{"Name": "Duration", "Unit": "Milliseconds"},
				},
			}, map[string]any{
				"Namespace":  h.namespace,
				"Dimensions": [][]string{{"kind"}},
				"Metrics": []map[string]string{
					{"Name": "Sets", "Unit": "Count"},
					{"Name": "Deletes", "Unit": "Count"},
					{"Name": "Forgotten", "Unit": "Count"},
					{"Name": "Unsupported", "Unit": "Count"},
					{"Name": "Secrets", "Unit": "Count"},
					{"Name": "Ended", "Unit": "Count"},
					{"Name": "Pending", "Unit": "Count"},
				},
			}},
		},
		"kind":             memory.KindMemoryUser,
		"tenant":           tenant,
		"outcome":          r.outcome,
		"Records":          1,
		"Retried":          retried,
		"ModelCalls":       r.extract.ModelCalls,
		"InputTokens":      u.InputTokens,
		"OutputTokens":     u.OutputTokens,
		"CacheReadTokens":  u.CacheReadTokens,
		"CacheWriteTokens": u.CacheWriteTokens,
		"Duration":         ms(took),
		"Sets":             r.extract.Sets,
		"Deletes":          r.extract.Deletes,
		"Forgotten":        r.extract.Forgotten,
		"Unsupported":      r.extract.Unsupported,
		"Secrets":          r.extract.Secrets,
		"Ended":            r.extract.Ended,
		"Pending":          r.extract.Pending,
	}
}
