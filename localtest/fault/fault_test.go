package fault_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/localtest/fault"
)

// backend is a service that answers every request with an empty JSON
// object and counts them.
type backend struct{ served atomic.Int32 }

func (b *backend) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	b.served.Add(1)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_, _ = w.Write([]byte(`{}`))
}

// start serves svc's injector in front of a backend.
func start(t *testing.T, svc fault.Service) (*fault.Injector, *backend, string) {
	t.Helper()
	b := &backend{}
	in := fault.New(svc, b)
	srv := httptest.NewServer(in)
	t.Cleanup(srv.Close)
	return in, b, srv.URL
}

var creds = credentials.NewStaticCredentialsProvider("test", "test", "")

func dynamo(url string, attempts int) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(url), RetryMaxAttempts: attempts})
}

func describe(ctx context.Context, db *dynamodb.Client) error {
	_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("t")})
	return err
}

// TestThrottleAndErrorAsTheSDKSeesThem checks that the real SDK clients
// read the injected errors as the service's own: DynamoDB's
// ProvisionedThroughputExceededException (a throttle the retryer retries)
// and InternalServerError, SQS's RequestThrottled, Bedrock's
// ThrottlingException; and that a fault of N requests takes exactly N.
func TestThrottleAndErrorAsTheSDKSeesThem(t *testing.T) {
	ctx := context.Background()
	in, b, url := start(t, fault.DynamoDB)
	must(t, in.Set(fault.Spec{Kind: fault.Throttle, Requests: 2}))
	var throttled *ddbtypes.ProvisionedThroughputExceededException
	if err := describe(ctx, dynamo(url, 1)); !errors.As(err, &throttled) || retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) != aws.TrueTernary {
		t.Errorf("throttled DynamoDB: got %v", err)
	}
	// The second throttled request is retried by the SDK, the third served.
	if err := describe(ctx, dynamo(url, 3)); err != nil || b.served.Load() != 1 {
		t.Errorf("after two throttles, got %v with %d served", err, b.served.Load())
	}
	if st := in.Status(); st.Faulted != 2 || st.Passed != 1 || st.Fault != nil {
		t.Errorf("status %+v, want 2 faulted, 1 passed, no fault left", st)
	}
	must(t, in.Set(fault.Spec{Kind: fault.Error, Requests: 1}))
	var internal *ddbtypes.InternalServerError
	if err := describe(ctx, dynamo(url, 1)); !errors.As(err, &internal) {
		t.Errorf("failing DynamoDB: got %v", err)
	}

	in, _, url = start(t, fault.SQS)
	must(t, in.Set(fault.Spec{Kind: fault.Throttle, For: time.Minute}))
	q := sqs.New(sqs.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(url), RetryMaxAttempts: 1})
	_, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url + "/1/q.fifo"), MessageBody: aws.String("x")})
	var sqsThrottled *sqstypes.RequestThrottled
	if !errors.As(err, &sqsThrottled) {
		t.Errorf("throttled SQS: got %v", err)
	}

	in, _, url = start(t, fault.Bedrock)
	must(t, in.Set(fault.Spec{Kind: fault.Throttle, Requests: 1}))
	br := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(url), RetryMaxAttempts: 1})
	_, err = br.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("m")})
	var brThrottled *brtypes.ThrottlingException
	if !errors.As(err, &brThrottled) {
		t.Errorf("throttled Bedrock: got %v", err)
	}
}

// TestStallHoldsThenServes checks that a stall holds a request past its
// caller's deadline and serves it when the stall ends, as a frozen
// service that resumes does; requests after it pass.
func TestStallHoldsThenServes(t *testing.T) {
	in, b, url := start(t, fault.DynamoDB)
	must(t, in.Set(fault.Spec{Kind: fault.Stall, For: 400 * time.Millisecond}))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := describe(ctx, dynamo(url, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("during the stall: got %v, want the caller's deadline", err)
	}
	if n := b.served.Load(); n != 0 {
		t.Errorf("%d served during the stall", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.served.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := b.served.Load(); n != 1 {
		t.Errorf("%d served after the stall, want the held request", n)
	}
	if err := describe(context.Background(), dynamo(url, 1)); err != nil {
		t.Errorf("after the stall: %v", err)
	}
}

// TestSlowAndClear checks that slow delays each request it takes and that
// Clear ends a fault at once, releasing what a stall holds.
func TestSlowAndClear(t *testing.T) {
	in, _, url := start(t, fault.DynamoDB)
	must(t, in.Set(fault.Spec{Kind: fault.Slow, Requests: 1, Delay: 300 * time.Millisecond}))
	began := time.Now()
	if err := describe(context.Background(), dynamo(url, 1)); err != nil || time.Since(began) < 300*time.Millisecond {
		t.Errorf("slow: got %v after %s", err, time.Since(began))
	}
	must(t, in.Set(fault.Spec{Kind: fault.Stall, For: time.Hour}))
	done := make(chan error, 1)
	go func() { done <- describe(context.Background(), dynamo(url, 1)) }()
	time.Sleep(100 * time.Millisecond)
	in.Clear()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("released request: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Clear did not release the held request")
	}
}

// TestControl drives an injector through the control API and its client.
func TestControl(t *testing.T) {
	in, _, _ := start(t, fault.DynamoDB)
	srv := httptest.NewServer(fault.Control(in))
	defer srv.Close()
	c := fault.Client{URL: srv.URL + "/faults"}
	ctx := context.Background()
	st, err := c.Set(ctx, "dynamodb", fault.Spec{Kind: fault.Throttle, For: time.Minute, Requests: 5})
	if err != nil || st.Fault == nil || st.Fault.Kind != fault.Throttle || st.RequestsLeft != 5 || st.Left == "" {
		t.Errorf("Set: %+v, %v", st, err)
	}
	for _, bad := range []struct {
		service string
		spec    fault.Spec
		want    string
	}{
		{"dynamodb", fault.Spec{Kind: "freeze", For: time.Second}, "unknown kind"},
		{"dynamodb", fault.Spec{Kind: fault.Stall, Requests: 3}, "needs a duration"},
		{"dynamodb", fault.Spec{Kind: fault.Error}, "duration"},
		{"kinesis", fault.Spec{Kind: fault.Error, Requests: 1}, "no service"},
	} {
		if _, err := c.Set(ctx, bad.service, bad.spec); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Set(%s, %+v): got %v, want an error saying %q", bad.service, bad.spec, err, bad.want)
		}
	}
	must(t, c.Clear(ctx, ""))
	all, err := c.Status(ctx)
	if err != nil || len(all) != 1 || all[0].Fault != nil {
		t.Errorf("Status after Clear: %+v, %v", all, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
