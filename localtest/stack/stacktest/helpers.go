package stacktest

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

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
	return sqs.NewFromConfig(st.Info.AWSConfig(), func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(st.Info.AWSEndpoint)
		if transport != nil {
			o.HTTPClient = &http.Client{Transport: transport}
		}
	})
}

// Depth is [stack.QueueDepth] for a test: it fails t on an error.
func Depth(t testing.TB, client *sqs.Client, queueURL string) int {
	t.Helper()
	n, err := stack.QueueDepth(context.Background(), client, queueURL)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
