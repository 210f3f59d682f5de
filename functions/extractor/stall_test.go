package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// stallingRepo is an in-memory repository whose reads stall, as a
// DynamoDB that stops answering does, from the (after+1)th on: each
// stalled read ends only with its caller's context.
type stallingRepo struct {
	*memorytest.Repo
	after int32
	reads atomic.Int32
}

func (r *stallingRepo) Get(ctx context.Context, s memory.Scope) (memory.Record, error) {
	if r.reads.Add(1) > r.after {
		<-ctx.Done()
		return memory.Record{}, fmt.Errorf("stalled: %w", ctx.Err())
	}
	return r.Repo.Get(ctx, s)
}

// TestStallMidBatchReportsTheRestBeforeTheDeadline runs a batch of four
// users' records while the repository stalls after the first record's
// read: the first record is done and stays done; the second ends by its
// own deadline, before the invocation's; the records not yet started are
// reported as batch item failures, without being tried, and the batch
// answers before the invocation's deadline.
func TestStallMidBatchReportsTheRestBeforeTheDeadline(t *testing.T) {
	repo := &stallingRepo{Repo: memorytest.NewRepo(), after: 1}
	store, err := memory.New(repo, memory.Config{}, memory.WithModel(memorytest.NewModel(anaOK, anaOK, anaOK, anaOK)))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := NewHandler(store, WithLogger(slog.New(slog.NewJSONHandler(logs, nil))), WithSafetyMargin(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{h: h, logs: logs}
	payload := editEvent(t, event(t, "extractor-first-answer.json"), func(ev *events.SQSEvent) {
		first := ev.Records[0]
		ev.Records = nil
		for i := range 4 {
			r := first
			r.MessageId = fmt.Sprintf("stall-%d", i)
			r.Attributes = map[string]string{"ApproximateReceiveCount": "1", "MessageGroupId": fmt.Sprintf("acme/u-%d", i)}
			r.Body = strings.Replace(first.Body, `"userId":"u-123"`, fmt.Sprintf(`"userId":"u-%d"`, i), 1)
			ev.Records = append(ev.Records, r)
		}
	})
	const invocation = 4 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), invocation)
	defer cancel()
	began := time.Now()
	resp := f.invoke(t, ctx, payload)
	if took := time.Since(began); took >= invocation {
		t.Errorf("the batch answered after %s, past the invocation's %s", took, invocation)
	}
	if got, want := failedIDs(resp), []string{"stall-1", "stall-2", "stall-3"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v: every record not done", got, want)
	}
	out := f.outcomes(t)
	if out["stall-0"] != string(memory.OutcomeChanged) || out["stall-1"] != outcomeRepository || out["stall-3"] != outcomeDeadline {
		t.Errorf("outcomes = %v, want the first changed, the second repo_failed, the last deadline", out)
	}
	if _, ok := repo.Record(memory.Scope{TenantID: "acme", UserID: "u-0"}); !ok {
		t.Error("the record done before the stall was not stored")
	}
	if n := repo.reads.Load(); n != 2 {
		t.Errorf("%d reads, want 2: records not started are not tried", n)
	}
}
