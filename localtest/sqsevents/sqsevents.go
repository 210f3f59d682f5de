// Package sqsevents emulates Lambda's SQS event source mapping: it polls a
// queue, hands batches of messages to a function in the SQS event shape,
// deletes what succeeded and leaves the rest for redelivery after the
// queue's visibility timeout, so that the queue's own redrive policy moves
// poison messages to its dead-letter queue.
//
// For a FIFO queue it keeps each message group in order by itself, whatever
// the queue emulator does: one receive at a time, and a message whose group
// already has a batch in flight is held back until that batch ends (see
// [Poller]).
package sqsevents

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/localtest/lambdapool"
)

// API lists the *sqs.Client methods the poller calls.
type API interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
}

// InvokeFunc runs the function with an event.
type InvokeFunc func(ctx context.Context, payload []byte) (lambdapool.Result, error)

// DefaultPollWait is the long-polling wait of each receive when the
// Config sets none.
const DefaultPollWait = 2 * time.Second

// Config configures a [Poller].
type Config struct {
	API      API
	QueueURL string
	QueueARN string
	Region   string
	// BatchSize is the most messages per invocation (the template's
	// BatchSize); BatchingWindow how long to gather them.
	BatchSize      int
	BatchingWindow time.Duration
	// ReportBatchItemFailures says the function answers with
	// batchItemFailures; otherwise a success deletes the whole batch.
	ReportBatchItemFailures bool
	// MaxConcurrency is the most batches in flight at once (the template's
	// ScalingConfig.MaximumConcurrency); 0 means 5, Lambda's first pollers.
	MaxConcurrency int
	// PollWait is the long-polling wait of each receive; 0 means
	// [DefaultPollWait].
	PollWait time.Duration
	Invoke   InvokeFunc
	// Log receives one line per batch with IDs and counts, never bodies.
	Log *slog.Logger
}

// Poller is a running event source.
//
// It keeps the order of a FIFO message group as SQS and Lambda do: SQS
// hands out no message of a group while an earlier one is in flight, so
// Lambda never runs two batches of one group at once. The poller does not
// rely on the queue for this. It receives one batch at a time, runs up to
// MaxConcurrency batches, and remembers the groups of the batches it runs.
// A received message whose group has a batch in flight is held back: it is
// not handed to the function, and when that batch ends it goes, in
// SequenceNumber order, into the next batch of the same worker; if the
// batch left a message of that group for redelivery, the held messages are
// made visible again at once, so that they come after the failed one.
// Messages of one group within one batch stay in queue order, as in
// Lambda.
type Poller struct {
	cfg     Config
	cancel  context.CancelFunc // stops polling
	abort   context.CancelFunc // stops the batches in flight
	wg      sync.WaitGroup
	batches atomic.Int64
	deleted atomic.Int64
	failed  atomic.Int64
	held    atomic.Int64

	mu      sync.Mutex
	running map[string]bool // message groups with a batch in flight
	waiting []types.Message // held back behind their group's batch
}

// Start starts polling until ctx ends or Close is called.
func Start(ctx context.Context, cfg Config) *Poller {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 10
	}
	if cfg.MaxConcurrency <= 0 {
		cfg.MaxConcurrency = 5
	}
	if cfg.PollWait <= 0 {
		cfg.PollWait = DefaultPollWait
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	// Batches run to their end when polling stops, as Lambda finishes an
	// invocation it started, unless Close gives up waiting.
	batchCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	ctx, cancel := context.WithCancel(ctx)
	p := &Poller{cfg: cfg, cancel: cancel, abort: abort, running: map[string]bool{}}
	p.wg.Go(func() { p.loop(ctx, batchCtx) })
	return p
}

// CloseGrace is how long Close waits for the batches in flight before it
// cancels them; their messages then come back after the visibility
// timeout.
const CloseGrace = 5 * time.Second

// Close stops polling and waits for the batches in flight, at most
// [CloseGrace] before cancelling them.
func (p *Poller) Close() {
	p.cancel()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(CloseGrace):
		p.abort()
		<-done
	}
	p.abort()
}

// Stats returns the batches handed to the function, the messages deleted
// after success, and the messages left for redelivery.
func (p *Poller) Stats() (batches, deleted, failed int64) {
	return p.batches.Load(), p.deleted.Load(), p.failed.Load()
}

// Held returns how many received messages were held back because their
// message group had a batch in flight. It stays 0 while the queue keeps
// FIFO order itself.
func (p *Poller) Held() int64 { return p.held.Load() }

// loop receives one batch at a time and runs up to MaxConcurrency of them.
// One receive at a time keeps a queue emulator that looks at the groups in
// flight only when a long poll starts from handing out a group's next
// message while another long poll has just taken the previous one.
func (p *Poller) loop(ctx, batchCtx context.Context) {
	slots := make(chan struct{}, p.cfg.MaxConcurrency)
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		batch := p.claim(p.receive(ctx))
		if len(batch) == 0 {
			<-slots
			continue
		}
		p.wg.Go(func() {
			defer func() { <-slots }()
			p.work(ctx, batchCtx, batch)
		})
	}
}

// work runs batch, then the messages held back behind it, until none is
// left.
func (p *Poller) work(ctx, batchCtx context.Context, batch []types.Message) {
	for len(batch) > 0 {
		kept := p.handle(batchCtx, batch)
		batch = p.next(ctx, batch, kept)
	}
}

// groupOf returns the message group of m, "" for a standard queue.
func groupOf(m types.Message) string {
	return m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]
}

// claim returns the messages of msgs that may run now, and marks their
// groups in flight; it holds back those whose group is already in flight.
func (p *Poller) claim(msgs []types.Message) []types.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var run []types.Message
	mine := map[string]bool{}
	for _, m := range msgs {
		g := groupOf(m)
		if g != "" && p.running[g] && !mine[g] {
			p.waiting = append(p.waiting, m)
			p.held.Add(1)
			p.cfg.Log.Warn("held back a message: its message group has a batch in flight", "messageId", aws.ToString(m.MessageId))
			continue
		}
		if g != "" {
			p.running[g], mine[g] = true, true
		}
		run = append(run, m)
	}
	return run
}

// next ends batch: it frees the groups of batch and returns the messages
// held back behind them, in SequenceNumber order and at most BatchSize, as
// the next batch, their groups again in flight. The held messages of a
// group that has a message in kept (left for redelivery), and all of them
// once polling has stopped, are made visible again instead.
func (p *Poller) next(ctx context.Context, batch []types.Message, kept map[string]bool) []types.Message {
	p.mu.Lock()
	freed, failedGroups := map[string]bool{}, map[string]bool{}
	for _, m := range batch {
		g := groupOf(m)
		if g == "" {
			continue
		}
		delete(p.running, g)
		freed[g] = true
		if kept[aws.ToString(m.MessageId)] {
			failedGroups[g] = true
		}
	}
	var run, release, rest []types.Message
	for _, m := range p.waiting {
		g := groupOf(m)
		switch {
		case !freed[g]:
			rest = append(rest, m)
		case failedGroups[g] || ctx.Err() != nil:
			release = append(release, m)
		default:
			run = append(run, m)
		}
	}
	slices.SortStableFunc(run, func(a, b types.Message) int {
		if c := strings.Compare(groupOf(a), groupOf(b)); c != 0 {
			return c
		}
		return compareSequence(a, b)
	})
	if len(run) > p.cfg.BatchSize {
		rest = append(rest, run[p.cfg.BatchSize:]...)
		run = run[:p.cfg.BatchSize]
	}
	for _, m := range run {
		p.running[groupOf(m)] = true
	}
	p.waiting = rest
	p.mu.Unlock()
	p.release(release)
	return run
}

// compareSequence orders two messages of one group by their
// SequenceNumber, a decimal of up to 128 bits.
func compareSequence(a, b types.Message) int {
	x := a.Attributes[string(types.MessageSystemAttributeNameSequenceNumber)]
	y := b.Attributes[string(types.MessageSystemAttributeNameSequenceNumber)]
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(x, y)
}

// release makes msgs visible again at once.
func (p *Poller) release(msgs []types.Message) {
	if len(msgs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(msgs) > 0 {
		n := min(len(msgs), 10)
		entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, n)
		for i, m := range msgs[:n] {
			entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
		}
		if _, err := p.cfg.API.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(p.cfg.QueueURL), Entries: entries}); err != nil {
			p.cfg.Log.Error("could not make held-back messages visible again; they come back after the visibility timeout", "messages", n, "err", err)
		}
		msgs = msgs[n:]
	}
}

// receive gathers one batch: up to BatchSize messages, waiting at most
// the batching window once the first has come.
func (p *Poller) receive(ctx context.Context) []types.Message {
	var msgs []types.Message
	var deadline time.Time
	for len(msgs) < p.cfg.BatchSize {
		wait := p.cfg.PollWait
		if len(msgs) > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			wait = left
		}
		out, err := p.cfg.API.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(p.cfg.QueueURL),
			MaxNumberOfMessages:         int32(min(p.cfg.BatchSize-len(msgs), 10)),
			WaitTimeSeconds:             int32(max(1, (wait+time.Second-1)/time.Second)),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if ctx.Err() == nil {
				p.cfg.Log.Error("receive failed", "queue", p.cfg.QueueURL, "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			return msgs
		}
		if len(out.Messages) == 0 && len(msgs) == 0 {
			return nil
		}
		msgs = append(msgs, out.Messages...)
		if len(msgs) > 0 && deadline.IsZero() {
			if p.cfg.BatchingWindow <= 0 {
				break
			}
			deadline = time.Now().Add(p.cfg.BatchingWindow)
		}
	}
	return msgs
}

// Event returns the SQS event Lambda sends for msgs.
func Event(msgs []types.Message, queueARN, region string) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	for _, m := range msgs {
		rec := events.SQSMessage{
			MessageId:              aws.ToString(m.MessageId),
			ReceiptHandle:          aws.ToString(m.ReceiptHandle),
			Body:                   aws.ToString(m.Body),
			Md5OfBody:              aws.ToString(m.MD5OfBody),
			Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
			Attributes:             map[string]string{},
			MessageAttributes:      map[string]events.SQSMessageAttribute{},
			EventSource:            "aws:sqs",
			EventSourceARN:         queueARN,
			AWSRegion:              region,
		}
		for k, v := range m.Attributes {
			rec.Attributes[k] = v
		}
		for k, v := range m.MessageAttributes {
			rec.MessageAttributes[k] = events.SQSMessageAttribute{
				StringValue:      v.StringValue,
				BinaryValue:      v.BinaryValue,
				StringListValues: nonNil(v.StringListValues),
				BinaryListValues: nonNilBytes(v.BinaryListValues),
				DataType:         aws.ToString(v.DataType),
			}
		}
		ev.Records = append(ev.Records, rec)
	}
	return ev
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilBytes(s [][]byte) [][]byte {
	if s == nil {
		return [][]byte{}
	}
	return s
}

// errBadResponse is a batchItemFailures answer Lambda would refuse.
var errBadResponse = errors.New("sqsevents: batchItemFailures names an unknown or empty itemIdentifier")

// handle runs one batch and deletes what succeeded. It returns the IDs of
// the messages left for redelivery.
func (p *Poller) handle(ctx context.Context, msgs []types.Message) map[string]bool {
	p.batches.Add(1)
	all := map[string]bool{}
	for _, m := range msgs {
		all[aws.ToString(m.MessageId)] = true
	}
	payload, err := json.Marshal(Event(msgs, p.cfg.QueueARN, p.cfg.Region))
	if err != nil {
		p.cfg.Log.Error("encode event", "err", err)
		return all
	}
	res, err := p.cfg.Invoke(ctx, payload)
	keep := map[string]bool{}
	switch {
	case err != nil:
		p.cfg.Log.Error("invoke failed; the batch is left for redelivery", "messages", len(msgs), "err", err)
		return all
	case res.Err != nil:
		p.failed.Add(int64(len(msgs)))
		p.cfg.Log.Warn("function error; the batch is left for redelivery", "messages", len(msgs), "errorType", res.Err.Type)
		return all
	case p.cfg.ReportBatchItemFailures:
		keep, err = failures(res.Payload, msgs)
		if err != nil {
			p.failed.Add(int64(len(msgs)))
			p.cfg.Log.Warn("the batch is left for redelivery", "messages", len(msgs), "err", err)
			return all
		}
	}
	var entries []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if keep[aws.ToString(m.MessageId)] {
			continue
		}
		entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
	}
	p.failed.Add(int64(len(keep)))
	for len(entries) > 0 {
		n := min(len(entries), 10)
		out, err := p.cfg.API.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.cfg.QueueURL), Entries: entries[:n]})
		if err != nil {
			p.cfg.Log.Error("delete failed; the messages will be redelivered", "err", err)
		} else {
			p.deleted.Add(int64(len(out.Successful)))
		}
		entries = entries[n:]
	}
	p.cfg.Log.Info("batch", "messages", len(msgs), "failed", len(keep), "ms", res.Duration.Milliseconds())
	return keep
}

// failures reads a partial batch response: the IDs of the messages to
// keep. A null or empty answer is a full success; an identifier that is
// empty or not of the batch fails the whole batch, as in Lambda.
func failures(payload []byte, msgs []types.Message) (map[string]bool, error) {
	keep := map[string]bool{}
	var resp struct {
		BatchItemFailures []struct {
			ItemIdentifier *string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if len(payload) == 0 || string(payload) == "null" {
		return keep, nil
	}
	if err := json.Unmarshal(payload, &resp); err != nil {
		return nil, errBadResponse
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		ids[aws.ToString(m.MessageId)] = true
	}
	for _, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == nil || !ids[*f.ItemIdentifier] {
			return nil, errBadResponse
		}
		keep[*f.ItemIdentifier] = true
	}
	return keep, nil
}
