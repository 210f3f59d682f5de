package dynamorepo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/motoserver"
)

// endpoint returns the moto_server endpoint the tests talk to, from the
// environment (see motoserver.Endpoint): without one, tb is skipped.
func endpoint(tb testing.TB) string {
	tb.Helper()
	return motoserver.Endpoint(tb)
}

// counter counts the requests a client sends (every attempt), and the
// conditional check failures among their answers, by operation.
type counter struct {
	mu       sync.Mutex
	requests map[string]int
	failed   map[string]int
}

func newCounter() *counter {
	return &counter{requests: map[string]int{}, failed: map[string]int{}}
}

// middleware returns the stack option that counts. It sits at the top of
// the deserialize step, which every attempt passes, and sees the decoded
// error of each.
func (c *counter) middleware(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("countRequests",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			op := middleware.GetOperationName(ctx)
			out, md, err := next.HandleDeserialize(ctx, in)
			var ccf *types.ConditionalCheckFailedException
			c.mu.Lock()
			c.requests[op]++
			if errors.As(err, &ccf) {
				c.failed[op]++
			}
			c.mu.Unlock()
			return out, md, err
		}), middleware.Before)
}

// counts returns the requests since the last reset as "Op:n" sorted, for
// exact comparison, and resets.
func (c *counter) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for op, n := range c.requests {
		parts = append(parts, fmt.Sprintf("%s:%d", op, n))
	}
	sort.Strings(parts)
	c.requests = map[string]int{}
	c.failed = map[string]int{}
	return strings.Join(parts, " ")
}

// get returns the requests of op and the conditional failures among them
// since the last reset.
func (c *counter) get(op string) (requests, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests[op], c.failed[op]
}

// oneAtATime is held by every request a test client sends to moto_server.
//
// moto_server serves each request on its own thread and takes no lock per
// item, so two conditional writes of one item that arrive together can both
// pass their condition: run concurrently, a budget of 5 calls allowed 6 to 8
// of 20 in about one run in eight. DynamoDB applies each request to an item
// atomically. Sending one request at a time restores that guarantee and
// nothing more: the writers still interleave their reads, merges and
// conditional writes freely between requests, which is the concurrency the
// tests are about.
var oneAtATime sync.Mutex

// serialHTTP is an HTTP client that holds oneAtATime for a whole exchange,
// response body included.
type serialHTTP struct{ next dynamodb.HTTPClient }

func (s serialHTTP) Do(r *http.Request) (*http.Response, error) {
	oneAtATime.Lock()
	defer oneAtATime.Unlock()
	resp, err := s.next.Do(r)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, err
}

// newClient returns a real SDK client for moto_server at ep whose requests
// c counts (c may be nil). Its requests go one at a time (see oneAtATime).
func newClient(ep string, c *counter, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	o := dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ep),
		HTTPClient:   serialHTTP{next: awshttp.NewBuildableClient()},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "dummy"}, nil
		}),
	}
	if c != nil {
		o.APIOptions = append(o.APIOptions, c.middleware)
	}
	for _, f := range optFns {
		f(&o)
	}
	return dynamodb.New(o)
}

var tableSeq atomic.Int64

// newTable creates a table with a unique name through dynamorepo.CreateTable
// and returns its name.
func newTable(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("memory-%d-%d", time.Now().UnixNano(), tableSeq.Add(1))
	if err := dynamorepo.CreateTable(context.Background(), newClient(endpoint(tb), nil), name); err != nil {
		tb.Fatalf("CreateTable: %v", err)
	}
	return name
}

// fixture is one table, a counted client and a repository over them.
type fixture struct {
	table  string
	count  *counter
	client *dynamodb.Client
	repo   *dynamorepo.Repo
}

func newFixture(tb testing.TB, opts ...dynamorepo.Option) *fixture {
	tb.Helper()
	f := &fixture{table: newTable(tb), count: newCounter()}
	f.client = newClient(endpoint(tb), f.count)
	f.repo = dynamorepo.New(f.client, f.table, opts...)
	return f
}

// step runs op, the step of a test called name, and fails t unless op
// succeeds with exactly the requests want, as [counter.take] lists them.
func (f *fixture) step(t *testing.T, name, want string, op func() error) {
	t.Helper()
	f.count.take()
	if err := op(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got := f.count.take(); got != want {
		t.Errorf("%s: requests = %q, want %q", name, got, want)
	}
}

// rawItem returns the stored item of key pk, read without counting.
func (f *fixture) rawItem(tb testing.TB, pk string) map[string]types.AttributeValue {
	tb.Helper()
	out, err := newClient(endpoint(tb), nil).GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName:      aws.String(f.table),
		Key:            map[string]types.AttributeValue{dynamorepo.KeyAttribute: &types.AttributeValueMemberS{Value: pk}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		tb.Fatalf("raw GetItem: %v", err)
	}
	return out.Item
}
