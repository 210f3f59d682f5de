package producer_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/producer"
)

// TestSendEndsWithinItsTimeout sends through the real SQS client to a
// queue that never answers (a stalled SQS): Send gives up at its own
// timeout, though the caller's context allows much longer, and says so
// with ErrTimeout.
func TestSendEndsWithinItsTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	client := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	p := producer.New(client, srv.URL+"/123456789012/q.fifo", producer.WithSendTimeout(300*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err := p.Send(ctx, producer.Message{TenantID: "acme", UserID: "ana", ThreadID: "th-1", TurnCount: 2,
		Turns: []producer.Turn{{Role: "user", Text: "I'm Ana"}}})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Send took %s with a 300ms send timeout", took)
	}
	if !errors.Is(err, producer.ErrTimeout) {
		t.Errorf("got %v, want ErrTimeout", err)
	}
}
