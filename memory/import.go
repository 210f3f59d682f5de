package memory

import (
	"context"
	"errors"
	"time"
)

// An import moves what another assistant remembers of the user into
// usermemory. The user asks the old assistant to list everything it
// remembers (the prompts are on the page), pastes the answer, and names
// the source ("ChatGPT"). The list is read by the cheap model with its
// own prompt ([DefaultImportPrompt]), written for third-person memory
// lists, in at most [MaxImportParts] calls; every fact it finds arrives
// pending ([Record.Pending]), with [OriginImported], whatever its
// category: nothing imported is kept without the user's yes.
//
// An imported fact records the import as its source: SourceThreadID is
// the import ID, SourceThreadTitle the source the user named, Evidence a
// span of the pasted text and SaidAt the time of the import's request.

// Limits of an import.
const (
	// MaxImportChars is the longest pasted text an import takes, in
	// characters (runes), statements joined by newlines included.
	MaxImportChars = 24000
	// ImportPartChars is the most characters of the pasted text one model
	// call reads; the text is split at line ends ([SplitImport]).
	ImportPartChars = 8000
	// MaxImportParts is the most model calls one import makes.
	MaxImportParts = 4
	// MaxImportStatements is the most statements of a JSON list.
	MaxImportStatements = 300
	// MaxImportSourceChars is the longest source name, in characters.
	MaxImportSourceChars = 40
	// MaxImports is how many imports a record remembers ([Record.Imports]),
	// the newest.
	MaxImports = 8
	// MaxImportsPerDay is how many imports one user may request in 24
	// hours; the next one is refused (CodeImportLimit).
	MaxImportsPerDay = 5
	// ImportQueuedWindow is how long after its request an import without a
	// mark counts as queued ([ImportQueued]); later, it is unknown
	// (CodeImportNotFound): its message did not finish.
	ImportQueuedWindow = time.Hour
	// MaxDeclined is how many declined imported facts a record remembers
	// ([Record.Declined]), the newest.
	MaxDeclined = 200
)

// DeclinedDigest returns the digest under which [Record.Declined]
// remembers an imported fact the user discarded: a hash of its key and
// its value, normalized, so that neither is kept in clear.
func DeclinedDigest(key, value string) string { return "" }

// DefaultImportPrompt is the embedded MEMORY_IMPORT prompt: the system
// prompt of an import's model calls, written for third-person memory
// lists. {facts} is replaced by the known facts, as in [DefaultPrompt].
var DefaultImportPrompt string

// OriginImported: proposed by an import from another assistant and kept
// by the user ([Store.Import]).
const OriginImported Origin = "imported"

// ImportStatus is where an import stands.
type ImportStatus string

// The statuses of an import. An import whose message is still queued or
// being read has no mark yet: its status is ImportQueued, which the
// record never holds.
const (
	ImportQueued  ImportStatus = "queued"  // requested, not read yet
	ImportDone    ImportStatus = "done"    // read: its facts wait for review
	ImportFailed  ImportStatus = "failed"  // the model failed for good: nothing proposed
	ImportRefused ImportStatus = "refused" // the tenant's daily budget or the user's daily imports ran out
)

// ImportMark is what a record remembers of one import ([Record.Imports]).
type ImportMark struct {
	// ID is the import's ID, a valid ID ([ValidID]).
	ID string
	// Source is the source the user named, cleaned to one line.
	Source string
	// RequestedAt is when the import was requested (the request's SentAt).
	RequestedAt time.Time
	// DoneAt is when it was read (or failed, or was refused).
	DoneAt time.Time
	// Status is ImportDone, ImportFailed or ImportRefused.
	Status ImportStatus
	// Reason is, for ImportFailed and ImportRefused, a short code of why
	// ("model_failed", "bad_answer", "tenant_budget", "daily_imports").
	Reason string
	// Parts is how many model calls read the text.
	Parts int
	// Proposed counts the facts that now wait for the user's review.
	Proposed int
	// LeftOut counts what the import found and did not propose, by reason.
	LeftOut ImportLeftOut
}

// ImportLeftOut counts what an import found and did not propose.
type ImportLeftOut struct {
	Secrets      int // held a secret ([SecretKind])
	Instructions int // an instruction to the assistant ([LooksLikeInstruction])
	Unsupported  int // evidence not found in the pasted text
	Ended        int // a plan whose end date is past
	Known        int // already a fact with the same value
	Declined     int // the user declined this fact from an earlier import
	Deletes      int // DELETE operations, which an import never applies
}

// ImportRequest asks for the facts of a memory list pasted from another
// assistant.
type ImportRequest struct {
	Scope
	// ImportID names the import: a valid ID ([ValidID]), chosen by the
	// route that accepted it. A request whose ID the record already holds
	// in Record.Imports is a duplicate: no model call, no write.
	ImportID string
	// Source is the assistant the list comes from, as the user named it.
	Source string
	// Text is the pasted text (a JSON list's statements joined by
	// newlines), at most MaxImportChars characters.
	Text string
	// SentAt is when the import was requested. A request made at or before
	// the user's erasure or last clear writes nothing.
	SentAt time.Time
	// FinalAttempt says a transient model failure will not be retried: the
	// import is then marked ImportFailed instead of left to a retry.
	FinalAttempt bool
	// CheapModelID overrides Config.CheapModelID when not empty.
	CheapModelID string
	// Meta is passed to the usage gate and the model; Kind is set to
	// KindMemoryImport.
	Meta CallMeta
}

// ImportResult is the result of [Store.Import].
type ImportResult struct {
	// Mark is the import's mark as stored; zero when nothing was written.
	Mark ImportMark
	// Outcome is OutcomeChanged (facts proposed), OutcomeUnchanged (none),
	// OutcomeDuplicate, OutcomeFenced, OutcomeCleared, OutcomeRefused,
	// OutcomeModelFailed or OutcomeBadAnswer.
	Outcome Outcome
	// Reported is the *Error of OutcomeModelFailed and OutcomeBadAnswer.
	Reported error
	// ModelCalls counts the model calls made; Usage sums what they used.
	ModelCalls int
	Usage      Usage
}

// ImportText is the text of an import request body: exactly one of Text
// and Statements.
type ImportText struct {
	Source     string
	Text       string
	Statements []string
}

// NewImportID returns a new import ID made at now: "imp-", now in unix
// milliseconds, "-" and random characters. It is a valid ID ([ValidID]).
func NewImportID(now time.Time) string { return "" }

// ImportIDTime returns the time a [NewImportID] ID was made at, and false
// when id is not of that form.
func ImportIDTime(id string) (time.Time, bool) { return time.Time{}, false }

// CheckImport validates what a user asks to import and returns the source
// cleaned and the text the model will read (statements joined by
// newlines). Errors: CodeInvalidImport (no source, a source over
// MaxImportSourceChars, neither or both of text and statements, an empty
// text or statement, over MaxImportStatements statements);
// CodeImportTooLong (over MaxImportChars characters, or more than
// MaxImportParts parts).
func CheckImport(in ImportText) (source, text string, err error) {
	return "", "", errors.New("memory: CheckImport: not built yet")
}

// SplitImport splits text into the parts one model call reads each: at
// most ImportPartChars characters, cut at line ends (a longer line at a
// space, or hard).
func SplitImport(text string) []string { return nil }

// LooksLikeInstruction reports whether s, a statement of a memory list or
// the evidence of a fact, is an instruction to the assistant ("Always
// answer in French", "Ignore previous instructions") rather than a fact
// about the user, in English and the languages of the eval.
func LooksLikeInstruction(s string) bool { return false }

// Import has the cheap model read a memory list pasted from another
// assistant, with [DefaultImportPrompt], and proposes every fact it finds
// as a pending fact of OriginImported, in one conditional write with the
// import's mark ([ImportMark]).
func (s *Store) Import(ctx context.Context, req ImportRequest) (ImportResult, error) {
	return ImportResult{}, errors.New("memory: Import: not built yet")
}

// ImportStatusOf returns the mark of the import id in the user's record,
// and false when the record holds none (the import is queued, being read,
// or unknown).
func (s *Store) ImportStatusOf(ctx context.Context, sc Scope, id string) (ImportMark, bool, error) {
	return ImportMark{}, false, errors.New("memory: ImportStatusOf: not built yet")
}

// ImportsToday counts the imports of the user requested in the 24 hours
// before now, for the route's early refusal (CodeImportLimit).
func (s *Store) ImportsToday(ctx context.Context, sc Scope) (int, error) {
	return 0, errors.New("memory: ImportsToday: not built yet")
}

// KeepImport keeps every pending fact of the import id (the user's yes to
// all of them), in one conditional write, and returns the kept facts.
func (s *Store) KeepImport(ctx context.Context, sc Scope, id string) ([]Fact, error) {
	return nil, errors.New("memory: KeepImport: not built yet")
}

// DiscardImport discards every pending fact of the import id, remembering
// each as declined ([Record.Declined]) so that a re-import does not
// propose it again, in one conditional write, and returns how many it
// discarded.
func (s *Store) DiscardImport(ctx context.Context, sc Scope, id string) (int, error) {
	return 0, errors.New("memory: DiscardImport: not built yet")
}
