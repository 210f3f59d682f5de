package memory

import (
	"context"
	"maps"
	"slices"
	"time"
)

// ExportFormat is the version of the [Export] document: it changes when a
// member changes meaning or goes, not when one is added.
const ExportFormat = 1

// Export is everything the service holds about one user (GDPR Art. 15
// access, Art. 20 portability): the facts, the keys the user asked to
// forget, the times of the last clear and erasure, and the watermarks of
// the threads read. A zero time is a time not held.
type Export struct {
	// At is when the export was read, from the store's clock.
	At time.Time
	// Facts are the stored facts, sorted by key: every fact held,
	// a temporary fact past its last day included until the record's next
	// write removes it (its ValidUntil says it ended).
	Facts []Fact
	// History are the previous values of the facts that have some
	// ([Record.History]), sorted by key, newest value first.
	History []FactHistory
	// Pending are the pending facts held, sorted by key.
	Pending []Fact
	// Forgotten are the tombstones: the keys removed by hand or by the
	// forget tool, with the times of their removal, sorted by key.
	Forgotten []ForgottenKey
	// ClearedAt is the time of the last clear of every fact.
	ClearedAt time.Time
	// ErasedAt is the time of the last erasure (the fence).
	ErasedAt time.Time
	// Threads are the extraction watermarks, sorted by thread key.
	Threads []Watermark
	// Imports are the marks of the user's newest imports from another
	// assistant, newest first ([Record.Imports]): what was imported and
	// when. Their facts are among Facts and Pending, of OriginImported,
	// with the import's ID as their source. The declined digests
	// ([Record.Declined]) are hashes that say nothing of their facts and
	// are not exported.
	Imports []ImportMark
}

// FactHistory is the history of one fact in an [Export]: its key and
// its previous values, newest first.
type FactHistory struct {
	Key      string
	Previous []PreviousValue
}

// ForgottenKey is one tombstone of an [Export]: a key removed at At.
type ForgottenKey struct {
	Key string
	At  time.Time
}

// Watermark is the extraction watermark of one thread in an [Export]:
// ThreadKey is [ThreadKey] of the thread's ID (the ID itself when short,
// else a hash of it: the service keeps no more).
// Digest, when not empty, is the watermark of an uncounted extraction
// (the [TurnsDigest] of its turns); TurnCount is then 0.
// ForgottenAt is the thread's forget fence ([ThreadMark].ForgottenAt),
// zero when none.
type Watermark struct {
	ThreadKey   string
	TurnCount   int
	Digest      string
	At          time.Time
	ForgottenAt time.Time
}

// Export returns everything stored for the user, read in one
// [Repository.Get]: no model call, no write. A user with no record gets an
// Export with no facts. Errors: CodeInvalidID; a repository failure.
func (s *Store) Export(ctx context.Context, sc Scope) (Export, error) {
	rec, err := s.read(ctx, sc)
	if err != nil {
		return Export{}, err
	}
	out := Export{At: s.now(), Facts: sortedCopy(rec.Facts), Pending: sortedCopy(rec.Pending), ClearedAt: rec.ClearedAt, ErasedAt: rec.ErasedAt,
		Forgotten: []ForgottenKey{}, Threads: []Watermark{}, History: []FactHistory{}, Imports: slices.Clone(rec.Imports)}
	if out.Imports == nil {
		out.Imports = []ImportMark{}
	}
	for _, k := range slices.Sorted(maps.Keys(rec.History)) {
		if h := rec.History[k]; len(h) > 0 {
			out.History = append(out.History, FactHistory{Key: k, Previous: slices.Clone(h)})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rec.Tombstones)) {
		out.Forgotten = append(out.Forgotten, ForgottenKey{Key: k, At: rec.Tombstones[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(rec.Threads)) {
		m := rec.Threads[k]
		out.Threads = append(out.Threads, Watermark{ThreadKey: k, TurnCount: m.TurnCount, Digest: m.Digest, At: m.At, ForgottenAt: m.ForgottenAt})
	}
	return out, nil
}

// sortedCopy returns facts sorted by key in a new, non-nil slice.
func sortedCopy(facts []Fact) []Fact {
	out := slices.Clone(facts)
	if out == nil {
		out = []Fact{}
	}
	sortFacts(out)
	return out
}
