package dynamorepo_test

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// fixedClock returns a clock that reads *now.
func fixedClock(now *time.Time) memory.Clock { return func() time.Time { return *now } }

func numberAttr(t *testing.T, it map[string]types.AttributeValue, name string) int64 {
	t.Helper()
	n, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("attribute %s = %#v, want a number", name, it[name])
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestBudgetAllow(t *testing.T) {
	f := newFixture(t)
	now := time.Date(2026, 11, 29, 23, 59, 0, 0, time.UTC)
	// One shard: the exact counter, one item per tenant and day.
	b := dynamorepo.NewShardedBudget(f.client, f.table, 2, 1, dynamorepo.WithClock(fixedClock(&now)))
	acme := memory.CallMeta{TenantID: "acme", UserID: "u-1", ThreadID: "th-1"}

	// The third call finds the counter full; the fourth knows it is.
	for i, want := range []struct {
		allow    bool
		requests string
	}{{true, "UpdateItem:1"}, {true, "UpdateItem:1"}, {false, "UpdateItem:1"}, {false, ""}} {
		if got := b.Allow(ctx, acme); got != want.allow {
			t.Errorf("call %d: Allow = %v, want %v", i+1, got, want.allow)
		}
		checkRequests(t, f.count, want.requests)
	}
	// Another tenant has its own budget.
	if !b.Allow(ctx, memory.CallMeta{TenantID: "globex", UserID: "u-1"}) {
		t.Error("another tenant was refused")
	}
	// The usage item holds counters and a TTL, no user ID and no text.
	it := f.rawItem(t, "usage#acme#2026-11-29")
	if got := strings.Join(slices.Sorted(maps.Keys(it)), ","); got != "calls,expiresAt,pk" {
		t.Errorf("usage item attributes = %s, want calls,expiresAt,pk", got)
	}
	if got := numberAttr(t, it, "calls"); got != 2 {
		t.Errorf("calls = %d, want 2 (refusals do not count)", got)
	}
	wantExp := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).Add(dynamorepo.UsageRetention).Unix()
	if got := numberAttr(t, it, dynamorepo.TTLAttribute); got != wantExp {
		t.Errorf("expiresAt = %d, want %d", got, wantExp)
	}
	// A new UTC day starts a new budget.
	now = now.Add(2 * time.Minute)
	if !b.Allow(ctx, acme) {
		t.Error("refused on a new day")
	}
	if got := numberAttr(t, f.rawItem(t, "usage#acme#2026-11-30"), "calls"); got != 1 {
		t.Errorf("calls on the new day = %d, want 1", got)
	}
	// An invalid tenant ID is refused without a request.
	f.count.take()
	if b.Allow(ctx, memory.CallMeta{TenantID: "a#b"}) {
		t.Error("an invalid tenant ID was allowed")
	}
	checkRequests(t, f.count, "")
}

func TestBudgetNoLimit(t *testing.T) {
	f := newFixture(t)
	b := dynamorepo.NewBudget(f.client, f.table, 0)
	for range 3 {
		if !b.Allow(ctx, memory.CallMeta{TenantID: "acme"}) {
			t.Fatal("refused with no limit")
		}
	}
	checkRequests(t, f.count, "")
}

func TestBudgetConcurrentAllow(t *testing.T) {
	const limit, callers = 5, 20
	f := newFixture(t)
	var errs []error
	var errMu sync.Mutex
	b := dynamorepo.NewBudget(f.client, f.table, limit, dynamorepo.WithErrorHandler(func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
	}))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b.Allow(ctx, memory.CallMeta{TenantID: "acme"}) {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Errorf("storage errors: %v", errs)
	}
	if allowed != limit {
		t.Errorf("%d of %d concurrent calls allowed, want exactly %d", allowed, callers, limit)
	}
}

func TestBudgetRecord(t *testing.T) {
	f := newFixture(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	b := dynamorepo.NewShardedBudget(f.client, f.table, 0, 1, dynamorepo.WithClock(fixedClock(&now)))
	m := memory.CallMeta{TenantID: "acme", UserID: "u-1"}
	b.Record(ctx, m, memory.Usage{InputTokens: 100, OutputTokens: 7})
	checkRequests(t, f.count, "UpdateItem:1")
	b.Record(ctx, m, memory.Usage{InputTokens: 50, OutputTokens: 3})
	b.Record(ctx, m, memory.Usage{})
	checkRequests(t, f.count, "UpdateItem:1")
	it := f.rawItem(t, "usage#acme#2026-11-29")
	if in, out := numberAttr(t, it, "inTokens"), numberAttr(t, it, "outTokens"); in != 150 || out != 10 {
		t.Errorf("tokens = %d in, %d out; want 150, 10", in, out)
	}
	if _, ok := it["calls"]; ok {
		t.Error("Record counted a call")
	}
}

// TestBudgetFailsClosed checks that a storage failure refuses the call and
// reaches the error handler, and that Record reports its failure too.
func TestBudgetFailsClosed(t *testing.T) {
	var errs []error
	b := dynamorepo.NewBudget(newClient(endpoint(t), nil), "no-such-table", 10,
		dynamorepo.WithErrorHandler(func(err error) { errs = append(errs, err) }))
	if b.Allow(ctx, memory.CallMeta{TenantID: "acme"}) {
		t.Error("Allow = true on a storage failure, want false (fail closed)")
	}
	b.Record(ctx, memory.CallMeta{TenantID: "acme"}, memory.Usage{InputTokens: 1})
	if len(errs) != 2 {
		t.Fatalf("error handler called %d times, want 2: %v", len(errs), errs)
	}
	var rnf *types.ResourceNotFoundException
	for _, err := range errs {
		if !errors.As(err, &rnf) {
			t.Errorf("reported error %v does not wrap the SDK's ResourceNotFoundException", err)
		}
	}
}

// TestBudgetThroughStore checks that a spent budget silently refuses an
// extraction: no model call, facts unchanged.
func TestBudgetThroughStore(t *testing.T) {
	f := newFixture(t)
	model := memorytest.NewModel(
		memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}, Usage: memory.Usage{InputTokens: 300, OutputTokens: 20}},
		memorytest.Answer{Operations: []memory.Operation{set("city", "Lisbon")}},
	)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	b := dynamorepo.NewBudget(f.client, f.table, 1, dynamorepo.WithClock(fixedClock(&now)))
	s := newStore(t, f, memory.Config{}, memory.WithModel(model), memory.WithUsageGate(b))
	res, err := s.Extract(ctx, extractReq("th-1", 0, 2, time.Time{}))
	if err != nil || res.Outcome != memory.OutcomeChanged {
		t.Fatalf("first Extract = %s, %v; want changed", res.Outcome, err)
	}
	res, err = s.Extract(ctx, extractReq("th-2", 0, 2, time.Time{}))
	if err != nil || res.Outcome != memory.OutcomeRefused || len(res.Facts) != 1 {
		t.Fatalf("second Extract = %s with %v, %v; want refused with the stored fact", res.Outcome, res.Facts, err)
	}
	if model.Calls() != 1 {
		t.Errorf("model calls = %d, want 1", model.Calls())
	}
	it := f.rawItem(t, "usage#acme#2026-11-29")
	if c, in := numberAttr(t, it, "calls"), numberAttr(t, it, "inTokens"); c != 1 || in != 300 {
		t.Errorf("usage = %d calls, %d input tokens; want 1, 300", c, in)
	}
}
