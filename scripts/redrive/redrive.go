package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/schema"
)

// queueAPI is what the redrive calls of *sqs.Client.
type queueAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// records reads a user's record: the fences a message must not pass.
type records interface {
	Get(ctx context.Context, s memory.Scope) (memory.Record, error)
}

// Counts is what a redrive did, message by message; never a message's
// content.
type Counts struct {
	// Redriven went back to the extraction queue.
	Redriven int `json:"redriven"`
	// Erased were deleted: their user was erased after they were sent.
	Erased int `json:"droppedErased"`
	// Forgotten were deleted: their user cleared the facts, or removed
	// one, after they were sent.
	Forgotten int `json:"droppedForgotten"`
	// Unreadable stay in the dead-letter queue: not an extraction message
	// the extractor could read, they would fail again.
	Unreadable int `json:"keptUnreadable"`
}

// Redrive moves the messages of the dead-letter queue DLQ back to Queue,
// the extraction queue, but deletes at once those a fence would have
// refused. A message sent again gets a new SentTimestamp, the time the
// extractor compares with the fences, so a message of a user erased (or
// who cleared or removed a fact) after it was first sent must not go back.
type Redrive struct {
	// SQS is the client of both queues.
	SQS queueAPI
	// Records reads the users' records (dynamorepo.Repo).
	Records records
	// Queue and DLQ are the URLs of the extraction queue and of its
	// dead-letter queue.
	Queue, DLQ string
	// Hold is how long a received message stays invisible while it is
	// handled; an unreadable one reappears after it, for the next run.
	Hold time.Duration
}

// Run redrives until a receive finds the dead-letter queue empty, and
// returns the counts. An error stops it; a message being handled then
// reappears in the dead-letter queue after Hold, and a new run sends it
// with the same deduplication ID, which SQS drops within its 5-minute
// deduplication interval.
func (r *Redrive) Run(ctx context.Context) (Counts, error) {
	var c Counts
	for {
		out, err := r.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(r.DLQ), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			VisibilityTimeout:           int32(r.Hold.Seconds()),
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			return c, fmt.Errorf("receive from the dead-letter queue: %w", err)
		}
		if len(out.Messages) == 0 {
			return c, nil
		}
		for _, m := range out.Messages {
			if err := r.one(ctx, m, &c); err != nil {
				return c, err
			}
		}
	}
}

// one handles the message m: it decides, then sends it back or not, then
// deletes it from the dead-letter queue unless it is unreadable.
func (r *Redrive) one(ctx context.Context, m sqstypes.Message, c *Counts) error {
	msg, err := schema.DecodeExtractionMessageV1([]byte(aws.ToString(m.Body)))
	if err != nil {
		c.Unreadable++
		return nil
	}
	sc := memory.Scope{TenantID: msg.TenantID, UserID: msg.UserID}
	rec, err := r.Records.Get(ctx, sc)
	if err != nil {
		return fmt.Errorf("read a record: %w", err)
	}
	switch sent := sentAt(m, msg); {
	case !rec.ErasedAt.IsZero() && !sent.After(rec.ErasedAt):
		c.Erased++
	case fenced(rec, sent):
		c.Forgotten++
	default:
		if _, err := r.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(r.Queue), MessageBody: m.Body,
			MessageGroupId:         aws.String(m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]),
			MessageDeduplicationId: aws.String(dedupID(m)), MessageAttributes: m.MessageAttributes}); err != nil {
			return fmt.Errorf("send to the extraction queue: %w", err)
		}
		c.Redriven++
	}
	if _, err := r.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(r.DLQ), ReceiptHandle: m.ReceiptHandle}); err != nil {
		return fmt.Errorf("delete from the dead-letter queue: %w", err)
	}
	return nil
}

// sentAt returns the earlier of the queue's SentTimestamp and the
// message's own sentAt: a FIFO dead-letter queue may count a message's
// time from its move there, and the earlier time fences more.
func sentAt(m sqstypes.Message, msg schema.ExtractionMessage) time.Time {
	sent := msg.SentAt.UTC()
	if ms, err := strconv.ParseInt(m.Attributes[string(sqstypes.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil && ms > 0 {
		if t := time.UnixMilli(ms).UTC(); t.Before(sent) {
			sent = t
		}
	}
	return sent
}

// fenced reports whether the user cleared the facts, or removed one,
// at or after sent: the message, sent again, would be newer than that
// fence and could set a forgotten fact again.
func fenced(rec memory.Record, sent time.Time) bool {
	if !rec.ClearedAt.IsZero() && !sent.After(rec.ClearedAt) {
		return true
	}
	for _, at := range rec.Tombstones {
		if !sent.After(at) {
			return true
		}
	}
	return false
}

// dedupID returns the deduplication ID of m sent again: derived from its
// first deduplication ID and its message ID, so that a second run that
// sends the same message again within 5 minutes is dropped by SQS.
func dedupID(m sqstypes.Message) string {
	sum := sha256.Sum256([]byte(m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageDeduplicationId)] + "\x00" + aws.ToString(m.MessageId)))
	return "redrive-" + hex.EncodeToString(sum[:16])
}
