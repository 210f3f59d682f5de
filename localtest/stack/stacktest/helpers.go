package stacktest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/localtest/token"
)

// NewUser returns a user ID that begins with prefix and that no other
// test uses.
func NewUser(prefix string) string { return prefix + "-" + strings.ToLower(rand.Text()[:8]) }

// Claims returns the claims of a token the stack's API accepts, for user
// of tenant with scopes.
func Claims(st *stack.Stack, tenant, user string, scopes ...string) token.Claims {
	return token.Claims{Issuer: st.Info.Issuer, Audience: st.Info.Audience, Subject: user,
		TenantClaim: st.Info.TenantClaim, Tenant: tenant, Scopes: scopes}
}

// Sign signs c with the stack's issuer, failing t on an error.
func Sign(t testing.TB, st *stack.Stack, c token.Claims) string {
	t.Helper()
	tok, err := st.Issuer().Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SQSClient returns a client of the stack's queues on moto, past the
// faults the stack injects, over transport (nil for the SDK's own HTTP
// client).
func SQSClient(st *stack.Stack, transport http.RoundTripper) *sqs.Client {
	o := sqs.Options{
		Region:       st.Info.Region,
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(st.Info.AWSEndpoint),
	}
	if transport != nil {
		o.HTTPClient = &http.Client{Transport: transport}
	}
	return sqs.New(o)
}

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
// or in flight, polling every 100 ms, and fails when it still holds some
// after limit.
func WaitDrained(ctx context.Context, client *sqs.Client, queueURL string, limit time.Duration) error {
	for end := time.Now().Add(limit); ; time.Sleep(100 * time.Millisecond) {
		n, err := QueueDepth(ctx, client, queueURL)
		if err != nil {
			return fmt.Errorf("queue depth: %w", err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("the queue still holds %d messages after %s", n, limit)
		}
	}
}

// Depth is QueueDepth for a test: it fails t on an error.
func Depth(t testing.TB, client *sqs.Client, queueURL string) int {
	t.Helper()
	n, err := QueueDepth(context.Background(), client, queueURL)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
