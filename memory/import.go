package memory

import (
	_ "embed"
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
	// ImportStatementChars is the longest statement one model call reads,
	// in characters: a longer line is cut into statements, at a sentence's
	// end when one is close enough, else at a space ([SplitImport]).
	ImportStatementChars = 250
	// ImportOperationsPerStatement is how many operations an import's
	// answer may carry per statement it reads ("Lives in Porto and works
	// at Acme" is two facts).
	ImportOperationsPerStatement = 2
	// ImportMaxOperations bounds the operations of one import call's
	// answer: DefaultMaxOperations, the most whose largest answer at the
	// template's largest caps the bedrock adapter can ask for in one
	// request (bedrock's TestLargestAnswerFits holds it). A conversation's
	// Config.MaxOperations plays no part in an import.
	ImportMaxOperations = DefaultMaxOperations
	// ImportPartStatements is the most statements one model call reads, so
	// that [ImportOperationsPerStatement] operations each stay within
	// ImportMaxOperations.
	ImportPartStatements = ImportMaxOperations / ImportOperationsPerStatement
	// ImportPartChars is the most characters of the pasted text one model
	// call reads: ImportPartStatements statements at their longest.
	ImportPartChars = ImportPartStatements * ImportStatementChars
	// MaxImportStatements is the most statements an import reads: of a
	// JSON list, or lines (and pieces of long lines) of a text.
	MaxImportStatements = 300
	// MaxImportParts is the most model calls one import makes: its
	// statements, ImportPartStatements a call. Each call is asked of the
	// tenant's daily budget ([UsageGate]) as one call.
	MaxImportParts = MaxImportStatements / ImportPartStatements
	// ImportParallelCalls is how many model calls of one import the
	// extractor makes at once ([WithImportCalls]), so that MaxImportParts
	// calls of a few seconds each end within its Lambda timeout.
	ImportParallelCalls = 8
	// MaxImportSourceChars is the longest source name, in characters.
	MaxImportSourceChars = 40
	// MaxImports is how many imports a record remembers ([Record.Imports]),
	// the newest.
	MaxImports = 8
	// MaxImportsPerDay is how many imports one user may request in 24
	// hours; the next one is refused (CodeImportLimit).
	MaxImportsPerDay = 5
	// MaxDeclined is how many declined imported facts a record remembers
	// ([Record.Declined]), the newest.
	MaxDeclined = 200
)

// DefaultImportPrompt is the embedded MEMORY_IMPORT prompt: the system
// prompt of an import's model calls, written for third-person memory
// lists. {facts} is replaced by the known facts, as in [DefaultPrompt].
// Config.ImportPrompt overrides it.
//
//go:embed prompts/memory_import.txt
var DefaultImportPrompt string

// OriginImported: proposed by an import from another assistant and kept
// by the user ([Store.Import]).
const OriginImported Origin = "imported"

// ImportStatus is where an import stands.
type ImportStatus string

// The statuses of an import. The route that accepts an import writes its
// mark ImportQueued ([Store.QueueImport]) before it sends the message;
// the read of the message makes it done, failed or refused.
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
	// Status is ImportQueued, ImportDone, ImportFailed or ImportRefused.
	Status ImportStatus
	// Reason is, for ImportFailed and ImportRefused, a short code of why
	// ("model_failed", "bad_answer", "tenant_budget", "daily_imports").
	Reason string
	// Parts is how many model calls read the text; Statements how many
	// statements they read ([SplitImport]).
	Parts      int
	Statements int
	// Proposed counts the facts that now wait for the user's review.
	Proposed int
	// LeftOut counts what the import found and did not propose, by reason.
	LeftOut ImportLeftOut
}

// ImportLeftOut counts what an import read and did not propose, by
// reason. Every statement is accounted for: an operation's fate is
// counted by the reason it was left out, and a statement no operation
// came from (the operations name it by their evidence) is counted as a
// secret, an instruction, or Skipped.
type ImportLeftOut struct {
	Secrets      int // held a secret ([SecretKind])
	Instructions int // an instruction to the assistant ([LooksLikeInstruction])
	Unsupported  int // evidence not found in the pasted text
	Ended        int // a plan whose end date is past
	Known        int // already a fact with the same value, or set again by a later statement
	Declined     int // the user declined this fact from an earlier import, or removed its key since
	Deletes      int // DELETE operations, which an import never applies
	// Skipped counts the statements no operation came from: not a fact
	// about the user, or not understood.
	Skipped int
	// OverCap counts the facts past the most an import may leave waiting
	// (Config.MaxImportedPending).
	OverCap int
	// NoRoom counts the facts that did not fit the record's room
	// ([ItemBudget]) when they were proposed, or were dropped from the
	// pending facts later for want of room ([RecordBytes]).
	NoRoom int
}

// Total returns how many the counts of l add up to.
func (l ImportLeftOut) Total() int {
	return l.Secrets + l.Instructions + l.Unsupported + l.Ended + l.Known + l.Declined + l.Deletes + l.Skipped + l.OverCap + l.NoRoom
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
