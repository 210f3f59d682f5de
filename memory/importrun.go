package memory

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The reasons of a failed or refused import ([ImportMark].Reason).
const (
	ImportReasonModelFailed  = "model_failed"
	ImportReasonBadAnswer    = "bad_answer"
	ImportReasonTenantBudget = "tenant_budget"
	ImportReasonDailyImports = "daily_imports"
	// ImportReasonExtractionOff: extraction is switched off
	// (Config.ExtractionDisabled), so no model reads the list.
	ImportReasonExtractionOff = "extraction_off"
)

// importDay is the window of [MaxImportsPerDay].
const importDay = 24 * time.Hour

// Import has the cheap model read a memory list pasted from another
// assistant, with [DefaultImportPrompt], and proposes every fact it finds
// as a pending fact of OriginImported, in one conditional write with the
// import's mark ([ImportMark]).
//
// The text is split ([SplitImport]); each part is one model call, asked
// of the usage gate first (Kind KindMemoryImport), with the known facts in
// the prompt and the part as the one user turn, up to [WithImportCalls]
// at once. Its operations, at most [ImportOperations] of the part's
// statements, are validated as an extraction's are. A statement no
// operation came from (by its evidence) is counted in the mark's LeftOut
// as a secret, an instruction or Skipped. Every SET is screened as an
// extraction screens it, the part being the user's words (secrets, past
// end dates and evidence not in the part are left out), then an
// instruction to the assistant ([LooksLikeInstruction]) is left out, and
// every DELETE. What stays is proposed pending, whatever its category,
// unless its key holds that value already (Known) or the user declined it
// from an earlier import ([Record.Declined]), up to
// Config.MaxImportedPending (the rest is OverCap). The counts go in the
// mark.
//
// A request whose ID the record holds marked other than queued (the
// route's [Store.QueueImport]) is a duplicate; the queued mark is
// replaced by the read's, and a request without a mark is read all the
// same. One made at or before the user's erasure or last clear is
// fenced: no call, no write. When extraction is switched off, past
// MaxImportsPerDay imports in 24 hours (its own mark aside), or when the
// gate refuses a call, the import is marked refused and nothing is
// proposed. A failed
// call writes nothing (the queue retries) unless req.FinalAttempt, when
// the import is marked failed, as it is at once for an answer that is not
// the expected structure. Errors: CodeInvalidID, CodeInvalidImport,
// CodeImportTooLong; CodeConflict; a repository failure.
func (s *Store) Import(ctx context.Context, req ImportRequest) (ImportResult, error) {
	req.Source = CleanImportSource(req.Source)
	if err := req.check(); err != nil {
		return ImportResult{}, err
	}
	rec, err := s.repo.Get(ctx, req.Scope)
	if err != nil {
		return ImportResult{}, repoError(err)
	}
	if o, stop := importSkip(rec, req); stop {
		return ImportResult{Outcome: o}, nil
	}
	now := s.now()
	mark := ImportMark{ID: req.ImportID, Source: req.Source, RequestedAt: req.requestedAt(now), Status: ImportDone}
	if s.cfg.ExtractionDisabled {
		mark.Status, mark.Reason = ImportRefused, ImportReasonExtractionOff
		return s.writeImport(ctx, rec, req, mark, nil, ImportResult{Outcome: OutcomeDisabled})
	}
	if importsSince(othersThan(rec.Imports, req.ImportID), mark.RequestedAt.Add(-importDay)) >= MaxImportsPerDay {
		mark.Status, mark.Reason = ImportRefused, ImportReasonDailyImports
		return s.writeImport(ctx, rec, req, mark, nil, ImportResult{Outcome: OutcomeRefused})
	}
	parts := SplitImport(req.Text)
	mark.Parts = len(parts)
	res := ImportResult{}
	var changes []change
	reads := s.readParts(ctx, rec, req, parts)
	for _, read := range reads {
		res.ModelCalls += read.calls
		res.Usage = res.Usage.plus(read.usage)
	}
	for i, read := range reads {
		if read.stop {
			mark.LeftOut = ImportLeftOut{} // nothing is proposed: the status says why
			s.stopImport(req, read.err, &res, &mark)
			if mark.Status == ImportDone { // a transient failure, retried
				return res, nil
			}
			return s.writeImport(ctx, rec, req, mark, nil, res)
		}
		stmts := strings.Split(parts[i], "\n")
		mark.Statements += len(stmts)
		mark.LeftOut.add(s.unread(read.ops, stmts))
		changes = append(changes, s.screenImport(read.ops, parts[i], now, &mark.LeftOut)...)
	}
	return s.writeImport(ctx, rec, req, mark, changes, res)
}

// check returns an *Error when the scope, the ID, the source or the text
// of req is not valid.
func (req ImportRequest) check() error {
	if err := req.Scope.Validate(); err != nil {
		return err
	}
	if !ValidID(req.ImportID) {
		return badRequest(CodeInvalidID, "invalid import ID", "")
	}
	if req.Source == "" || strings.TrimSpace(req.Text) == "" {
		return badRequest(CodeInvalidImport, "an import needs a source and a text", "")
	}
	if utf8.RuneCountInString(req.Text) > MaxImportChars || len(ImportStatements(req.Text)) > MaxImportStatements {
		return badRequest(CodeImportTooLong, "the import's text is over the limits of one import", "")
	}
	return nil
}

// requestedAt returns when req was requested: SentAt, or now when it is
// zero or ahead of now.
func (req ImportRequest) requestedAt(now time.Time) time.Time {
	if req.SentAt.IsZero() || req.SentAt.After(now) {
		return now
	}
	return req.SentAt.UTC()
}

// importSkip reports whether rec makes the import req moot: the user was
// erased or cleared their facts at or after the time req was made, or
// the record holds req's mark already, read (not queued).
func importSkip(rec Record, req ImportRequest) (Outcome, bool) {
	switch {
	case fences(rec.ErasedAt, req.SentAt):
		return OutcomeFenced, true
	case fences(rec.ClearedAt, req.SentAt):
		return OutcomeCleared, true
	case slices.ContainsFunc(rec.Imports, func(m ImportMark) bool { return m.ID == req.ImportID && m.Status != ImportQueued }):
		return OutcomeDuplicate, true
	}
	return "", false
}

// othersThan returns the marks but that of the import id.
func othersThan(marks []ImportMark, id string) []ImportMark {
	return slices.DeleteFunc(slices.Clone(marks), func(m ImportMark) bool { return m.ID == id })
}

// importsSince counts the marks of imports requested after since.
func importsSince(marks []ImportMark, since time.Time) int {
	n := 0
	for _, m := range marks {
		if m.RequestedAt.After(since) {
			n++
		}
	}
	return n
}

// partRead is what the model call of one part of an import gave: its
// validated operations, or stop with the call's error (nil when the gate
// refused it), and the calls made and their usage.
type partRead struct {
	ops   []Operation
	stop  bool
	err   error
	calls int
	usage Usage
}

// readParts reads the parts of an import, at most s.importCalls at once,
// and returns what each gave, in the order of parts. Once a part stops
// the import, the parts not started yet are not read.
func (s *Store) readParts(ctx context.Context, rec Record, req ImportRequest, parts []string) []partRead {
	reads := make([]partRead, len(parts))
	sem := make(chan struct{}, max(s.importCalls, 1))
	var wg sync.WaitGroup
	var stopped atomic.Bool
	for i, part := range parts {
		sem <- struct{}{}
		if stopped.Load() {
			reads[i] = partRead{stop: true, err: context.Canceled}
			<-sem
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			reads[i] = s.readPart(ctx, rec, req, part)
			if reads[i].stop {
				stopped.Store(true)
			}
		}()
	}
	wg.Wait()
	return reads
}

// readPart asks the gate and makes the model call of one part.
func (s *Store) readPart(ctx context.Context, rec Record, req ImportRequest, part string) partRead {
	meta := s.importMeta(req)
	if s.gate != nil && !s.gate.Allow(ctx, meta) {
		return partRead{stop: true}
	}
	var used Usage
	ops, err := s.callImportModel(ctx, meta, rec, part, &used)
	if s.gate != nil {
		s.gate.Record(ctx, meta, used)
	}
	return partRead{ops: ops, stop: err != nil, err: err, calls: 1, usage: used}
}

// stopImport records in res and mark why the read of a part stopped the
// import: the gate refused a call (err nil), or the model failed. mark
// says why (refused, or failed), or is still ImportDone for a transient
// failure left to a retry.
func (s *Store) stopImport(req ImportRequest, err error, res *ImportResult, mark *ImportMark) {
	if err == nil {
		mark.Status, mark.Reason = ImportRefused, ImportReasonTenantBudget
		res.Outcome = OutcomeRefused
		return
	}
	var er ExtractResult
	er.reportModelFailure(err)
	res.Outcome, res.Reported = er.Outcome, er.Reported
	switch {
	case er.Outcome == OutcomeBadAnswer:
		mark.Status, mark.Reason = ImportFailed, ImportReasonBadAnswer
	case req.FinalAttempt:
		mark.Status, mark.Reason = ImportFailed, ImportReasonModelFailed
	}
}

// ImportOperations returns the most operations the answer of one import
// call that reads statements statements may carry:
// ImportOperationsPerStatement a statement, at most ImportMaxOperations.
func ImportOperations(statements int) int {
	return min(max(statements, 1)*ImportOperationsPerStatement, ImportMaxOperations)
}

// unread returns the left-out counts of the statements of a part that no
// operation of ops came from: an operation comes from the first statement
// its evidence is found in, as the evidence check finds it in the part. A
// statement no operation came from holds a secret, an instruction to the
// assistant, or nothing the model read as a fact about the user
// (Skipped).
func (s *Store) unread(ops []Operation, stmts []string) ImportLeftOut {
	read := make([]bool, len(stmts))
	for _, op := range ops {
		for i, st := range stmts {
			if evidenceFound(op.Evidence, []Turn{{Role: RoleUser, Text: st}}, s.normalize) {
				read[i] = true
				break
			}
		}
	}
	var l ImportLeftOut
	for i, st := range stmts {
		switch {
		case read[i]:
		case SecretKind("", st, st) != "":
			l.Secrets++
		case LooksLikeInstruction(st):
			l.Instructions++
		default:
			l.Skipped++
		}
	}
	return l
}

// add adds the counts of o to l.
func (l *ImportLeftOut) add(o ImportLeftOut) {
	l.Secrets += o.Secrets
	l.Instructions += o.Instructions
	l.Unsupported += o.Unsupported
	l.Ended += o.Ended
	l.Known += o.Known
	l.Declined += o.Declined
	l.Deletes += o.Deletes
	l.Skipped += o.Skipped
	l.OverCap += o.OverCap
	l.NoRoom += o.NoRoom
}

// plus returns the sum of two usages.
func (u Usage) plus(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + o.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens}
}

// importMeta returns the CallMeta of an import's model calls: the
// request's, of KindMemoryImport, with its IDs (the import ID as the
// thread's) and the model it names or the config's.
func (s *Store) importMeta(req ImportRequest) CallMeta {
	meta := req.Meta
	meta.Kind = KindMemoryImport
	meta.TenantID, meta.UserID, meta.ThreadID = req.TenantID, req.UserID, req.ImportID
	meta.ModelID = req.CheapModelID
	if meta.ModelID == "" {
		meta.ModelID = s.cfg.CheapModelID
	}
	return meta
}

// importListOpen and importListClose mark the pasted list in the user
// message of an import's model call.
const (
	importListOpen  = "<memory_list>"
	importListClose = "</memory_list>"
)

// ImportTranscript returns the user message of the model call that reads
// part: the part between the list's markers, any marker inside it
// defused.
func ImportTranscript(part string) string {
	part = strings.NewReplacer(importListOpen, "<memory list>", importListClose, "</memory list>").Replace(part)
	return importListOpen + "\n" + part + "\n" + importListClose
}

// callImportModel renders the import prompt, calls the model on part and
// validates its answer as [Store.callModel] does, with the import's own
// bound: [ImportOperations] of the part's statements.
func (s *Store) callImportModel(ctx context.Context, meta CallMeta, rec Record, part string, usage *Usage) ([]Operation, error) {
	maxOps := ImportOperations(strings.Count(part, "\n") + 1)
	system := strings.ReplaceAll(s.cfg.ImportPrompt, "{maxOperations}", strconv.Itoa(maxOps))
	return s.callWith(ctx, meta, RenderPrompt(system, s.facts(rec), s.now()), ImportTranscript(part), maxOps, usage)
}

// screenImport returns the changes an import proposes of the operations
// read from part, all pending, counting in left what it leaves out: every
// DELETE, what [Store.screen] leaves out (the part being the user's turn)
// and every SET whose value or evidence is an instruction.
func (s *Store) screenImport(ops []Operation, part string, now time.Time, left *ImportLeftOut) []change {
	sets := make([]Operation, 0, len(ops))
	for _, op := range ops {
		if op.Op == OpDelete {
			left.Deletes++
			continue
		}
		sets = append(sets, op)
	}
	var er ExtractResult
	screened := s.screen(sets, ExtractRequest{Turns: []Turn{{Role: RoleUser, Text: part}}}, now, &er)
	left.Secrets += er.Secrets
	left.Ended += er.Ended
	left.Unsupported += er.Unsupported
	out := screened[:0]
	for _, c := range screened {
		if LooksLikeInstruction(c.Value) || LooksLikeInstruction(c.Operation.Evidence) {
			left.Instructions++
			continue
		}
		c.pending = true
		out = append(out, c)
	}
	return out
}

// writeImport writes the import's mark and, for an import read, its
// proposals, in one conditional write, merging again on a conflict, and
// returns res with the mark as stored and the outcome. A fence or a
// duplicate found at write time stops it with that outcome.
func (s *Store) writeImport(ctx context.Context, rec Record, req ImportRequest, mark ImportMark, changes []change, res ImportResult) (ImportResult, error) {
	var stored ImportMark
	stopped := Outcome("")
	err := s.saveLoop(ctx, req.Scope, rec, func(rec Record) (Record, bool) {
		if o, stop := importSkip(rec, req); stop {
			stopped = o
			return rec, false
		}
		now := s.now()
		m := mark
		m.DoneAt = now
		if m.Status == ImportDone {
			rec = s.propose(rec, req, m.RequestedAt, changes, &m, now)
		}
		rec.Imports = addImport(rec.Imports, m)
		stored = m
		return rec, true
	})
	if err != nil {
		return ImportResult{}, err
	}
	switch {
	case stopped != "":
		return ImportResult{Outcome: stopped, ModelCalls: res.ModelCalls, Usage: res.Usage}, nil
	case stored.Status == ImportDone && stored.Proposed > 0:
		res.Outcome = OutcomeChanged
	case stored.Status == ImportDone:
		res.Outcome = OutcomeUnchanged
	}
	res.Mark = stored
	return res, nil
}

// propose returns rec with the changes of an import proposed as pending
// facts of OriginImported from it, leaving out, and counting in m, a SET
// whose key holds its value already or that a later SET of the import
// sets again (Known), one that the user declined, or of a key removed
// after the import was requested (Declined), those past
// Config.MaxImportedPending (OverCap), and those that do not fit the
// record's room (NoRoom, [Store.leaveOutNoRoom]).
// m.Proposed is the number of the import's pending facts after the caps.
func (s *Store) propose(rec Record, req ImportRequest, said time.Time, changes []change, m *ImportMark, now time.Time) Record {
	held := make(map[string]string, len(rec.Facts))
	for _, f := range s.facts(rec) {
		held[f.Key] = f.Value
	}
	kept := make([]change, 0, len(changes))
	for _, c := range changes {
		if v, ok := held[c.Key]; ok && v == c.Value {
			m.LeftOut.Known++
			continue
		}
		if _, ok := rec.Declined[DeclinedDigest(c.Key, c.Value)]; ok {
			m.LeftOut.Declined++
			continue
		}
		kept = append(kept, c)
	}
	kept, removed := forgetRemoved(kept, rec.Tombstones, req.SentAt)
	m.LeftOut.Declined += removed
	keys := map[string]bool{}
	for _, c := range kept {
		keys[c.Key] = true
	}
	m.LeftOut.Known += len(kept) - len(keys) // set again by a later statement
	source := Fact{Origin: OriginImported, SourceThreadID: req.ImportID, SourceThreadTitle: req.Source, SaidAt: said}
	rec.Facts, rec.Pending, _ = mergeOperations(rec.Facts, rec.Pending, kept, source, now, s.cfg.MaxFacts)
	rec.Pending = s.capPending(s.liveFacts(rec.Pending, true, now))
	m.LeftOut.OverCap += max(len(keys)-countImported(rec.Pending, req.ImportID), 0)
	rec.Pending = s.leaveOutNoRoom(rec, req.ImportID, &m.LeftOut)
	m.Proposed = countImported(rec.Pending, req.ImportID)
	return rec
}

// countImported returns how many of pending the import id proposed.
func countImported(pending []Fact, id string) int {
	n := 0
	for _, f := range pending {
		if f.Origin == OriginImported && f.SourceThreadID == id {
			n++
		}
	}
	return n
}

// leaveOutNoRoom returns the pending facts of rec without those of the
// import id that do not fit the room of a whole write by the record's
// real size ([Config.FitRecord]) with its history left out (the history
// yields to them at the write), the last by key first, counting each in
// left.NoRoom.
func (s *Store) leaveOutNoRoom(rec Record, id string, left *ImportLeftOut) []Fact {
	rec.History = nil
	over := s.cfg.overBudget(rec)
	if over <= 0 {
		return rec.Pending
	}
	out := slices.Clone(rec.Pending)
	for i := len(out) - 1; i >= 0 && over > 0; i-- {
		if f := out[i]; f.Origin == OriginImported && f.SourceThreadID == id {
			over -= storedFactBytes(f)
			out = slices.Delete(out, i, i+1)
			left.NoRoom++
		}
	}
	return out
}

// addImport returns marks with m first in place of any mark of its ID (its
// queued mark), at most MaxImports.
func addImport(marks []ImportMark, m ImportMark) []ImportMark {
	out := append([]ImportMark{m}, othersThan(marks, m.ID)...)
	return out[:min(len(out), MaxImports)]
}
