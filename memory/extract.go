package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Turn is one turn of a thread. Role is "user", "assistant" or "tool".
type Turn struct {
	Role string
	Text string
}

// Turn roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ExtractRequest asks for the facts of the newest turns of one thread.
type ExtractRequest struct {
	Scope
	// ThreadID is recorded as the source of the facts it sets.
	ThreadID string
	// ThreadTitle is the thread's title as a person knows it, when the
	// gateway gives one; it is kept, cleaned by [CleanThreadTitle], with
	// the facts the extraction sets. Optional.
	ThreadTitle string
	// PreviousTurnCount and TurnCount are the thread's turn counts before
	// the call that ended and now; TurnCount is the extraction watermark.
	// Both are 0 when Uncounted.
	PreviousTurnCount int
	TurnCount         int
	// Uncounted marks a request without turn counts (its caller judged the
	// extraction due): its watermark is [TurnsDigest] of Turns, and it is
	// a duplicate only when the thread's watermark is that digest.
	Uncounted bool
	// Turns are the turns since the last extraction, oldest first.
	Turns []Turn
	// ContextTurns are the turns just before Turns, oldest first, already
	// read: the model gets the newest of them within Config.ContextChars,
	// marked as context, so that it sees what a new turn answers ("yes" to
	// a question asked before). They never count in the turn counts, never
	// enter the digest, never move the watermark and never make an
	// extraction due or a duplicate.
	ContextTurns []Turn
	// SentAt is when the request was made (for a queued message, when the
	// queue accepted it). A request made at or before the user's erasure
	// or last clear writes nothing, and sets no key removed at or after
	// it. Zero skips these checks.
	SentAt time.Time
	// CheapModelID overrides Config.CheapModelID when not empty.
	CheapModelID string
	// Meta is passed to the usage gate and the model; Kind is set to
	// KindMemoryUser and the IDs to the request's.
	Meta CallMeta
}

// Outcome says what an extraction did, for logs and metrics.
type Outcome string

// Outcomes of [Store.Extract].
const (
	OutcomeDisabled  Outcome = "disabled"  // extraction is switched off
	OutcomeNoTurns   Outcome = "no_turns"  // nothing to read
	OutcomeDuplicate Outcome = "duplicate" // these turns were extracted already
	OutcomeFenced    Outcome = "fenced"    // requested before the user's erasure
	OutcomeCleared   Outcome = "cleared"   // requested before the user cleared their facts
	// OutcomeThreadForgotten: requested before the user forgot what its
	// thread taught ([Store.ForgetThread]).
	OutcomeThreadForgotten Outcome = "thread_forgotten"
	OutcomeRefused         Outcome = "refused"      // the usage gate said no (silent)
	OutcomeModelFailed     Outcome = "model_failed" // the call failed (CodeModelFailed)
	OutcomeBadAnswer       Outcome = "bad_answer"   // not the expected structure (CodeBadAnswer)
	OutcomeUnchanged       Outcome = "unchanged"    // merged; no fact changed
	OutcomeChanged         Outcome = "changed"      // merged; facts changed
)

// ExtractResult is the result of [Store.Extract].
type ExtractResult struct {
	// Facts are the user's facts after the extraction, sorted by key.
	Facts   []Fact
	Outcome Outcome
	// Reported is the reported failure of OutcomeModelFailed and
	// OutcomeBadAnswer: a *Error with CodeModelFailed or CodeBadAnswer
	// whose cause is the model's error. Nil otherwise.
	Reported error
	// ModelCalls is 1 when the model was called, 0 otherwise.
	ModelCalls int
	// Usage is what the model call used.
	Usage Usage
	// Sets and Deletes count the operations that changed a fact (a SET
	// that moved a fact to the thread that confirmed it counts).
	Sets, Deletes int
	// Forgotten counts the SETs left out because the user removed their
	// key after the request was made.
	Forgotten int
	// Unsupported counts the SETs left out because their evidence was
	// missing or not found in a user turn of the request ([EvidenceFound]).
	Unsupported int
	// Secrets counts the SETs left out because they held a secret
	// ([SecretKind]).
	Secrets int
	// Ended counts the SETs left out because the end date they carried was
	// already past.
	Ended int
	// Pending counts the SETs of a special category that now wait for the
	// user's yes (Record.Pending) instead of changing a fact.
	Pending int
}

// Extract has the cheap model read the newest turns of a thread, after the
// context turns marked as already read, and merges its operations into the
// stored facts: SET adds or replaces a key (a fact repeated unchanged
// keeps its date and source; repeated from another thread, that thread
// confirms it and becomes its source: [confirms]), DELETE removes it (and its pending fact).
//
// Every SET is screened first ([Store.screen]): one that holds a secret is
// left out (Secrets), one whose end date is past is left out (Ended), one
// whose evidence is not a span of a user turn of req.Turns is left out
// (Unsupported) unless Config.EvidenceCheckOff, and one of a category in
// Config.PendingCategories goes to the pending facts (Pending) instead of
// the facts. The
// result is saved under the caps with the thread's watermark, in one
// conditional write; a conflict merges the same operations again into the
// fresh record and never calls the model again.
//
// A SET of a key that the user removed (RemoveFact) at or after the time
// the request was made is left out: deletion wins over older turns. A
// later request that states the fact again sets it.
//
// The stored facts stay as they are, and are returned, when extraction is
// switched off, when there is no turn, when the turns were extracted
// already (the thread's watermark is a turn count at or above the
// request's, or, for an uncounted request, the [TurnsDigest] of the same
// turns), when the user was erased or cleared their facts at or after the
// time the request was made (no model call, no write, the watermark stays:
// a redelivery meets the same fence), when the
// usage gate refuses (silently), when the model call fails (reported,
// CodeModelFailed) or when its answer is not the expected structure,
// including an invalid key or more than MaxOperations operations
// (reported, CodeBadAnswer). A model failure never returns an error.
//
// Errors: *Error with CodeInvalidID or CodeInvalidTurnCount;
// CodeConflict; a repository failure.
func (s *Store) Extract(ctx context.Context, req ExtractRequest) (ExtractResult, error) {
	if err := req.check(); err != nil {
		return ExtractResult{}, err
	}
	if s.cfg.ExtractionDisabled || len(req.Turns) == 0 {
		facts, err := s.GetFacts(ctx, req.Scope)
		out := OutcomeDisabled
		if !s.cfg.ExtractionDisabled {
			out = OutcomeNoTurns
		}
		return ExtractResult{Facts: facts, Outcome: out}, err
	}
	rec, err := s.repo.Get(ctx, req.Scope)
	if err != nil {
		return ExtractResult{}, repoError(err)
	}
	return s.extractFrom(ctx, rec, req)
}

// extractFrom is [Store.Extract] after the checks, on the record rec as
// just read.
func (s *Store) extractFrom(ctx context.Context, rec Record, req ExtractRequest) (ExtractResult, error) {
	if o, stop := s.skip(rec, req); stop {
		return ExtractResult{Facts: s.visible(rec, o), Outcome: o}, nil
	}
	meta := s.metaOf(req)
	if s.gate != nil && !s.gate.Allow(ctx, meta) {
		return ExtractResult{Facts: s.facts(rec), Outcome: OutcomeRefused}, nil
	}

	res := ExtractResult{ModelCalls: 1}
	ops, err := s.callModel(ctx, meta, rec, req, &res.Usage)
	if s.gate != nil {
		s.gate.Record(ctx, meta, res.Usage)
	}
	if err != nil {
		res.Facts = s.facts(rec)
		res.reportModelFailure(err)
		return res, nil
	}
	if err := s.merge(ctx, rec, req, s.screen(ops, req, s.now(), &res), &res); err != nil {
		return ExtractResult{}, err
	}
	return res, nil
}

// check returns an *Error when the IDs or the turn counts of req are
// not valid.
func (req ExtractRequest) check() error {
	if err := req.Scope.Validate(); err != nil {
		return err
	}
	if !ValidID(req.ThreadID) {
		return badRequest(CodeInvalidID, "invalid thread ID", "")
	}
	if req.Uncounted && (req.PreviousTurnCount != 0 || req.TurnCount != 0) {
		return badRequest(CodeInvalidTurnCount, "an uncounted request has no turn counts", "")
	}
	if req.PreviousTurnCount < 0 || req.TurnCount < req.PreviousTurnCount {
		return badRequest(CodeInvalidTurnCount, "turn counts must satisfy 0 ≤ previousTurnCount ≤ turnCount", "")
	}
	return nil
}

// mark returns the watermark the extraction of req sets at: its turn
// count, or for an uncounted request the [TurnsDigest] of its turns.
func (req ExtractRequest) mark(at time.Time) ThreadMark {
	if req.Uncounted {
		return ThreadMark{Digest: TurnsDigest(req.Turns), At: at}
	}
	return ThreadMark{TurnCount: req.TurnCount, At: at}
}

// extractedBy reports whether the watermark m, stored for the thread,
// already covers the turns of the request whose own watermark is own: a
// digest equal to the request's digest, or a turn count at or above the
// request's. A count never equals a digest: across the two kinds, never.
func extractedBy(m, own ThreadMark) bool {
	if m.Digest != "" || own.Digest != "" {
		return m.Digest == own.Digest
	}
	return m.TurnCount >= own.TurnCount
}

// metaOf returns the CallMeta of the model call of req: the request's, of
// KindMemoryUser, with its IDs and the model it names or the config's.
func (s *Store) metaOf(req ExtractRequest) CallMeta {
	meta := req.Meta
	meta.Kind = KindMemoryUser
	meta.TenantID, meta.UserID, meta.ThreadID = req.TenantID, req.UserID, req.ThreadID
	meta.ModelID = req.CheapModelID
	if meta.ModelID == "" {
		meta.ModelID = s.cfg.CheapModelID
	}
	return meta
}

// reportModelFailure sets the outcome and the reported *Error of a failed
// model call: OutcomeBadAnswer (CodeBadAnswer) for an answer that is not
// the expected structure, OutcomeModelFailed (CodeModelFailed) for any
// other failure. Neither is returned: Extract reports them.
func (res *ExtractResult) reportModelFailure(err error) {
	if errors.Is(err, ErrMalformedAnswer) {
		res.Outcome = OutcomeBadAnswer
		res.Reported = &Error{Code: CodeBadAnswer, Message: "the model's answer is not the expected structure", Err: err}
		return
	}
	res.Outcome = OutcomeModelFailed
	res.Reported = &Error{Code: CodeModelFailed, Message: "the model call failed", Err: err}
}

// merge saves the screened changes of req into the record, read as rec,
// with the thread's watermark, merging again on a conflict, and fills in
// res the facts after it, the counts and the outcome. A fence or a
// duplicate found at write time stops it with that outcome.
func (s *Store) merge(ctx context.Context, rec Record, req ExtractRequest, changes []change, res *ExtractResult) error {
	now := s.now()
	var final Record
	stopped := Outcome("")
	err := s.saveLoop(ctx, req.Scope, rec, func(rec Record) (Record, bool) {
		if o, stop := s.skip(rec, req); stop {
			stopped, final = o, rec
			return rec, false
		}
		next := rec
		kept, forgotten := forgetRemoved(changes, rec.Tombstones, req.SentAt)
		res.Forgotten = forgotten
		var n mergeCounts
		next.Facts, next.Pending, n = mergeOperations(rec.Facts, rec.Pending, kept, sourceOf(req, now), now, s.cfg.MaxFacts)
		next.Facts, next.History = recordHistory(rec.Facts, next.Facts, rec.History)
		res.Sets, res.Deletes, res.Pending = n.sets, n.deletes, n.pending
		var folded time.Time
		next.Threads, folded = markThread(rec.Threads, ThreadKey(req.ThreadID), req.mark(now), s.cfg.MaxThreads)
		if folded.After(next.ClearedAt) {
			next.ClearedAt = folded
		}
		next.Tails = readTail(rec.Tails, ThreadKey(req.ThreadID), req)
		final = next
		return next, true
	})
	if err != nil {
		return err
	}
	res.Facts = s.visible(final, stopped)
	switch {
	case stopped != "":
		res.Outcome = stopped
	case res.Sets+res.Deletes+res.Pending > 0:
		res.Outcome = OutcomeChanged
	default:
		res.Outcome = OutcomeUnchanged
	}
	return nil
}

// visible returns the facts a caller may see after outcome o: none when the
// user was erased.
func (s *Store) visible(rec Record, o Outcome) []Fact {
	if o == OutcomeFenced {
		return []Fact{}
	}
	return s.facts(rec)
}

// skip reports whether rec makes the extraction of req moot: the user was
// erased or cleared their facts, or forgot what req's thread taught, at or
// after the time req was made, or the
// thread's watermark covers its turns ([extractedBy]).
func (s *Store) skip(rec Record, req ExtractRequest) (Outcome, bool) {
	if fences(rec.ErasedAt, req.SentAt) {
		return OutcomeFenced, true
	}
	if fences(rec.ClearedAt, req.SentAt) {
		return OutcomeCleared, true
	}
	m, ok := rec.Threads[ThreadKey(req.ThreadID)]
	if ok && fences(m.ForgottenAt, req.SentAt) {
		return OutcomeThreadForgotten, true
	}
	if ok && extractedBy(m, req.mark(time.Time{})) {
		return OutcomeDuplicate, true
	}
	return "", false
}

// fences reports whether a deletion at (zero: none) wins over a request
// made at sentAt (zero: unknown, never fenced): it does when the request
// was made at or before it.
func fences(at, sentAt time.Time) bool {
	return !at.IsZero() && !sentAt.IsZero() && !sentAt.After(at)
}

// forgetRemoved returns ops without the SETs of keys whose tombstone
// fences a request made at sentAt, and how many it left out.
func forgetRemoved(ops []change, tombs map[string]time.Time, sentAt time.Time) ([]change, int) {
	if len(tombs) == 0 || sentAt.IsZero() {
		return ops, 0
	}
	out := make([]change, 0, len(ops))
	for _, op := range ops {
		if op.Op == OpSet && fences(tombs[op.Key], sentAt) {
			continue
		}
		out = append(out, op)
	}
	return out, len(ops) - len(out)
}

// callModel renders the prompt, calls the model and validates its answer.
// It returns operations with canonical keys and cut values, or an error
// wrapping ErrMalformedAnswer, or the model's error.
func (s *Store) callModel(ctx context.Context, meta CallMeta, rec Record, er ExtractRequest, usage *Usage) ([]Operation, error) {
	return s.callWith(ctx, meta, RenderPrompt(s.cfg.Prompt, s.facts(rec), s.now()),
		ExtractionTranscript(er.ContextTurns, er.Turns, s.cfg.ContextChars, s.cfg.TranscriptChars), s.cfg.MaxOperations, usage)
}

// callWith calls the model with the system prompt and the transcript
// given, the operations tool of at most maxOps operations and the
// config's caps, and validates its answer ([Store.validateOperations]);
// extraction (maxOps Config.MaxOperations) and import
// ([ImportOperations]) share it.
func (s *Store) callWith(ctx context.Context, meta CallMeta, system, transcript string, maxOps int, usage *Usage) ([]Operation, error) {
	if s.model == nil {
		return nil, errors.New("memory: no model configured")
	}
	req := ModelRequest{
		ModelID:        meta.ModelID,
		System:         system,
		Transcript:     transcript,
		Tool:           OperationsTool(maxOps, s.cfg.MaxFactChars, !s.cfg.EvidenceCheckOff),
		MaxOperations:  maxOps,
		MaxAnswerBytes: len(LargestAnswer(maxOps, s.cfg.MaxFactChars)),
		Meta:           meta,
	}
	ans, err := s.model.Extract(ctx, req)
	*usage = ans.Usage
	if err != nil {
		return nil, err
	}
	return s.validateOperations(ans.Operations, maxOps)
}

// validateOperations checks an answer as untrusted input: at most
// maxOps operations, each SET or DELETE with a key that has a
// letter or digit, each SET with a value and, if it has one, an end date
// that is a date. Keys are made canonical and cut; values and evidence are
// cleaned and cut at a rune boundary; an end date is written YYYY-MM-DD.
// Any invalid operation refuses the whole answer. Whether a SET is kept
// is [Store.screen]'s call.
func (s *Store) validateOperations(ops []Operation, maxOps int) ([]Operation, error) {
	if len(ops) > maxOps {
		return nil, malformed("%d operations, over the limit of %d", len(ops), maxOps)
	}
	out := make([]Operation, 0, len(ops))
	for i, op := range ops {
		kind := strings.ToUpper(strings.TrimSpace(op.Op))
		if kind != OpSet && kind != OpDelete {
			return nil, malformed("operation %d: unknown op %q", i, cutRunes(op.Op, 16))
		}
		k := cutRunes(CanonicalKey(op.Key), s.cfg.MaxFactChars)
		if k == "" {
			return nil, malformed("operation %d: empty key", i)
		}
		o := Operation{Op: kind, Key: k}
		if kind == OpSet {
			o.Value = cutRunes(cleanValue(op.Value), s.cfg.MaxFactChars)
			if o.Value == "" {
				return nil, malformed("operation %d: SET with an empty value", i)
			}
			o.Evidence = cleanEvidence(op.Evidence)
			o.Category = strings.TrimSpace(op.Category)
			if u := strings.TrimSpace(op.ValidUntil); u != "" {
				d, err := ParseValidUntil(u)
				if err != nil {
					return nil, malformed("operation %d: validUntil %v", i, err)
				}
				o.ValidUntil = d.Format(time.DateOnly)
			}
		}
		out = append(out, o)
	}
	return out, nil
}

type malformedError struct{ msg string }

func (e *malformedError) Error() string { return "memory: malformed answer: " + e.msg }
func (e *malformedError) Unwrap() error { return ErrMalformedAnswer }

func malformed(format string, args ...any) error {
	return &malformedError{msg: fmt.Sprintf(format, args...)}
}

// sourceOf returns what a fact set by the extraction req records of where
// and when it came from: OriginConversation, the thread's ID and its clean
// title, and when it was said: req.SentAt, or now when that is zero.
func sourceOf(req ExtractRequest, now time.Time) Fact {
	said := req.SentAt
	if said.IsZero() || said.After(now) {
		said = now
	}
	return Fact{Origin: OriginConversation, SourceThreadID: req.ThreadID, SourceThreadTitle: CleanThreadTitle(req.ThreadTitle), SaidAt: said.UTC()}
}

// change is an operation screened by [Store.screen]: for a SET, the fact
// it sets (with its evidence, end date and category) and whether it waits
// for the user's yes.
type change struct {
	Operation
	fact    Fact
	pending bool
}

// screen turns the validated operations of an answer to req into changes,
// leaving out, and counting in res, every SET that holds a secret, ends
// before now, or (unless Config.EvidenceCheckOff) has no evidence found
// in a user turn of req.Turns. A SET of a category in
// Config.PendingCategories, named by the model or found by
// [SensitiveCategory], is marked pending. An end date more than
// MaxValidUntilDays ahead is brought back to it.
func (s *Store) screen(ops []Operation, req ExtractRequest, now time.Time, res *ExtractResult) []change {
	out := make([]change, 0, len(ops))
	last := today(now).AddDate(0, 0, MaxValidUntilDays)
	for _, op := range ops {
		c := change{Operation: op}
		if op.Op == OpSet {
			f := Fact{Key: op.Key, Value: op.Value, Evidence: op.Evidence}
			if SecretKind(op.Key, op.Value, op.Evidence) != "" {
				res.Secrets++
				continue
			}
			if op.ValidUntil != "" {
				f.ValidUntil, _ = ParseValidUntil(op.ValidUntil) // validated already
				if f.ValidUntil.Before(today(now)) {
					res.Ended++
					continue
				}
				if f.ValidUntil.After(last) {
					f.ValidUntil = last
				}
			}
			if !evidenceFound(op.Evidence, req.Turns, s.normalize) {
				if !s.cfg.EvidenceCheckOff {
					res.Unsupported++
					continue
				}
				f.Evidence = ""
			}
			f.Category, c.pending = s.categoryOf(op)
			c.fact = f
		}
		out = append(out, c)
	}
	return out
}

// categoryOf returns the special category of a SET and whether it waits
// for the user's yes: the model's category when it names one of
// [Categories], else the first the rules find ([SensitiveCategory]); it
// waits when that category, or any other the rules find, is in
// Config.PendingCategories.
func (s *Store) categoryOf(op Operation) (string, bool) {
	named := ""
	if ValidCategory(op.Category) {
		named = op.Category
	}
	if named != "" && slices.Contains(s.cfg.PendingCategories, named) {
		return named, true
	}
	if c := SensitiveCategory(op.Key, op.Value, s.cfg.PendingCategories); c != "" {
		return c, true
	}
	if named == "" {
		named = SensitiveCategory(op.Key, op.Value, Categories)
	}
	return named, false
}

// mergeCounts counts what a merge changed: SETs of facts, DELETEs, and
// SETs that now wait as pending facts.
type mergeCounts struct{ sets, deletes, pending int }

// mergeOperations applies ops in order to facts and pending: SET adds or
// replaces a fact (one unchanged in value and end date keeps its date,
// source and evidence, unless another thread [confirms] it) and drops the key's pending fact; a pending SET
// adds or replaces the key's pending fact, unless the same value is a
// fact already; DELETE removes the key's fact and pending fact. A fact it
// sets has the origin, thread and SaidAt of source. The facts are capped to
// maxFacts, dropping those updated longest ago.
func mergeOperations(facts, pending []Fact, ops []change, source Fact, now time.Time, maxFacts int) ([]Fact, []Fact, mergeCounts) {
	byKey := make(map[string]Fact, len(facts)+len(ops))
	for _, f := range facts {
		byKey[f.Key] = f
	}
	waiting := make(map[string]Fact, len(pending))
	for _, f := range pending {
		waiting[f.Key] = f
	}
	var n mergeCounts
	for _, op := range ops {
		old, had := byKey[op.Key]
		switch {
		case op.Op == OpDelete:
			_, wasPending := waiting[op.Key]
			if had || wasPending {
				delete(byKey, op.Key)
				delete(waiting, op.Key)
				n.deletes++
			}
		case op.pending:
			w, ok := waiting[op.Key]
			if had && old.Value == op.Value {
				continue
			}
			if ok && w.Value == op.Value && !confirms(w, source) && !reimports(w, source) {
				continue
			}
			waiting[op.Key] = withSource(op.fact, source, now)
			n.pending++
		default:
			delete(waiting, op.Key)
			if had && old.Value == op.Value && old.ValidUntil.Equal(op.fact.ValidUntil) && !confirms(old, source) {
				continue
			}
			byKey[op.Key] = withSource(op.fact, source, now)
			n.sets++
		}
	}
	return capFacts(sortedValues(byKey), maxFacts, ""), sortedValues(waiting), n
}

// confirms reports whether an extraction from source that repeats the
// fact f unchanged confirms it from another thread: f was learned in a
// conversation, from a thread that is not source's, or from an import. The confirming thread
// then becomes f's source (its thread, title, evidence and saying time,
// updated now), so that a fact's SourceThreadID is always the thread of
// its last setting or confirmation, and forgetting the older thread
// ([Store.ForgetThread]) leaves it. A fact set by hand or by a tool is not
// moved: it is not a thread's to forget.
func confirms(f, source Fact) bool {
	return f.Origin.Learned() && source.Origin == OriginConversation && f.SourceThreadID != source.SourceThreadID
}

// reimports reports whether an import from source that proposes the
// pending fact f unchanged moves it to itself: f was proposed by another
// import, so that the newest import shows every fact it found.
func reimports(f, source Fact) bool {
	return f.Origin == OriginImported && source.Origin == OriginImported && f.SourceThreadID != source.SourceThreadID
}

// withSource returns f with the origin, thread and saying time of source,
// updated at now.
func withSource(f, source Fact, now time.Time) Fact {
	f.Origin, f.SourceThreadID, f.SourceThreadTitle, f.UpdatedAt = source.Origin, source.SourceThreadID, source.SourceThreadTitle, now
	f.SaidAt = source.SaidAt
	return f
}

// sortedValues returns the facts of m sorted by key.
func sortedValues(m map[string]Fact) []Fact {
	out := make([]Fact, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	sortFacts(out)
	return out
}
