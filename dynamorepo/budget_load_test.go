package dynamorepo_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/memory"
)

// itemWrites is a dynamorepo.API over a real client that counts the
// UpdateItem requests per item key, and the conditional check failures.
type itemWrites struct {
	*dynamodb.Client
	mu       sync.Mutex
	writes   map[string]int
	failures int
}

func (w *itemWrites) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := w.Client.UpdateItem(ctx, in, optFns...)
	pk := in.Key["pk"].(*types.AttributeValueMemberS).Value
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes[pk]++
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		w.failures++
	}
	return out, err
}

// hottest returns the most writes any one item took.
func (w *itemWrites) hottest() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Max(slices.Collect(maps.Values(w.writes)))
}

// extractions runs n extractions' worth of budget calls for one tenant
// (Allow, then Record), from workers goroutines at once, and returns how
// many were allowed.
func extractions(b *dynamorepo.Budget, n, workers int) int {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
		work    = make(chan struct{})
	)
	m := memory.CallMeta{TenantID: "bigcorp", UserID: "u", ThreadID: "th"}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				if b.Allow(ctx, m) {
					b.Record(ctx, m, memory.Usage{InputTokens: 1000, OutputTokens: 40})
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	for range n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	return allowed
}

// TestBudgetLoadOneLargeTenant runs the budget calls of 400 extractions of
// one tenant, 16 at a time, through the real SDK against moto_server, with
// one counter item and with DefaultBudgetShards, and counts the writes the
// hottest item takes. DynamoDB serves at most 1,000 write units a second
// on one item (docs/scale.md), so the writes per extraction on the hottest
// item set the tenant's ceiling. The counts are exact: the shards are
// taken in turn. No write conflicts in either case: the counters are
// conditional ADDs, never read-modify-write.
func TestBudgetLoadOneLargeTenant(t *testing.T) {
	const n, workers, limit = 400, 16, 1_000_000
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	block := []string{fmt.Sprintf("The load test runs %d extractions of one tenant, %d at a time, through the real SDK against", n, workers),
		fmt.Sprintf("moto_server, with one shard and with %d, and asserts the exact counts (the shards are taken", dynamorepo.DefaultBudgetShards),
		"in turn, so the counts do not depend on timing):", "", "```sh", budgetTestsCommand, "```", ""}
	perExtraction := map[int]float64{}
	for _, tc := range []struct {
		shards  int
		hottest int
	}{
		{1, 2 * n},
		{dynamorepo.DefaultBudgetShards, 2 * n / dynamorepo.DefaultBudgetShards},
	} {
		f := newFixture(t)
		api := &itemWrites{Client: f.client, writes: map[string]int{}}
		b := dynamorepo.NewShardedBudget(api, f.table, limit, tc.shards, dynamorepo.WithClock(fixedClock(&now)))
		if got := extractions(b, n, workers); got != n {
			t.Fatalf("%d shards: %d of %d extractions allowed, want all", tc.shards, got, n)
		}
		hot := api.hottest()
		perExtraction[tc.shards] = float64(hot) / n
		line := fmt.Sprintf("%d shard(s): %d extractions, %d counter items, %d writes on the hottest (%.2f per extraction), %d conditional failures: at DynamoDB's 1,000 writes/s per item, at most %.0f extractions/s for one tenant",
			tc.shards, n, len(api.writes), hot, perExtraction[tc.shards], api.failures, itemWritesPerSecond/perExtraction[tc.shards])
		t.Log(line)
		block = append(block, "    "+line)
		if hot != tc.hottest || len(api.writes) != tc.shards || api.failures != 0 {
			t.Errorf("%d shards: hottest item took %d writes over %d items with %d conditional failures, want %d over %d with none",
				tc.shards, hot, len(api.writes), api.failures, tc.hottest, tc.shards)
		}
		u, err := b.Usage(ctx, "bigcorp", now)
		if err != nil {
			t.Fatal(err)
		}
		if want := (dynamorepo.Usage{Calls: n, InputTokens: 1000 * n, OutputTokens: 40 * n}); u != want {
			t.Errorf("%d shards: usage %+v, want %+v", tc.shards, u, want)
		}
	}
	docblock.Check(t, filepath.Join("..", "docs", "scale.md"), "budget-load", strings.Join(block, "\n"))
}

// itemWritesPerSecond is DynamoDB's ceiling of writes a second on one
// item (docs/scale.md).
const itemWritesPerSecond = 1000

// budgetTestsCommand runs the budget's load tests and rewrites the blocks
// of docs/scale.md they hold.
const budgetTestsCommand = "./scripts/with-moto.sh go test -count=1 -run 'TestBudgetLoadOneLargeTenant|TestBudgetShardedLimit' -v ./dynamorepo/"

// TestBudgetShardedLimit checks the limit under concurrent callers: a
// sharded budget never allows fewer calls than its limit and at most
// Shards·ShardLimit (fewer than Shards more); every refusal comes after
// all shards are full.
func TestBudgetShardedLimit(t *testing.T) {
	const callers = 300
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var said []string
	cases := []struct {
		limit, shards       int
		wantShards, allowed int
	}{
		{100, 1, 1, 100},
		{100, 8, 8, 104}, // 8 shards of ceil(100/8) = 13
		{96, 8, 8, 96},   // 8 shards of 12: exact
		{3, 8, 3, 3},     // a limit below the shards uses limit shards of 1
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("limit %d shards %d", tc.limit, tc.shards), func(t *testing.T) {
			f := newFixture(t)
			var errs []error
			b := dynamorepo.NewShardedBudget(f.client, f.table, tc.limit, tc.shards, dynamorepo.WithClock(fixedClock(&now)),
				dynamorepo.WithErrorHandler(func(err error) { errs = append(errs, err) }))
			if b.Shards() != tc.wantShards {
				t.Errorf("Shards() = %d, want %d", b.Shards(), tc.wantShards)
			}
			got := extractions(b, callers, 16)
			said = append(said, fmt.Sprintf("%d over %d, %d", tc.limit, tc.shards, got))
			if got != tc.allowed || got != b.Shards()*b.ShardLimit() {
				t.Errorf("%d of %d calls allowed, want %d (Shards·ShardLimit = %d)", got, callers, tc.allowed, b.Shards()*b.ShardLimit())
			}
			if got < tc.limit || got-tc.limit >= b.Shards() {
				t.Errorf("%d allowed for a limit of %d: outside [limit, limit+shards)", got, tc.limit)
			}
			u, err := b.Usage(ctx, "bigcorp", now)
			if err != nil || u.Calls != int64(got) {
				t.Errorf("Usage = %+v, %v; want %d calls", u, err, got)
			}
			if len(errs) > 0 {
				t.Errorf("storage errors: %v", errs)
			}
			// Once spent, the day is refused without a request.
			f.count.take()
			if b.Allow(ctx, memory.CallMeta{TenantID: "bigcorp"}) {
				t.Error("allowed after the limit")
			}
			checkRequests(t, f.count, "")
		})
	}
	if len(said) < len(cases) { // a case did not run (no moto_server) or stopped
		return
	}
	docblock.Check(t, filepath.Join("..", "docs", "scale.md"), "budget-limits", fmt.Sprintf(
		"`TestBudgetShardedLimit` holds the bound under %d concurrent callers; the calls it allows, by limit\nover shards: %s.",
		callers, strings.Join(said, "; ")))
}
