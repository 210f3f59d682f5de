package memory

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// RemoveFact forgets the fact with key (canonical form), and its pending
// fact if any, and leaves a
// tombstone with the time of the removal, so that no extraction requested
// before it sets the key again; the tombstone is written even when the key
// is not stored (an extraction in flight may be about to set it). One
// conditional write; at MaxTombstones a new tombstone merges and saves the
// whole record, folding the oldest tombstones into ClearedAt. Errors:
// *Error with CodeInvalidID, CodeInvalidKeyChars or CodeEmptyFact;
// CodeConflict; a
// repository failure.
func (s *Store) RemoveFact(ctx context.Context, sc Scope, key string) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	if err := CheckKey(key); err != nil {
		return err
	}
	k := CanonicalKey(key)
	if k == "" {
		return badRequest(CodeEmptyFact, "the key is empty", "Name the fact to forget.")
	}
	if utf8.RuneCountInString(k) > s.cfg.MaxFactChars {
		return nil // Never stored: a longer key is refused on every write.
	}
	at := s.now()
	applied, rec, err := s.repo.DeleteFact(ctx, sc, k, at, s.cfg.MaxTombstones)
	if err != nil {
		return repoError(err)
	}
	if applied {
		return nil
	}
	return s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		rec.Facts = withoutKey(rec.Facts, k)
		rec.Pending = withoutKey(rec.Pending, k)
		rec.Tombstones = maps.Clone(rec.Tombstones)
		if rec.Tombstones == nil {
			rec.Tombstones = map[string]time.Time{}
		}
		if old := rec.Tombstones[k]; old.Before(at) {
			rec.Tombstones[k] = at
		}
		return rec, true
	})
}

// withoutTombstone returns a copy of tombs without key's tombstone.
func withoutTombstone(tombs map[string]time.Time, key string) map[string]time.Time {
	out := maps.Clone(tombs)
	delete(out, key)
	return out
}

// tidy returns rec without what ended ([Store.tidyEnded]: temporary facts
// past their last day, pending facts past their wait), and with its
// deletion fences kept within their bounds: a
// tombstone or a ClearedAt older than DeletionFenceLifetime is dropped (no
// message sent before it can still arrive), a tombstone at or before
// ClearedAt is dropped (ClearedAt fences it already), a thread's forget
// fence older than DeletionFenceLifetime is zeroed, and over
// MaxTombstones the oldest tombstones fold into ClearedAt, which rises to
// the newest of them: messages requested before it then set no key at
// all, which fences more than the folded keys, never less. Last, the
// record is fitted within ItemBudget ([Config.FitRecord]).
func (s *Store) tidy(rec Record) Record {
	now := s.now()
	expired := func(t time.Time) bool { return t.Add(DeletionFenceLifetime).Before(now) }
	if expired(rec.ClearedAt) {
		rec.ClearedAt = time.Time{}
	}
	tombs := make(map[string]time.Time, len(rec.Tombstones))
	for k, t := range rec.Tombstones {
		if !expired(t) && t.After(rec.ClearedAt) {
			tombs[k] = t
		}
	}
	if len(tombs) > s.cfg.MaxTombstones {
		keys := slices.Collect(maps.Keys(tombs))
		slices.SortFunc(keys, func(a, b string) int { // newest first, ties by key
			if c := tombs[b].Compare(tombs[a]); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys[s.cfg.MaxTombstones:] {
			if tombs[k].After(rec.ClearedAt) {
				rec.ClearedAt = tombs[k]
			}
		}
		for k, t := range tombs {
			if !t.After(rec.ClearedAt) {
				delete(tombs, k)
			}
		}
	}
	rec.Tombstones = tombs
	rec.Threads = withoutExpiredForgets(rec.Threads, expired)
	rec = s.tidyEnded(rec, now)
	rec.History = tidyHistory(rec)
	return s.cfg.FitRecord(rec)
}

// Clear forgets every fact of the user, the pending facts, the marks of
// the imports and the declined digests ([Repository.ClearFacts]), and sets
// ClearedAt, so that no extraction or import requested before the clear
// writes anything; the record and its watermarks stay, and a user without a record gets one holding only
// ClearedAt. The erasure that removes the record is DeleteByUser. One
// write. Errors: CodeInvalidID; a repository failure.
func (s *Store) Clear(ctx context.Context, sc Scope) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	if err := s.repo.ClearFacts(ctx, sc, s.now()); err != nil {
		return repoError(err)
	}
	return nil
}
