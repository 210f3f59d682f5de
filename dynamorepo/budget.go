package dynamorepo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/memory"
)

// UsageRetention is how long a tenant's usage item outlives its day before
// DynamoDB's TTL deletes it.
const UsageRetention = 3 * 24 * time.Hour

// Attribute names of a usage item.
const (
	attrCalls     = "calls"
	attrInTokens  = "inTokens"
	attrOutTokens = "outTokens"
)

// DefaultBudgetShards is the number of counter items per tenant and day
// that [NewBudget] spreads its writes over: see [NewShardedBudget].
const DefaultBudgetShards = 8

// Budget is a [memory.UsageGate] that allows each tenant at most a number
// of model calls per UTC day and counts the tokens they use, in a few
// counter items (shards) per tenant and day of the repository's table. It
// is safe for concurrent use.
//
// Budget fails closed: when a counter cannot be read or written, Allow
// refuses the call (and tells the error handler). The counters live in the
// same table as the records, so an extraction allowed then could not save
// what it found anyway; refusing spends no tokens, and the next due
// extraction reads the newer turns.
//
// Sharding: every extraction writes the counters twice (Allow, then
// Record), and DynamoDB serves at most 1,000 write units a second on one
// item. One item per tenant and day would cap a large tenant at 500
// extractions a second whatever its Bedrock quota; n shards raise that to
// n×500. Each of the n shards holds its own part of the limit,
// ceil(limit/n), and is incremented with a conditional write, so no
// request reads a total first and no write conflicts with another. Allow
// takes the shards in turn and, when one is full, tries the others before
// refusing: it refuses only when every shard is full, so the tenant never
// gets fewer calls than the limit, and at most n·ceil(limit/n) − limit
// (fewer than n) more. With a limit below n, only limit shards are used
// and the limit is exact. Once every shard of the day is found full, this
// Budget refuses the rest of that day without a request.
type Budget struct {
	api    API
	table  string
	limit  int
	shards int
	opts   options
	// next picks the shard of the next write, taken in turn from a random
	// start so that the environments of a function spread evenly.
	next atomic.Uint64
	// spent holds the usage keys (shard 0) of the days found exhausted.
	mu    sync.Mutex
	spent map[string]bool
}

var _ memory.UsageGate = (*Budget)(nil)

// NewBudget returns a Budget over the table named table that allows each
// tenant dailyCalls model calls per UTC day, over [DefaultBudgetShards]
// shards; dailyCalls ≤ 0 means no limit. [WithClock] sets the clock the
// day is taken from and [WithErrorHandler] the function told of storage
// failures.
func NewBudget(client API, table string, dailyCalls int, opts ...Option) *Budget {
	return NewShardedBudget(client, table, dailyCalls, DefaultBudgetShards, opts...)
}

// NewShardedBudget is [NewBudget] with shards counter items per tenant and
// day (values below 1 are taken as 1, which keeps one exact counter). See
// [Budget] for how far the limit may be passed.
func NewShardedBudget(client API, table string, dailyCalls, shards int, opts ...Option) *Budget {
	dailyCalls = max(dailyCalls, 0)
	shards = max(shards, 1)
	if dailyCalls > 0 {
		shards = min(shards, dailyCalls)
	}
	b := &Budget{api: client, table: table, limit: dailyCalls, shards: shards, opts: buildOptions(opts), spent: map[string]bool{}}
	b.next.Store(rand.Uint64N(uint64(shards)))
	return b
}

// Shards returns the number of counter items per tenant and day.
func (b *Budget) Shards() int { return b.shards }

// ShardLimit returns the calls one shard allows a day (0: no limit); the
// most calls a tenant gets in a day is Shards()·ShardLimit().
func (b *Budget) ShardLimit() int {
	if b.limit == 0 {
		return 0
	}
	return (b.limit + b.shards - 1) / b.shards
}

// ShardKey returns the key of shard i of the usage of tenantID on the UTC
// day of t: [UsageKey] for shard 0, and UsageKey + "#" + i for the others,
// so that one shard is the item of an unsharded budget.
func ShardKey(tenantID string, t time.Time, i int) string {
	if i == 0 {
		return UsageKey(tenantID, t)
	}
	return UsageKey(tenantID, t) + "#" + strconv.Itoa(i)
}

// pick returns the shard of the next write.
func (b *Budget) pick() int { return int((b.next.Add(1) - 1) % uint64(b.shards)) }

// UsageKey returns the key of the usage item of tenantID on the UTC day of
// t: "usage#" + tenantID + "#" + YYYY-MM-DD.
func UsageKey(tenantID string, t time.Time) string {
	return "usage#" + tenantID + "#" + t.UTC().Format(time.DateOnly)
}

// expiry returns the TTL of the usage item of the day of t, in unix
// seconds: UsageRetention after the day ends.
func expiry(t time.Time) int64 {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return day.Add(24*time.Hour + UsageRetention).Unix()
}

// Allow implements [memory.UsageGate.Allow]: with no limit it allows
// without a request; otherwise one UpdateItem adds one call to a shard of
// the tenant's counters of the day on the condition that the shard is
// under its part of the limit, and, when it is full, the next shard is
// tried, up to every shard. It refuses when every shard is full, when the
// tenant ID is invalid, and when the storage fails (fail closed).
func (b *Budget) Allow(ctx context.Context, m memory.CallMeta) bool {
	if b.limit == 0 {
		return true
	}
	if !memory.ValidID(m.TenantID) {
		b.opts.onError(fmt.Errorf("dynamorepo: budget: invalid tenant ID"))
		return false
	}
	now := b.opts.now()
	day := UsageKey(m.TenantID, now)
	if b.exhausted(day) {
		return false
	}
	first := b.pick()
	for i := range b.shards {
		shard := (first + i) % b.shards
		_, err := b.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                aws.String(b.table),
			Key:                      keyOf(ShardKey(m.TenantID, now, shard)),
			UpdateExpression:         aws.String("ADD #calls :one SET #ttl = :exp"),
			ConditionExpression:      aws.String("attribute_not_exists(#calls) OR #calls < :limit"),
			ExpressionAttributeNames: map[string]string{"#calls": attrCalls, "#ttl": TTLAttribute},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":one":   num(1),
				":limit": &types.AttributeValueMemberN{Value: strconv.Itoa(b.ShardLimit())},
				":exp":   num(expiry(now)),
			},
		})
		if conditionFailed(err) != nil {
			continue
		}
		if err != nil {
			b.opts.onError(fmt.Errorf("dynamorepo: budget: allow: %w", err))
			return false
		}
		return true
	}
	b.markExhausted(day)
	return false
}

// exhausted reports whether every shard of the day of key was found full.
func (b *Budget) exhausted(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent[key]
}

// markExhausted remembers that the day of key is spent, forgetting the
// days before it.
func (b *Budget) markExhausted(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.spent) > 1000 {
		clear(b.spent)
	}
	b.spent[key] = true
}

// Record implements [memory.UsageGate.Record]: one UpdateItem adds the
// input and output tokens of u to a shard of the tenant's counters of the
// day. It
// makes no request when u counts no token; a storage failure goes to the
// error handler.
func (b *Budget) Record(ctx context.Context, m memory.CallMeta, u memory.Usage) {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return
	}
	if !memory.ValidID(m.TenantID) {
		b.opts.onError(fmt.Errorf("dynamorepo: budget: invalid tenant ID"))
		return
	}
	now := b.opts.now()
	_, err := b.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(b.table),
		Key:                      keyOf(ShardKey(m.TenantID, now, b.pick())),
		UpdateExpression:         aws.String("ADD #in :in, #out :out SET #ttl = :exp"),
		ExpressionAttributeNames: map[string]string{"#in": attrInTokens, "#out": attrOutTokens, "#ttl": TTLAttribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":in":  num(int64(u.InputTokens)),
			":out": num(int64(u.OutputTokens)),
			":exp": num(expiry(now)),
		},
	})
	if err != nil {
		b.opts.onError(fmt.Errorf("dynamorepo: budget: record: %w", err))
	}
}

// Usage is a tenant's use of the model in one UTC day.
type Usage struct {
	Calls, InputTokens, OutputTokens int64
}

// Usage returns the use of tenantID on the UTC day of day, summed over the
// shards with one strongly consistent GetItem each. Errors: the storage's,
// wrapped; a tenant ID that is not valid.
func (b *Budget) Usage(ctx context.Context, tenantID string, day time.Time) (Usage, error) {
	var u Usage
	if !memory.ValidID(tenantID) {
		return u, fmt.Errorf("dynamorepo: budget: invalid tenant ID")
	}
	for i := range b.shards {
		out, err := b.api.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(b.table), Key: keyOf(ShardKey(tenantID, day, i)), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return Usage{}, fmt.Errorf("dynamorepo: budget: usage: %w", err)
		}
		for name, dst := range map[string]*int64{attrCalls: &u.Calls, attrInTokens: &u.InputTokens, attrOutTokens: &u.OutputTokens} {
			if n, ok := out.Item[name].(*types.AttributeValueMemberN); ok {
				v, err := strconv.ParseInt(n.Value, 10, 64)
				if err != nil {
					return Usage{}, fmt.Errorf("dynamorepo: budget: usage: %s of shard %d: %w", name, i, err)
				}
				*dst += v
			}
		}
	}
	return u, nil
}
