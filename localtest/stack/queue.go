package stack

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// ErrNotDrained is the error of [WaitDrained] when the queue still holds
// messages at the end of the wait.
var ErrNotDrained = errors.New("stack: the queue is not drained")

// drainPoll is how often [WaitDrained] reads the queue's depth.
const drainPoll = 100 * time.Millisecond

// QueueDepth returns how many messages of the queue at queueURL are
// visible or in flight (SQS's approximate counts).
func QueueDepth(ctx context.Context, client *sqs.Client, queueURL string) (int, error) {
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for name, v := range out.Attributes {
		k, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("queue attribute %s = %q: %w", name, v, err)
		}
		n += k
	}
	return n, nil
}

// WaitDrained waits until the queue at queueURL holds no message, visible
// or in flight, reading its depth every 100 ms: every message sent to it
// has then been handled or has moved on. It returns an error wrapping
// [ErrNotDrained], with the count, when the queue still holds some after
// limit, and ctx's error when ctx ends first.
func WaitDrained(ctx context.Context, client *sqs.Client, queueURL string, limit time.Duration) error {
	end := time.Now().Add(limit)
	for {
		n, err := QueueDepth(ctx, client, queueURL)
		if err != nil {
			return fmt.Errorf("queue depth: %w", err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("%w: it still holds %d messages after %s", ErrNotDrained, n, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(drainPoll):
		}
	}
}
