// Package dynamorepo implements [memory.Repository] over one DynamoDB table
// with conditional writes, and [memory.UsageGate] as a per-tenant daily
// budget of model calls kept in the same table.
//
// # Table
//
// The table has a string partition key named [KeyAttribute] and no sort
// key, is billed on demand, and expires items through the TTL attribute
// [TTLAttribute]. [CreateTable] is the one definition of it that the tests
// and the local stack use and that template.yaml is checked against.
//
// # Items
//
// One item per user. Its key is tenantID + "#" + userID: both IDs are
// validated by [memory.ValidID], which forbids '#' and '/', so no ID can
// reach another user's key. Its attributes are:
//
//	facts     map: canonical key -> {v: value, t: updatedAt in unix ms,
//	          o: origin (conversation, manual, remember_tool),
//	          s: source thread ID, n: source thread title, e: evidence
//	          (the user's words), u: last day of a temporary fact (unix ms
//	          of its midnight UTC), c: special category, each left out
//	          when empty}. o is written only when it is not the derived
//	          origin (conversation when the fact has s, else manual), so a
//	          fact without o, old ones included, reads as that
//	pending   map: canonical key -> a pending fact, encoded as in facts;
//	          present with facts, empty when nothing waits (SetFact and
//	          DeleteFact remove pending.<key>, which DynamoDB refuses when
//	          the map does not exist). An item written before lacks it
//	          until its next Save
//	endsAt    number, unix ms rounded down: Record.Expires, the earliest
//	          end of a fact or of a pending fact's wait; absent when none
//	ver       string: a random token from crypto/rand, new on every write;
//	          Save's condition compares it
//	threads   map: thread key -> "<extracted turn count>:<unix ms>", the
//	          per-thread extraction watermarks; the key is memory.ThreadKey
//	          of the thread ID (the ID, or "#" and 12 characters of its
//	          hash when longer than 13 bytes). An item written before held
//	          thread ID -> {n, t}; it still reads, and the next Save writes
//	          this form
//	tails     map: thread key -> "<turn count>:<unix ms>", the unread
//	          tails of the idle read (memory.Record.Tails: the newest
//	          message not due and its send time), keyed as threads; absent
//	          when none. Save writes it; ClearFacts removes it
//	removed   map: canonical key -> unix ms rounded up, the tombstones of
//	          keys removed by hand; present with facts (an item written
//	          before tombstones existed lacks it until its next Save)
//	clearedAt number, unix ms rounded up: the last clear
//	erasedAt  number, unix ms rounded up: the last erasure, kept across
//	          every later write
//	expiresAt number, unix seconds: the TTL, present on a fence only
//
// Items are encoded and decoded with the SDK's attributevalue package from
// a private struct whose tags are these names. Its string and integer
// fields refuse an attribute of another type, which attributevalue would
// otherwise convert (a number into a string) or read as a zero (NULL),
// and a record without a version, or an entry without one of its fields,
// is refused after decoding.
//
// An erasure replaces the item by a fence: {pk, ver, erasedAt, expiresAt}.
// It holds nothing personal beyond the key, and DynamoDB deletes it by
// itself after the fence lifetime (default [DefaultFenceLifetime]) unless a
// later write turned it back into a record, which drops expiresAt and keeps
// erasedAt. An extraction requested at or before erasedAt writes nothing.
// erasedAt is rounded up to the millisecond so that a request sent in the
// same millisecond as the erasure is fenced too.
//
// Usage items of the [Budget] are a few shards per tenant and UTC day
// ([DefaultBudgetShards]), keyed by [ShardKey]: "usage#" + tenantID + "#" +
// YYYY-MM-DD, and "#" + the shard's number for every shard but the first.
// They hold counters only (calls, inTokens, outTokens) and their TTL:
// never a user ID or any text. Their keys have three parts or more, a
// user's two, so they cannot meet.
//
// # Round trips
//
// Every method makes the least possible requests: Get one consistent
// GetItem; SetFact one UpdateItem that sets the fact and removes its
// tombstone and its pending fact. It applies when the record has facts, a
// tombstone map and a pending map, nothing in it ended by the write's time
// (endsAt absent or after it), and either holds the key or is under the
// cap; otherwise it returns the current record with the condition failure
// (ALL_OLD), on which the store merges and Saves: two round trips, at the
// cap as after an end, and the first write after something ended is thus
// a whole-record write, which drops it. When that record has no facts (no
// item, or a fence), a second UpdateItem creates the facts map with the
// fact, on the condition attribute_not_exists(facts), which a concurrent
// writer of another key can only make fail by creating the map first,
// after which the first UpdateItem applies: the first fact takes two
// round trips, or three when it loses that race, and is never refused.
// DeleteFact one UpdateItem that removes the fact and the pending fact of
// the key and records its tombstone, under the bound of tombstones and
// the same conditions (otherwise ALL_OLD and the store's Save);
// ClearFacts one unconditional UpdateItem, which also empties pending and
// removes endsAt; Erase and Save one PutItem each. User keys reach
// expressions only through ExpressionAttributeNames, written by hand: the
// SDK's expression builder would split them on dots. An empty name is
// refused before any request (DynamoDB rejects it; moto does not).
//
// The conditions of SetFact and DeleteFact count the stored facts and
// tombstones with size() on their maps, which DynamoDB documents for maps
// (the number of elements) and moto_server implements the same way; the
// tests check it at the caps. DynamoDB refuses an update of a path inside
// a map that does not exist (facts.<key> without facts), and an
// expression whose paths overlap (facts and facts.<key>), so the first
// fact takes its own UpdateItem; moto_server refuses both the same way. It
// refuses the removal of pending.<key> without pending too, which is why
// pending is stored, empty, with facts.
//
// # Budget
//
// [Budget] allows each tenant a number of model calls per UTC day, spread
// over the tenant's shards of the day, each holding its part of the limit:
// one conditional UpdateItem on one shard (ADD calls, under the shard's
// part) allows a call, and the other shards are tried only when it is
// full. Another UpdateItem counts the tokens. It fails closed: a storage
// failure refuses the call.
//
// # Size
//
// DynamoDB refuses items over 400 KB ([MaxItemBytes]). Every PutItem is
// measured by DynamoDB's rules first and one over the limit is refused
// with [ErrItemTooLarge] without being sent. An UpdateItem of one fact is
// not measured: [memory.Config.Validate] guarantees that a full record
// under the caps, evidence and MaxPending pending facts included, stays
// within [memory.ItemBudget]. The largest record template.yaml allows
// (75 facts and 10 pending facts of 200 characters) is 289,787 bytes by
// these rules, under its bound of 298,169 (TestFullRecordFitsTheBudget). moto_server checks the
// size on PutItem only, at 405,000 bytes, a little under DynamoDB's limit.
//
// # Errors
//
// A storage failure comes back as an error wrapping the SDK's, never as
// an empty result. A failed condition is a result, not an error, except
// in Save, where it is [memory.ErrConflict] with the current record. An
// item with an attribute of the wrong type or form (a missing version, a
// time that is not an integer, a NULL, an entry without a field) is an
// error wrapping [ErrCorruptItem] that names the item's attribute (facts,
// not the field inside a fact: attributevalue does not report the path).
package dynamorepo
