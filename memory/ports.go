package memory

import (
	"context"
	"time"
)

// Record is what a [Repository] stores for one user.
type Record struct {
	// Facts in any order; the store sorts them by key.
	Facts []Fact
	// Version is an opaque token that changes with every write; "" when
	// nothing is stored for the user.
	Version string
	// Threads maps the key of a thread ([ThreadKey] of its ID: the ID, or
	// a hash of a long one) to its watermark: the turn count up to which
	// it was extracted, or the digest of the turns of its last uncounted
	// extraction. A redelivered request for those turns is recognised
	// before any model call.
	Threads map[string]ThreadMark
	// ErasedAt is the time of the user's last erasure, zero when there was
	// none. An extraction requested before it writes nothing (the fence).
	ErasedAt time.Time
	// ClearedAt is the time of the user's last clear of every fact, zero
	// when there was none (or it expired). An extraction requested at or
	// before it writes nothing.
	ClearedAt time.Time
	// Tombstones maps the key of a fact removed by hand (or by the forget
	// tool) to the time of its removal. An extraction requested at or
	// before that time does not set the key. Nil when the record has no
	// tombstone map (see [Repository.SetFact]).
	Tombstones map[string]time.Time
	// Pending are the extracted facts of a special category that wait for
	// the user's yes ([Store.KeepPending]) or no ([Store.DiscardPending]):
	// they are never in a prompt nor among the facts read. Each has its
	// Category; it is dropped PendingLifetime after its UpdatedAt.
	Pending []Fact
	// Expires is the earliest time at which a fact ends (the day after its
	// ValidUntil) or a pending fact lapses; zero when none does. The store
	// sets it on every whole-record write ([Repository.Save]). SetFact and
	// DeleteFact apply only while it is zero or after the time of their
	// write, so that the first write after it is a whole-record write,
	// which removes what ended.
	Expires time.Time
	// Tails maps the key of a thread ([ThreadKey]) whose newest turns were
	// not read, because no extraction was due, to that unread tail
	// ([Store.NoteTail]); an extraction that reads them removes it. At
	// most [MaxTails]. Nil when there is none.
	Tails map[string]Tail
	// History maps the key of a fact held to its previous values, newest
	// first, at most [MaxHistory] ([PreviousValue]), fewer when the record
	// would pass [ItemBudget] ([Config.FitRecord]). A change made by a
	// whole-record write ([Repository.Save]: an extraction, a keep)
	// records the value it replaces. The history goes
	// with its fact: a removal, a clear, an erasure and a forget remove
	// it. Nil when no fact has one.
	History map[string][]PreviousValue
	// Imports are the marks of the user's newest imports, at most
	// [MaxImports], newest first ([ImportMark]). Nil when there is none.
	Imports []ImportMark
	// Declined maps the digest of an imported fact the user discarded
	// ([DeclinedDigest] of its key and value) to when, at most
	// [MaxDeclined], the newest: a later import does not propose it again.
	// A clear and an erasure remove it. Nil when there is none.
	Declined map[string]time.Time
}

// ThreadMark is the extraction watermark of one thread: a turn count, set
// by a counted extraction, or a digest, set by an uncounted one; At is
// when it was set. ForgottenAt is the thread's forget fence.
type ThreadMark struct {
	// TurnCount is the thread's turn count extracted up to; 0 when Digest
	// is set.
	TurnCount int
	// Digest, when not empty, is the [TurnsDigest] of the turns of the
	// thread's last extraction, an uncounted one.
	Digest string
	At     time.Time
	// ForgottenAt is when the user last forgot what the thread taught
	// ([Store.ForgetThread]), zero when never (or when it expired after
	// [DeletionFenceLifetime]). An extraction of the thread requested at
	// or before it writes nothing. A mark made by a forget alone has a
	// TurnCount of 0 and At equal to ForgottenAt.
	ForgottenAt time.Time
}

// Repository stores the records of users, keyed by [Scope]. Every method
// returns an error, never an empty result, when the storage fails. Writes
// are conditional: none overwrites a change it has not seen.
type Repository interface {
	// Get returns the user's record; a zero Record when there is none.
	Get(ctx context.Context, s Scope) (Record, error)

	// SetFact writes f, and removes the tombstone, the pending fact and
	// the history of f.Key (a value set alone starts afresh), in one conditional write when the stored record has facts,
	// its Expires is zero or after f.UpdatedAt, and it either already
	// holds f.Key or holds fewer than maxFacts facts; it then returns
	// applied true. When the user has no facts at all (no record, or only an
	// erasure fence) it creates them with f alone, in a write that a
	// concurrent write of another key never makes fail: it either creates
	// the facts or, when another writer created them first, adds f to
	// them. Otherwise (a new key at the cap) it writes nothing and returns
	// applied false with the current record, on which the store merges and
	// calls Save. An implementation may also refuse a record it cannot
	// update in place (for instance one stored without a tombstone map),
	// the same way.
	SetFact(ctx context.Context, s Scope, f Fact, maxFacts int) (applied bool, current Record, err error)

	// DeleteFact removes the fact, its history and the pending fact with
	// key, if stored, and records the tombstone key → at, in one conditional write,
	// when the stored record has facts, its Expires is zero or after at,
	// and it has a tombstone map that either already holds key or holds
	// fewer than maxTombstones; it then returns applied true. Otherwise it
	// writes nothing and returns applied false with the current record
	// (zero when none), on which the store merges and calls Save.
	DeleteFact(ctx context.Context, s Scope, key string, at time.Time, maxTombstones int) (applied bool, current Record, err error)

	// ClearFacts empties the user's facts, their history, pending facts
	// and tombstones,
	// removes the unread tails, the import marks and the declined
	// digests, zeroes Expires and sets
	// ClearedAt to at, keeping the watermarks and ErasedAt, in one write
	// that needs no condition: with no record (or only an erasure fence)
	// it creates one that holds no fact, so that the clear still fences
	// the extractions requested before it.
	ClearFacts(ctx context.Context, s Scope, at time.Time) error

	// Erase removes the user's record and everything in it, leaves in its
	// place a fence that holds only the erasure time and expires by itself,
	// and returns the number of facts removed. It is the storage step of
	// [Store.DeleteByUser], which keeps the name the API and the seed give
	// the operation; here the name says what the write does: the record is
	// not deleted but replaced by the fence.
	Erase(ctx context.Context, s Scope, at time.Time) (int, error)

	// Save replaces the stored record by rec if the stored version is still
	// rec.Version ("" meaning: nothing stored). It returns the new version;
	// the record it stores has a facts map and a tombstone map, both
	// possibly empty. When another write came first it returns ErrConflict
	// and the current record, so that the caller can merge again.
	Save(ctx context.Context, s Scope, rec Record) (version string, current Record, err error)
}

// Operation is one change a model asks for: Op is "SET" (Key to Value) or
// "DELETE" (Key). A SET carries Evidence, the user's words it rests on,
// and may carry ValidUntil, the last day of a temporary fact
// ("YYYY-MM-DD"), and Category, a special category of [Categories] the
// model saw in it. As answered they are unchecked; [Store.Extract] checks
// them. Its JSON form is the one of the operations tool's input
// ([OperationsTool], decoded by [ParseOperations]).
type Operation struct {
	Op         string `json:"op"`
	Key        string `json:"key"`
	Value      string `json:"value,omitempty"`
	Evidence   string `json:"evidence,omitempty"`
	ValidUntil string `json:"validUntil,omitempty"`
	Category   string `json:"category,omitempty"`
}

// Operation kinds.
const (
	OpSet    = "SET"
	OpDelete = "DELETE"
)

// ModelRequest is one extraction call to the cheap model.
type ModelRequest struct {
	// ModelID names the model; the store fills it from the request or the
	// config.
	ModelID string
	// System is the system prompt: the rendered MEMORY_USER prompt.
	System string
	// Transcript is the user message: the new turns as plain text, after
	// the context turns when there are any ([ExtractionTranscript]).
	Transcript string
	// Tool is the tool the model must call with its operations.
	Tool ToolDefinition
	// MaxOperations bounds the operations of the answer.
	MaxOperations int
	// MaxAnswerBytes is the length of the largest answer the tool admits
	// under the store's caps ([LargestAnswer]): what an adapter must let
	// the model write so that no valid answer is cut.
	MaxAnswerBytes int
	// Meta is for the usage gate and the trace.
	Meta CallMeta
}

// ModelAnswer is what the model answered: its operations, unvalidated, and
// the tokens the call used.
type ModelAnswer struct {
	Operations []Operation
	Usage      Usage
}

// Model is the cheap model that turns a transcript into operations. An
// answer that is not the expected structure is an error wrapping
// [ErrMalformedAnswer]; any other error is a failed call. Either way the
// answer's Usage may be filled, so that tokens spent are counted.
type Model interface {
	Extract(ctx context.Context, req ModelRequest) (ModelAnswer, error)
}

// Usage counts the tokens of one model call.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
}

// KindMemoryUser is the CallMeta.Kind of an extraction call.
const KindMemoryUser = "MEMORY_USER"

// KindMemoryImport is the Kind of the model calls of an import
// ([Store.Import]).
const KindMemoryImport = "MEMORY_IMPORT"

// CallMeta describes a model call for the usage gate and the trace. It carries
// IDs only, never fact values or turn text.
type CallMeta struct {
	Kind      string
	TenantID  string
	UserID    string
	ThreadID  string
	ModelID   string
	RequestID string
	TraceID   string
}

// UsageGate may refuse a model call, for instance when a tenant's daily
// budget is spent, and is told what every call used. A refusal is silent:
// the extraction returns the stored facts unchanged.
type UsageGate interface {
	Allow(ctx context.Context, m CallMeta) bool
	Record(ctx context.Context, m CallMeta, u Usage)
}

// Clock returns the current time; tests pass a fixed one.
type Clock func() time.Time
