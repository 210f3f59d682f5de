package dynamorepo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/memory"
)

// API lists the *dynamodb.Client methods the repository and the budget
// call, so that tests can stand in for the client.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// DefaultFenceLifetime is how long the fence an erasure leaves lasts before
// DynamoDB's TTL deletes it. It must outlast the redelivery of any message
// sent before the erasure: SQS keeps a message 14 days at most.
const DefaultFenceLifetime = memory.DeletionFenceLifetime

// Option configures a [Repo] or a [Budget].
type Option func(*options)

type options struct {
	fenceLifetime time.Duration
	now           memory.Clock
	onError       func(error)
}

func buildOptions(opts []Option) options {
	o := options{
		fenceLifetime: DefaultFenceLifetime,
		now:           func() time.Time { return time.Now().UTC() },
		onError:       func(error) {},
	}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithFenceLifetime sets how long the fence an erasure leaves lasts; d ≤ 0
// keeps [DefaultFenceLifetime].
func WithFenceLifetime(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.fenceLifetime = d
		}
	}
}

// WithClock sets the clock the [Budget] takes the day from; the default is
// time.Now. A [Repo] takes its times from its callers and ignores it.
func WithClock(c memory.Clock) Option {
	return func(o *options) {
		if c != nil {
			o.now = c
		}
	}
}

// WithErrorHandler sets a function that the [Budget] tells of the storage
// failures it cannot return (its methods have no error result), for
// instance to log them. The error never holds user data.
func WithErrorHandler(f func(error)) Option {
	return func(o *options) {
		if f != nil {
			o.onError = f
		}
	}
}

// Repo is a [memory.Repository] over one DynamoDB table. It is safe for
// concurrent use.
type Repo struct {
	api   API
	table string
	opts  options
}

var _ memory.Repository = (*Repo)(nil)

// New returns a Repo over the table named table, reached through client
// (a *dynamodb.Client in production). The table must have the definition
// of [CreateTable].
func New(client API, table string, opts ...Option) *Repo {
	return &Repo{api: client, table: table, opts: buildOptions(opts)}
}

// newVersion returns a fresh version token: 128 random bits.
func newVersion() string { return rand.Text() }

// failedOn decodes the item returned with a failed condition. own reports
// that the item carries ver, the fresh version the write was making: the
// write landed on an earlier attempt whose answer was lost (the SDK
// retries after a timeout or a reset connection) and the retry met it.
// Each write makes a random version, so only its own write carries it.
func failedOn(ccf *types.ConditionalCheckFailedException, ver string) (cur memory.Record, own bool, err error) {
	cur, err = decodeRecord(ccf.Item)
	return cur, err == nil && cur.Version == ver, err
}

// conditionFailed returns the ConditionalCheckFailedException in err's
// chain, or nil.
func conditionFailed(err error) *types.ConditionalCheckFailedException {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf
	}
	return nil
}

func (r *Repo) key(s memory.Scope) (map[string]types.AttributeValue, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return keyOf(userKey(s)), nil
}

// Get implements [memory.Repository.Get] with one strongly consistent
// GetItem. A fence comes back as a Record with a Version and an ErasedAt
// and nil Facts; no item as a zero Record. Errors: an invalid scope (a
// *memory.Error), a storage failure, or a corrupt item ([ErrCorruptItem]).
func (r *Repo) Get(ctx context.Context, s memory.Scope) (memory.Record, error) {
	key, err := r.key(s)
	if err != nil {
		return memory.Record{}, err
	}
	out, err := r.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(r.table),
		Key:            key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return memory.Record{}, fmt.Errorf("dynamorepo: get: %w", err)
	}
	return decodeRecord(out.Item)
}

// SetFact implements [memory.Repository.SetFact]. First one UpdateItem
// that sets facts.<key>, removes removed.<key> and pending.<key> and sets
// a new version on the condition that the record has facts, a tombstone
// map and a pending map, that its endsAt is absent or after f.UpdatedAt,
// and that it either holds the key or fewer than maxFacts facts. When that condition fails on
// an item without facts (none, or an erasure fence), a second UpdateItem
// creates the facts map with f alone on the condition that there is still
// none: when a concurrent writer created it first, the first UpdateItem is
// tried again. It never loses to a write of another key. Otherwise the
// current item, returned with the failure, is decoded into current.
func (r *Repo) SetFact(ctx context.Context, s memory.Scope, f memory.Fact, maxFacts int) (bool, memory.Record, error) {
	key, err := r.key(s)
	if err != nil {
		return false, memory.Record{}, err
	}
	if f.Key == "" {
		return false, memory.Record{}, errors.New("dynamorepo: set fact: empty key")
	}
	fv, err := attributevalue.Marshal(factValue(f))
	if err != nil {
		return false, memory.Record{}, fmt.Errorf("dynamorepo: set fact: %w", err)
	}
	// Two rounds at most: the create fails only when another writer
	// created the facts, after which the first write's condition holds
	// unless the record is at the cap.
	for range 2 {
		done, cur, err := r.updateEntry(ctx, "set fact", key, "#facts", f.Key, maxFacts, f.UpdatedAt,
			"SET #facts.#k = :v, #ver = :new REMOVE #removed.#k, #pending.#k, #ttl", fv, map[string]string{"#ttl": TTLAttribute})
		if done || err != nil {
			return done, memory.Record{}, err
		}
		if cur.Facts != nil {
			return false, cur, nil // at the cap, or stored without a tombstone map
		}
		created, err := r.createFacts(ctx, key, f.Key, fv)
		if err != nil || created {
			return created, memory.Record{}, err
		}
	}
	return false, memory.Record{}, fmt.Errorf("dynamorepo: set fact: the facts map was created and removed again during the write")
}

// entryCondition is the condition of SetFact and DeleteFact, on the entry
// #k of the capped map: the record has facts, a tombstone map and a
// pending map (DynamoDB refuses to remove #pending.#k without it), nothing
// in it ended by :now (endsAt absent or after it), and the capped map
// holds #k or fewer than :max entries.
func entryCondition(capped string) string {
	return "attribute_exists(#facts) AND attribute_exists(#removed) AND attribute_exists(#pending) AND " +
		"(attribute_not_exists(#ends) OR #ends > :now) AND " +
		"(attribute_exists(" + capped + ".#k) OR size(" + capped + ") < :max)"
}

// updateEntry runs the UpdateItem of SetFact and DeleteFact, made at the
// time at, on the entry k of the map attribute that capped names (#facts
// or #removed): update, in which #k names the entry, :v is v and :new a
// new version, on the condition [entryCondition]; extra names the
// attributes update names besides those. It returns true when the update
// is written; false and the current record, returned with the failure
// (zero when there is none), when the condition fails; and a storage
// failure as an error naming op. The time is compared in milliseconds
// rounded down, as endsAt is stored, so that a write at or after Expires
// never applies.
func (r *Repo) updateEntry(ctx context.Context, op string, key map[string]types.AttributeValue, capped, k string, limit int,
	at time.Time, update string, v types.AttributeValue, extra map[string]string) (bool, memory.Record, error) {
	names := map[string]string{"#facts": attrFacts, "#removed": attrRemoved, "#pending": attrPending,
		"#ends": attrEnds, "#k": k, "#ver": attrVersion}
	maps.Copy(names, extra)
	ver := newVersion()
	_, err := r.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(r.table),
		Key:                      key,
		UpdateExpression:         aws.String(update),
		ConditionExpression:      aws.String(entryCondition(capped)),
		ExpressionAttributeNames: names,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":v":   v,
			":new": str(ver),
			":max": num(int64(limit)),
			":now": num(at.UnixMilli()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if ccf := conditionFailed(err); ccf != nil {
		cur, own, err := failedOn(ccf, ver)
		if own {
			return true, memory.Record{}, nil
		}
		return false, cur, err
	}
	if err != nil {
		return false, memory.Record{}, fmt.Errorf("dynamorepo: %s: %w", op, err)
	}
	return true, memory.Record{}, nil
}

// createFacts creates the facts of an item that has none (no item, or an
// erasure fence) with one fact, fv under factKey, an empty tombstone map,
// an empty pending map and a new version, dropping the fence's TTL and keeping its erasedAt, in one UpdateItem on
// the condition that there are still no facts. It returns false when a
// concurrent writer created them first.
func (r *Repo) createFacts(ctx context.Context, key map[string]types.AttributeValue, factKey string, fv types.AttributeValue) (bool, error) {
	ver := newVersion()
	_, err := r.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(r.table),
		Key:                      key,
		UpdateExpression:         aws.String("SET #facts = :facts, #removed = :empty, #pending = :empty, #ver = :new REMOVE #ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#facts)"),
		ExpressionAttributeNames: map[string]string{"#facts": attrFacts, "#removed": attrRemoved, "#pending": attrPending, "#ver": attrVersion, "#ttl": TTLAttribute},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":facts": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{factKey: fv}},
			":empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
			":new":   str(ver),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if ccf := conditionFailed(err); ccf != nil {
		_, own, _ := failedOn(ccf, ver)
		return own, nil
	}
	if err != nil {
		return false, fmt.Errorf("dynamorepo: set fact: %w", err)
	}
	return true, nil
}

// DeleteFact implements [memory.Repository.DeleteFact] with one UpdateItem
// that removes facts.<key> and pending.<key> and sets removed.<key> to at
// (unix ms, rounded up) and a new version, on the condition that the
// record has facts, a pending map, no endsAt at or before at, and a
// tombstone map that holds key or fewer than maxTombstones entries. When
// the condition fails nothing is written and the current item, returned
// with the failure, is decoded into current (zero when there is none).
func (r *Repo) DeleteFact(ctx context.Context, s memory.Scope, key string, at time.Time, maxTombstones int) (bool, memory.Record, error) {
	k, err := r.key(s)
	if err != nil {
		return false, memory.Record{}, err
	}
	if key == "" {
		return false, memory.Record{}, errors.New("dynamorepo: delete fact: empty key")
	}
	return r.updateEntry(ctx, "delete fact", k, "#removed", key, maxTombstones, at,
		"REMOVE #facts.#k, #pending.#k SET #removed.#k = :v, #ver = :new", num(ceilMilli(at)), nil)
}

// ClearFacts implements [memory.Repository.ClearFacts] with one UpdateItem
// without a condition that empties facts, removed and pending, removes
// endsAt, the unread tails, the import marks and the declined digests,
// sets clearedAt to
// at (unix ms, rounded up) and a new version and drops a fence's TTL,
// keeping the watermarks and erasedAt; with no item it creates one.
func (r *Repo) ClearFacts(ctx context.Context, s memory.Scope, at time.Time) error {
	key, err := r.key(s)
	if err != nil {
		return err
	}
	empty := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}
	_, err = r.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(r.table),
		Key:              key,
		UpdateExpression: aws.String("SET #facts = :empty, #removed = :empty, #pending = :empty, #cleared = :at, #ver = :new REMOVE #ttl, #ends, #tails, #imports, #declined"),
		ExpressionAttributeNames: map[string]string{"#facts": attrFacts, "#removed": attrRemoved, "#pending": attrPending, "#cleared": attrCleared,
			"#ver": attrVersion, "#ttl": TTLAttribute, "#ends": attrEnds, "#tails": attrTails, "#imports": attrImports, "#declined": attrDeclined},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":empty": empty,
			":at":    num(ceilMilli(at)),
			":new":   str(newVersion()),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamorepo: clear facts: %w", err)
	}
	return nil
}

// Erase implements [memory.Repository.Erase] with one PutItem that replaces
// the item by a fence {key, ver, erasedAt, expiresAt} and returns the number
// of facts of the item it replaced (0 when it had none, or no facts map:
// the erasure is done either way). The fence expires after the fence
// lifetime (see [WithFenceLifetime]).
func (r *Repo) Erase(ctx context.Context, s memory.Scope, at time.Time) (int, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	fence := map[string]types.AttributeValue{
		KeyAttribute: str(userKey(s)),
		attrVersion:  str(newVersion()),
		attrErasedAt: num(ceilMilli(at)),
		TTLAttribute: num(at.Add(r.opts.fenceLifetime).Unix()),
	}
	if err := checkSize(fence); err != nil {
		return 0, err
	}
	out, err := r.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:    aws.String(r.table),
		Item:         fence,
		ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return 0, fmt.Errorf("dynamorepo: erase: %w", err)
	}
	return countFacts(out.Attributes), nil
}

// Save implements [memory.Repository.Save] with one PutItem of the whole
// record under a new version, on the condition that the stored version is
// still rec.Version (or, for "", that nothing is stored). rec.ErasedAt is
// kept; a fence's TTL is dropped. A record over [MaxItemBytes] is refused
// with [ErrItemTooLarge] and not sent. On a conflict it returns
// [memory.ErrConflict] and the current record.
func (r *Repo) Save(ctx context.Context, s memory.Scope, rec memory.Record) (string, memory.Record, error) {
	if err := s.Validate(); err != nil {
		return "", memory.Record{}, err
	}
	ver := newVersion()
	it, err := encodeRecord(userKey(s), rec, ver)
	if err != nil {
		return "", memory.Record{}, err
	}
	if err := checkSize(it); err != nil {
		return "", memory.Record{}, err
	}
	in := &dynamodb.PutItemInput{
		TableName:                           aws.String(r.table),
		Item:                                it,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if rec.Version == "" {
		in.ConditionExpression = aws.String("attribute_not_exists(#pk)")
		in.ExpressionAttributeNames = map[string]string{"#pk": KeyAttribute}
	} else {
		in.ConditionExpression = aws.String("#ver = :old")
		in.ExpressionAttributeNames = map[string]string{"#ver": attrVersion}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":old": str(rec.Version)}
	}
	_, err = r.api.PutItem(ctx, in)
	if ccf := conditionFailed(err); ccf != nil {
		cur, own, err := failedOn(ccf, ver)
		if own {
			return ver, memory.Record{}, nil
		}
		if err != nil {
			return "", memory.Record{}, err
		}
		return "", cur, memory.ErrConflict
	}
	if err != nil {
		return "", memory.Record{}, fmt.Errorf("dynamorepo: save: %w", err)
	}
	return ver, memory.Record{}, nil
}
