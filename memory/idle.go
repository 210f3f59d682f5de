package memory

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"
)

// The idle read: a thread whose newest turns were not read because no
// extraction was due ([Store.IsExtractDue]) gets them read once, after it
// has been idle for a while. The extractor notes the thread's unread tail
// ([Store.NoteTail]) when it receives a message that is not due, and
// sends a delayed copy of the message; when the copy comes back, the
// extractor reads it ([Store.ReadIdle]) only if that tail is still the
// thread's newest and unread. The beat itself does not change.

// MaxTails is the most unread tails a record keeps, one per thread; over
// it, the oldest is dropped (its thread is then not read when idle).
const MaxTails = 16

// TailLifetime is how long a tail is kept: longer than the idle queue
// keeps a message (one day), so that no delayed copy can still come for a
// tail dropped by age.
const TailLifetime = 2 * 24 * time.Hour

// Tail is the unread end of a thread: the turn count of the newest
// message not read when it arrived, and when that message was sent.
type Tail struct {
	// TurnCount is the message's turn count.
	TurnCount int
	// SentAt is when the message was sent (the queue's time).
	SentAt time.Time
}

// Outcomes of [Store.NoteTail] and [Store.ReadIdle] besides those of
// [Store.Extract].
const (
	// OutcomeNoted: the tail was noted; the thread is read if it stays
	// idle.
	OutcomeNoted Outcome = "idle_noted"
	// OutcomeSuperseded: a newer message of the thread came after the one
	// being read; its own delayed copy reads the thread.
	OutcomeSuperseded Outcome = "idle_superseded"
	// OutcomeAlreadyRead: an extraction read these turns since they were
	// noted (or the tail was dropped); nothing to read.
	OutcomeAlreadyRead Outcome = "idle_already_read"
)

// NoteTail records that the turns of req, a counted request that is not
// due, were not read: the thread's tail becomes req.TurnCount, sent at
// req.SentAt, in one conditional write (merged again on a conflict). It
// writes nothing, and returns the reason, when the request is fenced by an
// erasure or a clear (OutcomeFenced, OutcomeCleared), when its turns were
// read already (OutcomeAlreadyRead), when extraction is off
// (OutcomeDisabled) or when it has no turns (OutcomeNoTurns). A tail at or
// above the request's count stays as it is. Otherwise it returns
// OutcomeNoted. An uncounted request is always due: it is refused as
// CodeInvalidTurnCount. Errors:
// *Error with CodeInvalidID or CodeInvalidTurnCount; CodeConflict; a
// repository failure.
func (s *Store) NoteTail(ctx context.Context, req ExtractRequest) (Outcome, error) {
	if err := req.check(); err != nil {
		return "", err
	}
	if req.Uncounted {
		return "", badRequest(CodeInvalidTurnCount, "an uncounted request has no tail to note", "")
	}
	switch {
	case s.cfg.ExtractionDisabled:
		return OutcomeDisabled, nil
	case len(req.Turns) == 0:
		return OutcomeNoTurns, nil
	}
	rec, err := s.repo.Get(ctx, req.Scope)
	if err != nil {
		return "", repoError(err)
	}
	key := ThreadKey(req.ThreadID)
	out := OutcomeNoted
	err = s.saveLoop(ctx, req.Scope, rec, func(rec Record) (Record, bool) {
		if o, stop := s.skip(rec, req); stop {
			out = idleOutcome(o)
			return rec, false
		}
		out = OutcomeNoted
		if t, ok := rec.Tails[key]; ok && t.TurnCount >= req.TurnCount {
			return rec, false
		}
		rec.Tails = addTail(rec.Tails, key, Tail{TurnCount: req.TurnCount, SentAt: req.SentAt}, s.now())
		return rec, true
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

// ReadIdle reads the turns of req, the delayed copy of a message whose
// tail [Store.NoteTail] noted, when that tail is still the thread's: one
// extraction as [Store.Extract] does it (the usage gate, the fences, the
// watermark), which also removes the tail. It reads nothing, and says
// why, when a newer message of the thread came since (OutcomeSuperseded),
// when the tail is gone or an extraction read the turns since
// (OutcomeAlreadyRead), or when the user was erased or cleared their
// facts after the message was sent (OutcomeFenced, OutcomeCleared).
// req.SentAt must be when the original message was sent. Errors: those of
// Extract; an uncounted request is refused as CodeInvalidTurnCount.
func (s *Store) ReadIdle(ctx context.Context, req ExtractRequest) (ExtractResult, error) {
	if err := req.check(); err != nil {
		return ExtractResult{}, err
	}
	if req.Uncounted {
		return ExtractResult{}, badRequest(CodeInvalidTurnCount, "an uncounted request has no tail to read", "")
	}
	if s.cfg.ExtractionDisabled || len(req.Turns) == 0 {
		return s.Extract(ctx, req)
	}
	rec, err := s.repo.Get(ctx, req.Scope)
	if err != nil {
		return ExtractResult{}, repoError(err)
	}
	if o, stop := s.skip(rec, req); stop {
		o = idleOutcome(o)
		return ExtractResult{Facts: s.visible(rec, o), Outcome: o}, nil
	}
	t, ok := rec.Tails[ThreadKey(req.ThreadID)]
	switch {
	case !ok || t.TurnCount < req.TurnCount:
		return ExtractResult{Facts: s.facts(rec), Outcome: OutcomeAlreadyRead}, nil
	case t.TurnCount > req.TurnCount:
		return ExtractResult{Facts: s.facts(rec), Outcome: OutcomeSuperseded}, nil
	}
	res, err := s.extractFrom(ctx, rec, req)
	if res.Outcome == OutcomeDuplicate {
		res.Outcome = OutcomeAlreadyRead
	}
	return res, err
}

// idleOutcome returns the outcome of a note or an idle read that [Store.skip]
// stopped with o: a duplicate is a tail already read.
func idleOutcome(o Outcome) Outcome {
	if o == OutcomeDuplicate {
		return OutcomeAlreadyRead
	}
	return o
}

// addTail returns a copy of tails with key's tail set to t, without the
// tails older than [TailLifetime] at now, and at most [MaxTails] of them:
// the newest by SentAt (ties by key), always keeping key's.
func addTail(tails map[string]Tail, key string, t Tail, now time.Time) map[string]Tail {
	out := make(map[string]Tail, len(tails)+1)
	for k, v := range tails {
		if v.SentAt.Add(TailLifetime).After(now) {
			out[k] = v
		}
	}
	out[key] = t
	if len(out) <= MaxTails {
		return out
	}
	keys := slices.Collect(maps.Keys(out))
	slices.SortFunc(keys, func(a, b string) int {
		if a == key || b == key {
			return map[bool]int{true: -1, false: 1}[a == key]
		}
		if c := out[b].SentAt.Compare(out[a].SentAt); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys[MaxTails:] {
		delete(out, k)
	}
	return out
}

// readTail returns a copy of tails without key's tail when the extraction
// of req read it: an uncounted extraction reads the thread's unread turns
// whatever their count, a counted one those up to its turn count. Nil
// stays nil.
func readTail(tails map[string]Tail, key string, req ExtractRequest) map[string]Tail {
	t, ok := tails[key]
	if !ok || (!req.Uncounted && t.TurnCount > req.TurnCount) {
		return tails
	}
	out := maps.Clone(tails)
	delete(out, key)
	return out
}
