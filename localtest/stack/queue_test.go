package stack_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/stack"
)

// TestQueueDepthCountsInFlight checks QueueDepth and WaitDrained on
// moto_server's SQS: a received message still counts until it is
// deleted, WaitDrained fails while one is left and returns once the queue
// is empty.
func TestQueueDepthCountsInFlight(t *testing.T) {
	ctx := context.Background()
	q := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(motoserver.Endpoint(t)),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("depth-%d-%d", os.Getpid(), time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	url := *out.QueueUrl
	for _, body := range []string{"a", "b"} {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: out.QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
	if err != nil || len(got.Messages) == 0 {
		t.Fatalf("receive: %v, %d messages", err, len(got.Messages))
	}
	if n := depth(t, q, url); n != 2 {
		t.Errorf("depth with %d of 2 messages in flight = %d, want 2", len(got.Messages), n)
	}
	if err := stack.WaitDrained(ctx, q, url, 300*time.Millisecond); !errors.Is(err, stack.ErrNotDrained) || !strings.Contains(err.Error(), "still holds 2 messages") {
		t.Errorf("WaitDrained on a queue of 2 = %v, want the count", err)
	}
	if _, err := q.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: out.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	if err := stack.WaitDrained(ctx, q, url, 5*time.Second); err != nil {
		t.Errorf("WaitDrained on an empty queue: %v", err)
	}
}

// depth is stack.QueueDepth, failing t on an error.
func depth(t *testing.T, q *sqs.Client, url string) int {
	t.Helper()
	n, err := stack.QueueDepth(context.Background(), q, url)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDelayedMessageWaits holds the local stack's fidelity claim for the
// idle read (docs/localtest.md, "SQS per-message delay"): moto_server
// honours a message's DelaySeconds on a standard queue, as SQS does
// (Amazon SQS Developer Guide, "Amazon SQS message timers"): the message
// is not received before its delay, even by a long poll, and is after it,
// with its message attributes.
func TestDelayedMessageWaits(t *testing.T) {
	ctx := context.Background()
	q := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(motoserver.Endpoint(t)),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("delay-%d-%d", os.Getpid(), time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	const delay = 2 * time.Second
	sent := time.Now()
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("copy"), DelaySeconds: int32(delay / time.Second),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"sentAt": {DataType: aws.String("Number"), StringValue: aws.String("1795989780000")}}}); err != nil {
		t.Fatal(err)
	}
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: out.QueueUrl, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 0 && time.Since(sent) < delay {
		t.Fatalf("a message delayed %s was received after %s", delay, time.Since(sent))
	}
	var m sqstypes.Message
	for end := sent.Add(delay + 10*time.Second); len(got.Messages) == 0; {
		if time.Now().After(end) {
			t.Fatalf("a message delayed %s was not received within %s", delay, time.Since(sent))
		}
		got, err = q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: out.QueueUrl, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	m = got.Messages[0]
	if took := time.Since(sent); took < delay {
		t.Errorf("received after %s, before its delay %s", took, delay)
	}
	if aws.ToString(m.MessageAttributes["sentAt"].StringValue) != "1795989780000" {
		t.Errorf("attributes %v, want sentAt kept", m.MessageAttributes)
	}
}
