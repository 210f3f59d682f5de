package memory

import (
	"context"
	"maps"
	"slices"
	"time"
)

// FactsAndPending is what a user's page shows: the facts, read into every
// prompt, and the pending facts, read into none until the user keeps them.
type FactsAndPending struct {
	// Facts are the stored facts, sorted by key, none ended.
	Facts []Fact
	// Pending are the extracted facts of a special category that wait for
	// the user's yes, sorted by key, none past its wait.
	Pending []Fact
	// History maps the key of a fact of Facts to its previous values,
	// newest first ([Record.History]); nil when none has any.
	History map[string][]PreviousValue
}

// GetFactsAndPending returns the user's facts, as [Store.GetFacts] does,
// and the pending facts, in one repository read: the page's read, where
// GetFacts is the prompt's. No model call, no write. Errors: those of
// GetFacts.
func (s *Store) GetFactsAndPending(ctx context.Context, sc Scope) (FactsAndPending, error) {
	rec, err := s.read(ctx, sc)
	if err != nil {
		return FactsAndPending{}, err
	}
	out := FactsAndPending{Facts: s.facts(rec), Pending: s.pending(rec)}
	for _, f := range out.Facts {
		if h := rec.History[f.Key]; len(h) > 0 {
			if out.History == nil {
				out.History = map[string][]PreviousValue{}
			}
			out.History[f.Key] = slices.Clone(h)
		}
	}
	return out, nil
}

// KeepPending is the user's yes to a pending fact: it moves to the facts,
// with its value, evidence, category and source, updated now (over
// MaxFacts the fact updated longest ago is dropped, never this one), and
// from then on it is in every prompt; a stored value it replaces goes
// into the fact's history, as an extraction's change does. It returns the kept fact. Errors:
// CodeInvalidID, CodeInvalidKeyChars or CodeEmptyFact;
// CodePendingNotFound when no pending fact has the key; CodeConflict;
// a repository failure.
func (s *Store) KeepPending(ctx context.Context, sc Scope, key string) (Fact, error) {
	k, rec, err := s.readForPending(ctx, sc, key)
	if err != nil {
		return Fact{}, err
	}
	var kept Fact
	found := false
	err = s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		i := slices.IndexFunc(s.pending(rec), func(f Fact) bool { return f.Key == k })
		if found = i >= 0; !found {
			return rec, false
		}
		kept = s.pending(rec)[i]
		kept.UpdatedAt = s.now()
		rec.Pending = withoutKey(rec.Pending, k)
		rec.Facts, rec.History = recordHistory(rec.Facts, capFacts(setFact(rec.Facts, kept), s.cfg.MaxFacts, k), rec.History)
		kept = rec.Facts[slices.IndexFunc(rec.Facts, func(f Fact) bool { return f.Key == k })]
		rec.Tombstones = withoutTombstone(rec.Tombstones, k)
		return rec, true
	})
	if err != nil {
		return Fact{}, err
	}
	if !found {
		return Fact{}, &Error{Code: CodePendingNotFound,
			Message: "no pending fact has this key", UserMessage: "This is no longer waiting for your answer."}
	}
	return kept, nil
}

// DiscardPending is the user's no to a pending fact: it goes, and a
// tombstone of its key fences the extractions requested before now, so
// that a message already queued does not propose it again (a later
// conversation may). A discarded imported fact is remembered as declined
// ([Record.Declined]): a later import does not propose it again. A key with no pending fact changes nothing; the
// stored fact of the key, if any, stays. Errors: CodeInvalidID,
// CodeInvalidKeyChars or CodeEmptyFact; CodeConflict; a repository
// failure.
func (s *Store) DiscardPending(ctx context.Context, sc Scope, key string) error {
	k, rec, err := s.readForPending(ctx, sc, key)
	if err != nil {
		return err
	}
	at := s.now()
	return s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		i := slices.IndexFunc(rec.Pending, func(f Fact) bool { return f.Key == k })
		if i < 0 {
			return rec, false
		}
		if f := rec.Pending[i]; f.Origin == OriginImported {
			rec.Declined = addDeclined(rec.Declined, f, at)
		}
		rec.Pending = withoutKey(rec.Pending, k)
		rec.Tombstones = maps.Clone(rec.Tombstones)
		if rec.Tombstones == nil {
			rec.Tombstones = map[string]time.Time{}
		}
		rec.Tombstones[k] = at
		return rec, true
	})
}

// readForPending validates the scope and a key named by hand, and reads
// the record.
func (s *Store) readForPending(ctx context.Context, sc Scope, key string) (string, Record, error) {
	if err := sc.Validate(); err != nil {
		return "", Record{}, err
	}
	k, _, err := s.checkManual(key, "", false)
	if err != nil {
		return "", Record{}, err
	}
	rec, err := s.repo.Get(ctx, sc)
	if err != nil {
		return "", Record{}, repoError(err)
	}
	return k, rec, nil
}

// withoutKey returns a copy of facts without the fact with key.
func withoutKey(facts []Fact, key string) []Fact {
	return slices.DeleteFunc(slices.Clone(facts), func(f Fact) bool { return f.Key == key })
}

// PendingUntil returns when the pending fact f stops waiting for an
// answer and is dropped: PendingLifetime after it was proposed, or the day
// after its ValidUntil when that comes first.
func (s *Store) PendingUntil(f Fact) time.Time { return s.ends(f, true) }
