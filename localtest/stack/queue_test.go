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
