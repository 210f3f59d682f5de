package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
)

// flakyRepo fails the first fails reads with err (every read when fails
// is negative), and counts the reads.
type flakyRepo struct {
	memory.Repository
	mu    sync.Mutex
	fails int
	err   error
	reads int
}

func (r *flakyRepo) Get(ctx context.Context, sc memory.Scope) (memory.Record, error) {
	r.mu.Lock()
	r.reads++
	fail := r.fails != 0
	if r.fails > 0 {
		r.fails--
	}
	r.mu.Unlock()
	if fail {
		return memory.Record{}, r.err
	}
	return r.Repository.Get(ctx, sc)
}

var throttled = &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "slow down"}

// fast is a policy for tests: short waits.
var fast = gateway.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, Total: 3 * time.Second}

// flakyGateway returns a gateway over repo, with cfg's policy fields, and
// the reports it makes.
func flakyGateway(t *testing.T, repo memory.Repository, q producer.API, cfg gateway.Config) (*gateway.Gateway, *memory.Store, *[]gateway.MemoryError) {
	t.Helper()
	store, err := memory.New(repo, memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var reports []gateway.MemoryError
	cfg.Store, cfg.Producer, cfg.Model, cfg.ModelID = store, producer.New(q, "https://sqs.local/1/q.fifo"), okModel{}, "chat-model"
	cfg.OnMemoryError = func(_ context.Context, e gateway.MemoryError) { reports = append(reports, e) }
	g, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g, store, &reports
}

func TestReadIsRetriedOnThrottling(t *testing.T) {
	ctx := context.Background()
	repo := &flakyRepo{Repository: memorytest.NewRepo(), fails: 2, err: throttled}
	g, store, reports := flakyGateway(t, repo, &queue{}, gateway.Config{Retry: fast})
	if _, err := store.Put(ctx, ana, memory.FactInput{Key: "home_city", Value: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	repo.reads = 0
	system, err := g.SystemPrompt(ctx, ana)
	if err != nil {
		t.Fatal(err)
	}
	if !containsAll(system, `"Lisbon"`) || repo.reads != 3 || len(*reports) != 0 {
		t.Errorf("after two throttled reads: reads %d, reports %v, prompt %q", repo.reads, *reports, system)
	}
}

func TestReadFallsBackToLastKnownThenEmpty(t *testing.T) {
	ctx := context.Background()
	repo := &flakyRepo{Repository: memorytest.NewRepo(), err: errors.New("table gone")}
	g, store, reports := flakyGateway(t, repo, &queue{}, gateway.Config{Retry: fast})
	if _, err := store.Put(ctx, ana, memory.FactInput{Key: "home_city", Value: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.SystemPrompt(ctx, ana); err != nil {
		t.Fatal(err)
	}
	repo.fails, repo.reads = -1, 0
	system, err := g.SystemPrompt(ctx, ana)
	if err != nil || !containsAll(system, `"Lisbon"`) {
		t.Fatalf("with the repository down: %q, %v; want the last-known facts", system, err)
	}
	if repo.reads != 1 {
		t.Errorf("a final error was tried %d times, want 1", repo.reads)
	}
	bob := memory.Scope{TenantID: "acme", UserID: "bob"}
	if system, err = g.SystemPrompt(ctx, bob); err != nil || containsAll(system, "user_memory") {
		t.Errorf("a user never read: %q, %v; want the prompt without facts", system, err)
	}
	got := []string{}
	for _, r := range *reports {
		got = append(got, r.Scope.UserID+":"+r.Op+":"+r.Served)
	}
	if want := "ana:read:last-known bob:read:empty"; joined(got) != want || !errors.Is((*reports)[0].Err, repo.err) {
		t.Errorf("reports = %v, want %s wrapping the repository's error", got, want)
	}
}

func TestStrictMemoryAndCancellationReturnTheError(t *testing.T) {
	repo := &flakyRepo{Repository: memorytest.NewRepo(), fails: -1, err: throttled}
	g, _, reports := flakyGateway(t, repo, &queue{}, gateway.Config{Retry: fast, StrictMemory: true})
	if _, err := g.SystemPrompt(context.Background(), ana); !errors.Is(err, throttled) {
		t.Errorf("strict: %v, want the repository's error", err)
	}
	g, _, _ = flakyGateway(t, repo, &queue{}, gateway.Config{Retry: gateway.RetryPolicy{BaseDelay: time.Hour, MaxDelay: time.Hour, Total: 2 * time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if _, err := g.SystemPrompt(ctx, ana); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("cancelled during a wait: %v after %v, want context.Canceled at once", err, time.Since(start))
	}
	if len(*reports) != 0 {
		t.Errorf("reports = %v, want none", *reports)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	busy := &smithyhttp.ResponseError{Err: errors.New("busy"), Response: &smithyhttp.Response{Response: &http.Response{
		StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": []string{"1"}}}}}
	repo := &flakyRepo{Repository: memorytest.NewRepo(), fails: 1, err: busy}
	g, _, reports := flakyGateway(t, repo, &queue{}, gateway.Config{Retry: fast})
	start := time.Now()
	if _, err := g.SystemPrompt(context.Background(), ana); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < time.Second || repo.reads != 2 || len(*reports) != 0 {
		t.Errorf("a 503 with Retry-After 1: answered after %v in %d reads (reports %v), want 2 reads after 1s", waited, repo.reads, *reports)
	}
	repo.fails, repo.reads = 1, 0
	g, _, _ = flakyGateway(t, repo, &queue{}, gateway.Config{Retry: gateway.RetryPolicy{Total: 500 * time.Millisecond}})
	if _, err := g.SystemPrompt(context.Background(), ana); err != nil || repo.reads != 1 {
		t.Errorf("a Retry-After past the total time: %d reads, %v; want 1 and the fallback", repo.reads, err)
	}
}

// flakyQueue throttles the first fails sends and keeps the deduplication
// ID of every send.
type flakyQueue struct {
	queue
	fails int
	ids   []string
}

func (q *flakyQueue) SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.ids = append(q.ids, *in.MessageDeduplicationId)
	if q.fails != 0 {
		q.fails--
		return nil, &smithy.GenericAPIError{Code: "RequestThrottled", Message: "throttled"}
	}
	return q.queue.SendMessage(ctx, in, opts...)
}

func TestSendIsRetriedThenReported(t *testing.T) {
	ctx := context.Background()
	q := &flakyQueue{fails: 1}
	g, _, reports := flakyGateway(t, memorytest.NewRepo(), q, gateway.Config{Retry: fast})
	th := g.NewThread(ana, "th-1")
	if err := sendOnce(ctx, g, th); err != nil {
		t.Fatal(err)
	}
	if len(q.ids) != 2 || q.ids[0] != q.ids[1] || len(q.bodies) != 1 || len(*reports) != 0 {
		t.Errorf("a throttled send: ids %v, %d queued, reports %v; want it sent again with the same ID", q.ids, len(q.bodies), *reports)
	}
	q.fails = -1
	if err := sendOnce(ctx, g, th); err == nil || len(*reports) != 1 || (*reports)[0].Op != "send" || (*reports)[0].Served != "returned" {
		t.Errorf("a send that keeps failing: %v, reports %v", err, *reports)
	}
}

// okModel answers every call with "ok".
type okModel struct{}

func (okModel) Converse(context.Context, *bedrockruntime.ConverseInput, ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	return text("ok"), nil
}

// sendOnce asks one question in th, which sends one extraction message.
func sendOnce(ctx context.Context, g *gateway.Gateway, th *gateway.Thread) error {
	_, err := g.Ask(ctx, th, "I live in Porto", nil)
	return err
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func joined(parts []string) string { return strings.Join(parts, " ") }
