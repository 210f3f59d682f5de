// Package sqsevents emulates Lambda's SQS event source mapping: it polls a
// queue, hands batches of messages to a function in the SQS event shape,
// deletes what succeeded and leaves the rest for redelivery after the
// queue's visibility timeout, so that the queue's own redrive policy moves
// poison messages to its dead-letter queue.
package sqsevents

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
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
}

// InvokeFunc runs the function with an event.
type InvokeFunc func(ctx context.Context, payload []byte) (lambdapool.Result, error)

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
	// PollWait is the long-polling wait of each receive; 0 means 2 s.
	PollWait time.Duration
	Invoke   InvokeFunc
	// Log receives one line per batch with IDs and counts, never bodies.
	Log *slog.Logger
}

// Poller is a running event source.
type Poller struct {
	cfg     Config
	cancel  context.CancelFunc // stops polling
	abort   context.CancelFunc // stops the batches in flight
	wg      sync.WaitGroup
	batches atomic.Int64
	deleted atomic.Int64
	failed  atomic.Int64
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
		cfg.PollWait = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	// Batches run to their end when polling stops, as Lambda finishes an
	// invocation it started, unless Close gives up waiting.
	batchCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	ctx, cancel := context.WithCancel(ctx)
	p := &Poller{cfg: cfg, cancel: cancel, abort: abort}
	for range cfg.MaxConcurrency {
		p.wg.Go(func() { p.loop(ctx, batchCtx) })
	}
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

func (p *Poller) loop(ctx, batchCtx context.Context) {
	for ctx.Err() == nil {
		if msgs := p.receive(ctx); len(msgs) > 0 {
			p.handle(batchCtx, msgs)
		}
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

func (p *Poller) handle(ctx context.Context, msgs []types.Message) {
	p.batches.Add(1)
	payload, err := json.Marshal(Event(msgs, p.cfg.QueueARN, p.cfg.Region))
	if err != nil {
		p.cfg.Log.Error("encode event", "err", err)
		return
	}
	res, err := p.cfg.Invoke(ctx, payload)
	keep := map[string]bool{}
	switch {
	case err != nil:
		p.cfg.Log.Error("invoke failed; the batch is left for redelivery", "messages", len(msgs), "err", err)
		return
	case res.Err != nil:
		p.failed.Add(int64(len(msgs)))
		p.cfg.Log.Warn("function error; the batch is left for redelivery", "messages", len(msgs), "errorType", res.Err.Type)
		return
	case p.cfg.ReportBatchItemFailures:
		keep, err = failures(res.Payload, msgs)
		if err != nil {
			p.failed.Add(int64(len(msgs)))
			p.cfg.Log.Warn("the batch is left for redelivery", "messages", len(msgs), "err", err)
			return
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
