// Package dynamorepo implements [memory.Repository] over one DynamoDB table
// with conditional writes, and [memory.UsageGate] as a per-tenant daily
// budget of model calls kept in the same table.
//
// Where to start:
//
//   - [New] returns the [Repo], the repository the functions use: one item
//     per user, keyed tenantID + "#" + userID, read with one consistent
//     GetItem and written with conditional UpdateItem and PutItem.
//   - [CreateTable] is the one definition of the table (partition key
//     [KeyAttribute], no sort key, on-demand billing, TTL attribute
//     [TTLAttribute]) that the tests and the local stack use and that
//     template.yaml is checked against.
//   - [NewBudget] and [NewShardedBudget] return the [Budget], the daily
//     budget of model calls, spread over a few usage items per tenant and
//     UTC day ([ShardKey]); it fails closed.
//   - [ItemSize] measures an item by DynamoDB's rules: every PutItem is
//     measured before it is sent, and one over [MaxItemBytes] is refused
//     with [ErrItemTooLarge].
//
// A storage failure comes back as an error wrapping the SDK's, never as an
// empty result; a failed condition is a result, except in Save, where it
// is [memory.ErrConflict] with the current record; an item of the wrong
// form is an error wrapping [ErrCorruptItem].
//
// The item's attributes, the round trips of each method, the erasure
// fence, the budget's shards and the sizes of a record, with the reasons
// for each, are in docs/decisions.md ("Storage layout"); the round trips
// measured against moto_server are in BENCHMARKS.md.
package dynamorepo
