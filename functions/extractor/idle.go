package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/memory"
)

// The idle read (docs/extractor.md, "Idle read"): a message that is not
// due has its thread's unread tail noted (memory.Store.NoteTail) and a
// copy of it sent to the idle queue, delayed by the idle time; the copy,
// when it comes back through the idle queue's event source, reads the
// thread once if that tail is still its newest (memory.Store.ReadIdle).

// Settings of the idle read.
const (
	// EnvIdleReadSeconds is the idle time in seconds, 0 to
	// MaxIdleReadSeconds; 0 switches the idle read off.
	EnvIdleReadSeconds = "IDLE_READ_SECONDS"
	// EnvIdleQueueURL and EnvIdleQueueARN name the idle queue: the URL to
	// send to, the ARN its event source names in each record.
	EnvIdleQueueURL = "IDLE_QUEUE_URL"
	EnvIdleQueueARN = "IDLE_QUEUE_ARN"
	// DefaultIdleReadSeconds is the idle time when the setting is empty:
	// a quarter of an hour. A user who leaves a thread for that long has
	// usually left it, and a thread still in use is not read early (a
	// newer message supersedes the delayed one).
	DefaultIdleReadSeconds = 900
	// MaxIdleReadSeconds is the longest idle time: 12 hours, which the
	// idle queue's retention (one day) outlasts.
	MaxIdleReadSeconds = 43200
	// MaxDelaySeconds is SQS's longest per-message delay: 15 minutes
	// (Amazon SQS Developer Guide, "Amazon SQS message timers", read
	// 2026-12-06). A longer idle time sends the copy again until it has
	// elapsed.
	MaxDelaySeconds = 900
	// SentAtAttribute is the message attribute of an idle copy that holds
	// when the original message was sent, in unix milliseconds: the idle
	// time counts from it, and the deletion fences compare with it.
	SentAtAttribute = "sentAt"
)

// Sender sends a message to a queue: *sqs.Client.
type Sender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// idleRead is the idle read's configuration of a [Handler]; the zero
// value is off.
type idleRead struct {
	after    time.Duration
	queueURL string
	queueARN string
	send     Sender
}

// on reports whether the idle read is switched on.
func (i idleRead) on() bool { return i.after > 0 && i.send != nil && i.queueURL != "" }

// WithIdleRead switches the idle read on: a thread whose newest turns were
// not read is read once after it has been idle for after; delayed copies
// go to the queue at queueURL through send, and records whose event
// source is queueARN are such copies. after ≤ 0 leaves it off.
func WithIdleRead(after time.Duration, queueURL, queueARN string, send Sender) Option {
	return func(h *Handler) {
		if after > 0 {
			h.idle = idleRead{after: after, queueURL: queueURL, queueARN: queueARN, send: send}
		}
	}
}

// IdleSettings are the idle read's settings as read from the environment.
type IdleSettings struct {
	After    time.Duration
	QueueURL string
	QueueARN string
}

// IdleFromEnv reads the idle read's settings through getenv: the idle
// time (DefaultIdleReadSeconds when empty; 0 switches the read off, and
// then no queue is needed), the idle queue's URL and ARN (both needed
// when it is on).
func IdleFromEnv(getenv func(string) string) (IdleSettings, error) {
	secs := DefaultIdleReadSeconds
	if raw := strings.TrimSpace(getenv(EnvIdleReadSeconds)); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > MaxIdleReadSeconds {
			return IdleSettings{}, fmt.Errorf("extractor: %s=%q: want whole seconds from 0 (off) to %d", EnvIdleReadSeconds, raw, MaxIdleReadSeconds)
		}
		secs = n
	}
	s := IdleSettings{After: time.Duration(secs) * time.Second,
		QueueURL: strings.TrimSpace(getenv(EnvIdleQueueURL)), QueueARN: strings.TrimSpace(getenv(EnvIdleQueueARN))}
	if s.After > 0 && (s.QueueURL == "" || s.QueueARN == "") {
		return IdleSettings{}, fmt.Errorf("extractor: %s is %d s but %s or %s is empty: set both, or %s=0", EnvIdleReadSeconds, secs, EnvIdleQueueURL, EnvIdleQueueARN, EnvIdleReadSeconds)
	}
	return s, nil
}

// isIdle reports whether rec came from the idle queue.
func (h *Handler) isIdle(rec events.SQSMessage) bool {
	return h.idle.queueARN != "" && rec.EventSourceARN == h.idle.queueARN
}

// notDue handles a message for which no extraction is due: with the idle
// read on, it notes the thread's tail and sends the delayed copy.
func (h *Handler) notDue(ctx context.Context, rec events.SQSMessage, req memory.ExtractRequest, r result) result {
	r.outcome = outcomeNotDue
	if h.store.Config().ExtractionDisabled {
		r.outcome = string(memory.OutcomeDisabled)
		return r
	}
	if !h.idle.on() || req.Uncounted {
		return r
	}
	// SQS counts the attribute's name, type and value in the message's
	// size: the copy must fit with them.
	if len(rec.Body)+len(SentAtAttribute)+len("Number")+20 > h.maxBodyBytes {
		r.reason = "no idle read: no room for the copy's attribute"
		return r
	}
	o, err := h.store.NoteTail(ctx, req)
	if err != nil {
		return failedWith(r, err)
	}
	if o != memory.OutcomeNoted {
		r.reason = "no idle read: " + string(o)
		return r
	}
	if err := h.sendIdle(ctx, rec.Body, req.SentAt, h.idle.after); err != nil {
		r.outcome, r.failed, r.reason = outcomeQueueFailed, true, errorClass(err)
		return r
	}
	r.outcome = string(memory.OutcomeNoted)
	return r
}

// sendIdle sends body to the idle queue, delayed by wait (at most
// MaxDelaySeconds, rounded up to the second), with the original send time
// sentAt as its attribute.
func (h *Handler) sendIdle(ctx context.Context, body string, sentAt time.Time, wait time.Duration) error {
	secs := min(int32((wait+time.Second-1)/time.Second), MaxDelaySeconds)
	_, err := h.idle.send.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:     aws.String(h.idle.queueURL),
		MessageBody:  aws.String(body),
		DelaySeconds: max(secs, 0),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{
			SentAtAttribute: {DataType: aws.String("Number"), StringValue: aws.String(strconv.FormatInt(sentAt.UnixMilli(), 10))},
		},
	})
	if err != nil {
		return fmt.Errorf("send the idle copy: %w", err)
	}
	return nil
}

// errNoSentAt is the cause of an idle copy without a readable sentAt
// attribute.
var errNoSentAt = errors.New("idle copy without a sentAt attribute")

// readIdle handles a copy from the idle queue: sent again while the idle
// time since the original message has not elapsed, else read once if its
// tail is still the thread's (memory.Store.ReadIdle).
func (h *Handler) readIdle(ctx context.Context, rec events.SQSMessage, req memory.ExtractRequest, r result) result {
	a, ok := rec.MessageAttributes[SentAtAttribute]
	ms, err := strconv.ParseInt(aws.ToString(a.StringValue), 10, 64)
	if !ok || err != nil || ms <= 0 {
		r.outcome, r.failed, r.reason = outcomeMalformed, true, errNoSentAt.Error()
		return r
	}
	req.SentAt, r.sentFrom = time.UnixMilli(ms).UTC(), "idle"
	if h.store.Config().ExtractionDisabled {
		r.outcome = string(memory.OutcomeDisabled)
		return r
	}
	if left := req.SentAt.Add(h.idle.after).Sub(h.now()); left > 0 && h.idle.on() {
		if err := h.sendIdle(ctx, rec.Body, req.SentAt, left); err != nil {
			r.outcome, r.failed, r.reason = outcomeQueueFailed, true, errorClass(err)
			return r
		}
		r.outcome = outcomeIdleWaiting
		return r
	}
	res, err := h.store.ReadIdle(ctx, req)
	return h.extracted(r, res, err)
}
