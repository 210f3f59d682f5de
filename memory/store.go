package memory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
	"unicode/utf8"
)

// Store implements the operations of the user memory over a [Repository]:
// the reads, the user's own edits, the erasure and the extraction.
type Store struct {
	repo      Repository
	model     Model
	gate      UsageGate
	now       Clock
	normalize func(string) string
	cfg       Config
	// importCalls is how many parts of an import are read at once.
	importCalls int
}

// Option configures a [Store].
type Option func(*Store)

// WithModel sets the cheap model used by Extract. Without one, Extract
// reports every due extraction as a failed model call.
func WithModel(m Model) Option { return func(s *Store) { s.model = m } }

// WithUsageGate sets the gate asked before every model call.
func WithUsageGate(g UsageGate) Option { return func(s *Store) { s.gate = g } }

// WithNormalizer sets a Unicode normalisation (such as NFKC, from
// golang.org/x/text/unicode/norm: the core links none) that the evidence
// check applies to the quote and to the user's turns before it compares
// them ([EvidenceFound]), so that a quote the model wrote in another
// normal form than the user's is still found. The functions set NFKC.
func WithNormalizer(f func(string) string) Option { return func(s *Store) { s.normalize = f } }

// WithImportCalls has an import read up to n of its parts at once
// ([Store.Import]); the model and the usage gate must then be safe for
// concurrent use. The default, 1, reads them one after another. The
// extractor passes [ImportParallelCalls].
func WithImportCalls(n int) Option { return func(s *Store) { s.importCalls = n } }

// WithClock sets the clock; the default is time.Now. The store keeps times
// in UTC to the millisecond, the precision the repository stores.
func WithClock(c Clock) Option { return func(s *Store) { s.now = c } }

// New returns a Store over repo. It returns a *Error with CodeInvalidConfig
// when cfg is outside its bounds.
func New(repo Repository, cfg Config, opts ...Option) (*Store, error) {
	if repo == nil {
		return nil, errors.New("memory: New needs a repository")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Store{repo: repo, cfg: cfg.WithDefaults(), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	clock := s.now
	s.now = func() time.Time { return clock().UTC().Truncate(time.Millisecond) }
	return s, nil
}

// Config returns the store's configuration with its defaults filled in
// (a frontend shows its MaxFacts and MaxFactChars next to the facts).
func (s *Store) Config() Config { return s.cfg }

// GetFacts returns the stored facts of the user sorted by key, an empty
// slice for a user without a record; a temporary fact past its last day
// is never among them, nor is a pending fact ([Store.GetFactsAndPending] returns those).
// No model call, no write. Errors: a
// *Error with CodeInvalidID, or a repository failure (CodeRepository).
func (s *Store) GetFacts(ctx context.Context, sc Scope) ([]Fact, error) {
	rec, err := s.read(ctx, sc)
	if err != nil {
		return nil, err
	}
	return s.facts(rec), nil
}

// read validates sc and returns the user's record, read once: no model
// call, no write. Errors: CodeInvalidID; a repository failure
// (repoError).
func (s *Store) read(ctx context.Context, sc Scope) (Record, error) {
	if err := sc.Validate(); err != nil {
		return Record{}, err
	}
	rec, err := s.repo.Get(ctx, sc)
	if err != nil {
		return Record{}, repoError(err)
	}
	return rec, nil
}

// checkManual trims and checks a key and a value set by hand. It returns
// the canonical key and the clean value, or an *Error: CodeInvalidKeyChars
// for a key [CheckKey] refuses, CodeEmptyFact for an empty key or value,
// CodeFactTooLong (with a userMessage) for one over MaxFactChars.
func (s *Store) checkManual(key, value string, needValue bool) (string, string, error) {
	if err := CheckKey(key); err != nil {
		return "", "", err
	}
	k := CanonicalKey(key)
	if k == "" {
		return "", "", badRequest(CodeEmptyFact, "the key is empty", "Give the fact a name.")
	}
	if utf8.RuneCountInString(k) > s.cfg.MaxFactChars {
		return "", "", badRequest(CodeFactTooLong, fmt.Sprintf("the key is over %d characters", s.cfg.MaxFactChars),
			fmt.Sprintf("The name of a fact can have at most %d characters.", s.cfg.MaxFactChars))
	}
	if !needValue {
		return k, "", nil
	}
	v := cleanValue(value)
	if v == "" {
		return "", "", badRequest(CodeEmptyFact, "the value is empty", "Write what should be remembered.")
	}
	if n := utf8.RuneCountInString(v); n > s.cfg.MaxFactChars {
		return "", "", badRequest(CodeFactTooLong, fmt.Sprintf("the value has %d characters, over %d", n, s.cfg.MaxFactChars),
			fmt.Sprintf("This is too long to remember: it can have at most %d characters (it has %d).", s.cfg.MaxFactChars, n))
	}
	return k, v, nil
}

// FactInput is a fact set by hand or by the remember tool.
type FactInput struct {
	Key, Value string
	// Origin is OriginManual (the zero value means it) or
	// OriginRememberTool ([CheckWriteOrigin]).
	Origin Origin
	// ValidUntil is "" for a lasting fact, or the last day of a temporary
	// one, "YYYY-MM-DD", from today to MaxValidUntilDays ahead.
	ValidUntil string
}

// Put stores one fact set by hand or by the remember tool, the one way
// to write a fact outside an extraction: the key in its canonical form
// ([CanonicalKey]), the value trimmed, in.Origin (OriginManual when zero),
// the end date if any, no source thread and no evidence, updatedAt now.
// The same key replaces the stored fact and its pending fact and lifts
// its tombstone (a person who sets a fact again after removing it means
// it); over MaxFacts the fact updated longest ago is dropped, never this
// one. It returns the stored fact.
//
// Errors: an *Error whose code names the bad input (the scope, origin,
// key, value or end date, or a value that looks like a secret);
// CodeConflict when concurrent writers won MaxConflictRetries times; a
// repository failure.
func (s *Store) Put(ctx context.Context, sc Scope, in FactInput) (Fact, error) {
	if err := sc.Validate(); err != nil {
		return Fact{}, err
	}
	if in.Origin == "" {
		in.Origin = OriginManual
	}
	if err := CheckWriteOrigin(in.Origin); err != nil {
		return Fact{}, err
	}
	k, v, err := s.checkManual(in.Key, in.Value, true)
	if err != nil {
		return Fact{}, err
	}
	if kind := SecretKind(k, v, ""); kind != "" {
		return Fact{}, badRequest(CodeSecretRefused, "the fact looks like a secret ("+kind+"); it is not stored",
			"This looks like a password, a key, an identity number or a card or account number. It is safer not to remember it.")
	}
	now := s.now()
	until, err := checkValidUntil(in.ValidUntil, now)
	if err != nil {
		return Fact{}, err
	}
	f := Fact{Key: k, Value: v, UpdatedAt: now, Origin: in.Origin, ValidUntil: until}
	var rec Record
	if until.IsZero() {
		var applied bool
		applied, rec, err = s.repo.SetFact(ctx, sc, f, s.cfg.MaxFacts)
		if err != nil {
			return Fact{}, repoError(err)
		}
		if applied {
			return f, nil
		}
	} else if rec, err = s.repo.Get(ctx, sc); err != nil {
		return Fact{}, repoError(err)
	}
	err = s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		rec.Facts = capFacts(setFact(rec.Facts, f), s.cfg.MaxFacts, f.Key)
		rec.Pending = withoutKey(rec.Pending, f.Key)
		rec.Tombstones = withoutTombstone(rec.Tombstones, f.Key)
		return rec, true
	})
	if err != nil {
		return Fact{}, err
	}
	return f, nil
}

// setFact returns facts with f in place of the fact with its key.
func setFact(facts []Fact, f Fact) []Fact {
	out := make([]Fact, 0, len(facts)+1)
	for _, x := range facts {
		if x.Key != f.Key {
			out = append(out, x)
		}
	}
	return append(out, f)
}

// saveLoop applies change to rec, tidies the deletion fences ([Store.tidy])
// and saves it, and on a conflict applies the same change again to the
// current record, at most MaxConflictRetries times. change returns false
// when there is nothing to write.
func (s *Store) saveLoop(ctx context.Context, sc Scope, rec Record, change func(Record) (Record, bool)) error {
	for attempt := range s.cfg.MaxConflictRetries {
		if attempt > 0 {
			if err := conflictBackoff(ctx, attempt); err != nil {
				return err
			}
		}
		next, write := change(rec)
		if !write {
			return nil
		}
		next = s.tidy(next)
		_, cur, err := s.repo.Save(ctx, sc, next)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrConflict) {
			return repoError(err)
		}
		rec = cur
	}
	return &Error{Code: CodeConflict,
		Message: "the facts kept changing during the write", UserMessage: "Please try again."}
}

// conflictBackoff waits a random time of up to 2^attempt milliseconds
// (capped at about one second) before a write is merged again ("full
// jitter"), so that writers that collided spread out instead of colliding
// again at once. A write that keeps losing waits longer each time; the
// context's deadline ends the wait.
func conflictBackoff(ctx context.Context, attempt int) error {
	ceiling := time.Millisecond << min(attempt, 10)
	t := time.NewTimer(rand.N(ceiling) + time.Millisecond/4)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
