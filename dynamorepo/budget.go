package dynamorepo

import (
	"context"
	"fmt"
	"strconv"
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

// Budget is a [memory.UsageGate] that allows each tenant at most a number
// of model calls per UTC day and counts the tokens they use, in one item
// per tenant and day of the repository's table. It is safe for concurrent
// use.
//
// Budget fails closed: when the counter cannot be read or written, Allow
// refuses the call (and tells the error handler). The counter lives in the
// same table as the records, so an extraction allowed then could not save
// what it found anyway; refusing spends no tokens, and the next due
// extraction reads the newer turns.
type Budget struct {
	api   API
	table string
	limit int
	opts  options
}

var _ memory.UsageGate = (*Budget)(nil)

// NewBudget returns a Budget over the table named table that allows each
// tenant dailyCalls model calls per UTC day; dailyCalls ≤ 0 means no limit.
// [WithClock] sets the clock the day is taken from and [WithErrorHandler]
// the function told of storage failures.
func NewBudget(client API, table string, dailyCalls int, opts ...Option) *Budget {
	if dailyCalls < 0 {
		dailyCalls = 0
	}
	return &Budget{api: client, table: table, limit: dailyCalls, opts: buildOptions(opts)}
}

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
// without a request; otherwise one UpdateItem adds one call to the tenant's
// counter of the day on the condition that it is under the limit. It
// refuses when the limit is reached, when the tenant ID is invalid, and
// when the storage fails (fail closed).
func (b *Budget) Allow(ctx context.Context, m memory.Meta) bool {
	if b.limit == 0 {
		return true
	}
	if !memory.ValidID(m.TenantID) {
		b.opts.onError(fmt.Errorf("dynamorepo: budget: invalid tenant ID"))
		return false
	}
	now := b.opts.now()
	_, err := b.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(b.table),
		Key:                      keyOf(UsageKey(m.TenantID, now)),
		UpdateExpression:         aws.String("ADD #calls :one SET #ttl = :exp"),
		ConditionExpression:      aws.String("attribute_not_exists(#calls) OR #calls < :limit"),
		ExpressionAttributeNames: map[string]string{"#calls": attrCalls, "#ttl": TTLAttribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one":   num(1),
			":limit": &types.AttributeValueMemberN{Value: strconv.Itoa(b.limit)},
			":exp":   num(expiry(now)),
		},
	})
	if conditionFailed(err) != nil {
		return false
	}
	if err != nil {
		b.opts.onError(fmt.Errorf("dynamorepo: budget: allow: %w", err))
		return false
	}
	return true
}

// Record implements [memory.UsageGate.Record]: one UpdateItem adds the
// input and output tokens of u to the tenant's counters of the day. It
// makes no request when u counts no token; a storage failure goes to the
// error handler.
func (b *Budget) Record(ctx context.Context, m memory.Meta, u memory.Usage) {
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
		Key:                      keyOf(UsageKey(m.TenantID, now)),
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
