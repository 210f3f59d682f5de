package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// ImportStatusOf returns the mark of the import id in the user's record,
// and false when the record holds none: the ID is not the user's, or the
// import was forgotten ([MaxImports]). Errors: CodeInvalidID; a
// repository failure.
func (s *Store) ImportStatusOf(ctx context.Context, sc Scope, id string) (ImportMark, bool, error) {
	if !ValidID(id) {
		return ImportMark{}, false, badRequest(CodeInvalidID, "invalid import ID", "")
	}
	rec, err := s.read(ctx, sc)
	if err != nil {
		return ImportMark{}, false, err
	}
	i := slices.IndexFunc(rec.Imports, func(m ImportMark) bool { return m.ID == id })
	if i < 0 {
		return ImportMark{}, false, nil
	}
	return rec.Imports[i], true, nil
}

// QueueImport leaves the mark of a new import in the user's record, its
// status ImportQueued, requested at, in one conditional write: the route
// that accepts an import calls it before it sends the import's message,
// so that the ID is the user's at once. It refuses a user who requested
// MaxImportsPerDay imports in the 24 hours before at. Errors:
// CodeInvalidID; CodeInvalidImport (an empty source); CodeImportLimit;
// CodeConflict; a repository failure.
func (s *Store) QueueImport(ctx context.Context, sc Scope, id, source string, at time.Time) (ImportMark, error) {
	if err := sc.Validate(); err != nil {
		return ImportMark{}, err
	}
	mark := ImportMark{ID: id, Source: CleanImportSource(source), RequestedAt: at.UTC().Truncate(time.Millisecond), Status: ImportQueued}
	if !ValidID(id) {
		return ImportMark{}, badRequest(CodeInvalidID, "invalid import ID", "")
	}
	if mark.Source == "" {
		return ImportMark{}, badRequest(CodeInvalidImport, "an import needs a source", "")
	}
	rec, err := s.read(ctx, sc)
	if err != nil {
		return ImportMark{}, err
	}
	var limit error
	err = s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		if n := importsSince(othersThan(rec.Imports, id), mark.RequestedAt.Add(-importDay)); n >= MaxImportsPerDay {
			limit = errImportLimit(n)
			return rec, false
		}
		rec.Imports = addImport(rec.Imports, mark)
		return rec, true
	})
	if err == nil {
		err = limit
	}
	if err != nil {
		return ImportMark{}, err
	}
	return mark, nil
}

// errImportLimit returns the CodeImportLimit error of a user who
// requested n imports in the last 24 hours.
func errImportLimit(n int) error {
	return &Error{Code: CodeImportLimit, Message: fmt.Sprintf("the user requested %d imports in the last 24 hours", n),
		UserMessage: "You have imported as often as a day allows. Please try again tomorrow."}
}

// UnqueueImport removes the mark of the import id while it is still
// queued: the route calls it when the import's message could not be
// sent, so that the import neither reads as queued for ever nor counts
// against the user's daily imports. Errors: CodeInvalidID; CodeConflict;
// a repository failure.
func (s *Store) UnqueueImport(ctx context.Context, sc Scope, id string) error {
	rec, err := s.readForImport(ctx, sc, id)
	if err != nil {
		return err
	}
	return s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		if !slices.ContainsFunc(rec.Imports, func(m ImportMark) bool { return m.ID == id && m.Status == ImportQueued }) {
			return rec, false
		}
		rec.Imports = othersThan(rec.Imports, id)
		return rec, true
	})
}

// ImportsToday counts the imports of the user requested in the 24 hours
// before now, for the route's early refusal (CodeImportLimit). Errors:
// CodeInvalidID; a repository failure.
func (s *Store) ImportsToday(ctx context.Context, sc Scope) (int, error) {
	rec, err := s.read(ctx, sc)
	if err != nil {
		return 0, err
	}
	return importsSince(rec.Imports, s.now().Add(-importDay)), nil
}

// ImportReview is what the review of one import shows: its mark, its
// pending facts and, for those whose key holds a stored fact, that fact's
// value, so that a conflict shows both values.
type ImportReview struct {
	// Mark is the import's mark.
	Mark ImportMark
	// Pending are the import's pending facts a reader sees now, sorted by
	// key ([ImportPending]).
	Pending []Fact
	// Replaces maps the key of a pending fact of Pending that holds a
	// stored fact to the stored value; empty when none does.
	Replaces map[string]string
}

// ReviewImport returns the review of the import id in one repository
// read: no model call, no write. Errors: CodeInvalidID;
// CodeImportNotFound when the user's record holds no mark of id; a
// repository failure.
func (s *Store) ReviewImport(ctx context.Context, sc Scope, id string) (ImportReview, error) {
	rec, err := s.readForImport(ctx, sc, id)
	if err != nil {
		return ImportReview{}, err
	}
	out := ImportReview{Pending: ImportPending(s.pending(rec), id), Replaces: map[string]string{}}
	out.Mark = rec.Imports[slices.IndexFunc(rec.Imports, func(m ImportMark) bool { return m.ID == id })]
	held := map[string]string{}
	for _, f := range s.facts(rec) {
		held[f.Key] = f.Value
	}
	for _, f := range out.Pending {
		if v, ok := held[f.Key]; ok {
			out.Replaces[f.Key] = v
		}
	}
	return out, nil
}

// ImportPending returns the pending facts of the import id, sorted by key:
// those a reader sees now ([Store.GetFactsAndPending]) whose source is the
// import.
func ImportPending(pending []Fact, id string) []Fact {
	out := []Fact{}
	for _, f := range pending {
		if f.Origin == OriginImported && f.SourceThreadID == id {
			out = append(out, f)
		}
	}
	sortFacts(out)
	return out
}

// KeepImport keeps every pending fact of the import id (the user's yes to
// all of them), in one conditional write, and returns the kept facts,
// sorted by key: none when the import has no pending fact. Each moves to
// the facts as [Store.KeepPending] moves one, updated now, as long as
// there is room: keeping all never drops a stored fact, so that the new
// keys past MaxFacts stay pending (a single [Store.KeepPending] replaces
// the fact updated longest ago, as the user's one choice). Errors:
// CodeInvalidID; CodeImportNotFound; CodeConflict; a repository failure.
func (s *Store) KeepImport(ctx context.Context, sc Scope, id string) ([]Fact, error) {
	rec, err := s.readForImport(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	var kept []Fact
	err = s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		now := s.now()
		kept = fitting(ImportPending(s.pending(rec), id), rec.Facts, s.cfg.MaxFacts)
		if len(kept) == 0 {
			return rec, false
		}
		for i := range kept {
			kept[i].UpdatedAt = now
			rec.Pending = withoutKey(rec.Pending, kept[i].Key)
			rec.Facts = setFact(rec.Facts, kept[i])
			rec.Tombstones = withoutTombstone(rec.Tombstones, kept[i].Key)
		}
		return rec, true
	})
	if err != nil {
		return nil, err
	}
	return kept, nil
}

// fitting returns the pending facts, in key order, that facts can take
// without passing max: each that replaces a stored key, and as many new
// keys as there is room for. Keeping all at once never drops a stored
// fact; what does not fit stays pending.
func fitting(pending, facts []Fact, max int) []Fact {
	stored := make(map[string]bool, len(facts))
	for _, f := range facts {
		stored[f.Key] = true
	}
	room := max - len(facts)
	var out []Fact
	for _, f := range pending {
		if !stored[f.Key] {
			if room <= 0 {
				continue
			}
			room--
		}
		out = append(out, f)
	}
	return out
}

// DiscardImport discards every pending fact of the import id, remembering
// each as declined ([Record.Declined]) so that a re-import does not
// propose it again, in one conditional write, and returns how many it
// discarded (0 when the import has no pending fact). Errors:
// CodeInvalidID; CodeImportNotFound; CodeConflict; a repository failure.
func (s *Store) DiscardImport(ctx context.Context, sc Scope, id string) (int, error) {
	rec, err := s.readForImport(ctx, sc, id)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.saveLoop(ctx, sc, rec, func(rec Record) (Record, bool) {
		gone := ImportPending(s.pending(rec), id)
		if n = len(gone); n == 0 {
			return rec, false
		}
		now := s.now()
		for _, f := range gone {
			rec.Pending = withoutKey(rec.Pending, f.Key)
			rec.Declined = addDeclined(rec.Declined, f, now)
		}
		return rec, true
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// readForImport validates the scope and an import ID and reads the
// record, or returns CodeImportNotFound when it holds no mark of id: the
// ID is not the user's (made up, another user's or tenant's), or was
// forgotten.
func (s *Store) readForImport(ctx context.Context, sc Scope, id string) (Record, error) {
	if !ValidID(id) {
		return Record{}, badRequest(CodeInvalidID, "invalid import ID", "")
	}
	rec, err := s.read(ctx, sc)
	if err != nil {
		return Record{}, err
	}
	if !slices.ContainsFunc(rec.Imports, func(m ImportMark) bool { return m.ID == id }) {
		return Record{}, ErrImportNotFound
	}
	return rec, nil
}

// ErrImportNotFound is the CodeImportNotFound error of an import ID the
// user's record holds no mark of.
var ErrImportNotFound = &Error{Code: CodeImportNotFound, Message: "no such import",
	UserMessage: "This import is not known: it is not yours, or it is too old to show."}

// addDeclined returns a copy of declined with the digest of f at now, at
// most MaxDeclined digests, the newest (ties by digest).
func addDeclined(declined map[string]time.Time, f Fact, now time.Time) map[string]time.Time {
	out := maps.Clone(declined)
	if out == nil {
		out = map[string]time.Time{}
	}
	out[DeclinedDigest(f.Key, f.Value)] = now
	if len(out) <= MaxDeclined {
		return out
	}
	digests := slices.Collect(maps.Keys(out))
	slices.SortFunc(digests, func(a, b string) int {
		if c := out[b].Compare(out[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, d := range digests[MaxDeclined:] {
		delete(out, d)
	}
	return out
}
