package memory

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of [Config], chosen for a prompt that stays small: every fact
// enters every prompt of the user.
const (
	DefaultMaxFacts           = 30
	DefaultMaxFactChars       = 200
	DefaultExtractEveryTurns  = 6
	DefaultTranscriptChars    = 12000
	DefaultContextChars       = 1500
	DefaultMaxThreads         = 64
	DefaultMaxConflictRetries = 8
	DefaultMaxPending         = 10
	// DefaultMaxOperations bounds an answer's operations when
	// MaxOperations is not set (and never above 2 × MaxFacts): the most
	// operations whose largest answer at the template's largest caps
	// ([LargestAnswer] with keys and values of 200 characters) the bedrock
	// adapter can still ask for in one request of at most
	// bedrock.MaxTokensUpperBound, so that no valid answer is cut. An extraction
	// reads the turns since the last one (ExtractEveryTurns, 6 by
	// default): 20 operations is more than three changes a turn.
	// bedrock's TestLargestAnswerFits holds the figure.
	DefaultMaxOperations = 20
	// DefaultPendingLifetime is how long a pending fact waits for the
	// user's answer before it is dropped: a week, so that a user who opens
	// the page weekly sees every one.
	DefaultPendingLifetime = 7 * 24 * time.Hour
)

// DefaultPendingCategories are the categories that wait for the user's
// yes when Config.PendingCategories is nil: all of [Categories].
var DefaultPendingCategories = Categories

// DeletionFenceLifetime is how long a tombstone and a ClearedAt fence the
// extractions requested before them: past it, no message sent before them
// can still arrive, so the store drops them at its next whole-record
// write. A message can live 4 days in the extraction queue and, since a
// FIFO queue's dead-letter queue restarts a message's retention when it
// moves there, 14 more days in the dead-letter queue: 18 days, and one of
// margin. It is the default lifetime of the erasure fence too.
const DeletionFenceLifetime = 19 * 24 * time.Hour

// Bounds of [Config] fields, checked by [Config.Validate]. The four
// exported ones are read outside the package (the settings, the producer
// and the record-size tests).
const (
	// MaxFactsUpperBound is the largest Config.MaxFacts.
	MaxFactsUpperBound = 500
	// MaxFactCharsUpperBound is the largest Config.MaxFactChars.
	MaxFactCharsUpperBound = 2000
	// TranscriptCharsLowerBound is the smallest Config.TranscriptChars.
	TranscriptCharsLowerBound = 500
	// PendingLifetimeUpperBound is the longest Config.PendingLifetime.
	PendingLifetimeUpperBound = 30 * 24 * time.Hour

	maxFactsLowerBound          = 1
	maxFactCharsLowerBound      = 16
	extractEveryTurnsUpperBound = 1000
	transcriptCharsUpperBound   = 200000
	contextCharsLowerBound      = 100
	contextCharsUpperBound      = 20000
	maxThreadsUpperBound        = 1000
	maxPendingUpperBound        = 50
	pendingLifetimeLowerBound   = time.Hour

	// ItemBudget is the largest size, in bytes, of a record as the store
	// writes it whole ([RecordBytes]): 350 KB, leaving an eighth of
	// DynamoDB's 400 KB item limit ([MaxStoredRecordBytes]) to spare.
	// The part of a record never trimmed is held within it by
	// [Config.Validate] ([Config.MaxRecordBytes]); the history and the
	// pending facts of imports take the room its real size leaves.
	ItemBudget = 350 * 1024
)

// Per-item overheads used by [Config.MaxRecordBytes], in bytes: the
// attribute names and the numbers and strings a stored fact or thread
// watermark carries besides its key and value, rounded up. A watermark is
// the string "<turn count>:<unix ms>", or "<digest>:<unix ms>" for an
// uncounted extraction (a [TurnsDigest] of TurnsDigestLen bytes), under a
// key of at most ThreadKeyLen bytes: 1 byte for the map entry, and two
// parts of at most 20 characters each (an int64 with its sign) around the
// colon, and a third after another colon, the thread's forget fence
// ([ThreadMark].ForgottenAt).
const (
	factOverhead      = 16 + 8*8 + MaxIDLen + len(OriginRememberTool) + len(CategoryUnionMembership) + 4*MaxThreadTitleChars + 4*MaxEvidenceChars
	threadOverhead    = 1 + 20 + 1 + 20 + 1 + 20
	tombstoneOverhead = 16 + 8
	recordOverhead    = 1024
)

// Bounds of the import marks and declined digests of a record, in bytes,
// counted by [Config.MaxRecordBytes]: a mark is a list entry of a map of
// ten short attributes, an ID of MaxIDLen bytes, a source of
// MaxImportSourceChars runes of 4 bytes, five numbers and ten counts of
// at most 20 digits, a status and a reason of at most 16 bytes; a declined
// digest is a map entry of DeclinedDigestLen bytes and a number.
const (
	importMarkBytes    = 1 + 3 + 10*(1+3) + MaxIDLen + 4*MaxImportSourceChars + 5*11 + 10*21 + 2*16
	declinedEntryBytes = 1 + DeclinedDigestLen + 11
	importsBytes       = 2*(3+len("declined")) + MaxImports*importMarkBytes + MaxDeclined*declinedEntryBytes
)

// A digest watermark fits the room threadOverhead keeps for a turn count.
var _ [20 - TurnsDigestLen]struct{}

// Config is the configuration of a [Store]. The zero value of a field means
// its default; [Config.Validate] checks the bounds once, at start.
type Config struct {
	// ExtractionDisabled switches extraction off. The stored facts are
	// still read into every prompt and still editable.
	ExtractionDisabled bool
	// MaxFacts is the most facts a user has; a write over it drops the
	// facts updated longest ago, never the one it writes.
	MaxFacts int
	// MaxFactChars is the most characters (runes) of a key and of a value.
	// A fact set by hand over it is refused; an extracted one is cut.
	MaxFactChars int
	// ExtractEveryTurns is the beat of extraction after the first answer.
	ExtractEveryTurns int
	// TranscriptChars is the budget of the transcript sent to the model;
	// the oldest turns are dropped first to stay within it.
	TranscriptChars int
	// ContextChars is the budget of the context turns sent before the new
	// ones (see [ContextTurns]), apart from TranscriptChars; the oldest
	// context turns are dropped first. docs/extractor.md says how its
	// default was chosen from its token cost.
	ContextChars int
	// MaxOperations bounds the operations one answer may carry; an answer
	// with more is refused whole. Default: DefaultMaxOperations, or
	// 2 × MaxFacts when that is less.
	MaxOperations int
	// MaxThreads is the most per-thread extraction watermarks kept; the
	// ones extracted longest ago are dropped first.
	MaxThreads int
	// MaxTombstones is the most tombstones of removed facts kept; past it,
	// the oldest fold into ClearedAt, which then fences every key up to
	// the newest folded removal. Default: MaxFacts.
	MaxTombstones int
	// MaxConflictRetries bounds how often a write is re-merged after a
	// concurrent writer won; past it the write fails with CodeConflict.
	MaxConflictRetries int
	// CheapModelID is the model used when a request names none.
	CheapModelID string
	// Prompt overrides the embedded MEMORY_USER prompt. It must hold
	// the placeholder {facts}; the transcript is sent as the user message.
	Prompt string
	// ImportPrompt overrides the embedded MEMORY_IMPORT prompt
	// ([DefaultImportPrompt]) of an import ([Store.Import]). It must hold
	// the placeholder {facts}; {maxOperations} is replaced by
	// MaxOperations; the list is sent as the user message.
	ImportPrompt string
	// EvidenceCheckOff switches the evidence check off: an extracted SET
	// is then kept without a quote found in a user turn (its evidence is
	// kept only when found). On by default.
	EvidenceCheckOff bool
	// PendingCategories are the special categories ([Categories]) whose
	// extracted facts wait for the user's yes. Nil means
	// DefaultPendingCategories; an empty, non-nil slice lets every fact in
	// at once.
	PendingCategories []string
	// MaxPending is the most pending facts a user has; over it the oldest
	// are dropped. Default: DefaultMaxPending.
	MaxPending int
	// PendingLifetime is how long a pending fact waits for an answer.
	// Default: DefaultPendingLifetime.
	PendingLifetime time.Duration
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxFacts == 0 {
		c.MaxFacts = DefaultMaxFacts
	}
	if c.MaxFactChars == 0 {
		c.MaxFactChars = DefaultMaxFactChars
	}
	if c.ExtractEveryTurns == 0 {
		c.ExtractEveryTurns = DefaultExtractEveryTurns
	}
	if c.TranscriptChars == 0 {
		c.TranscriptChars = DefaultTranscriptChars
	}
	if c.ContextChars == 0 {
		c.ContextChars = DefaultContextChars
	}
	if c.MaxOperations == 0 {
		c.MaxOperations = min(DefaultMaxOperations, 2*c.MaxFacts)
	}
	if c.MaxTombstones == 0 {
		c.MaxTombstones = c.MaxFacts
	}
	if c.MaxThreads == 0 {
		c.MaxThreads = DefaultMaxThreads
	}
	if c.MaxConflictRetries == 0 {
		c.MaxConflictRetries = DefaultMaxConflictRetries
	}
	if c.Prompt == "" {
		c.Prompt = DefaultPrompt
	}
	if c.ImportPrompt == "" {
		c.ImportPrompt = DefaultImportPrompt
	}
	if c.PendingCategories == nil {
		c.PendingCategories = DefaultPendingCategories
	}
	if c.MaxPending == 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.PendingLifetime == 0 {
		c.PendingLifetime = DefaultPendingLifetime
	}
	return c
}

// MaxRecordBytes is an upper bound of the size of what a stored record
// holds that the store never trims to fit [ItemBudget]: every key and
// value at MaxFactChars runes of 4 bytes, every fact from a thread ID of
// MaxIDLen bytes and a title of MaxThreadTitleChars runes of 4 bytes,
// with evidence of MaxEvidenceChars runes of 4 bytes, the longest origin
// and category and an end date, MaxFacts facts and MaxPending pending
// facts, MaxThreads watermarks and [MaxTails] unread tails under keys of
// [ThreadKeyLen] bytes (the store keys both by [ThreadKey]; a tail is
// stored as a watermark is), MaxTombstones tombstones with keys of
// MaxFactChars runes of 4 bytes, [MaxImports] import marks and
// [MaxDeclined] declined digests. [Config.Validate] holds it within
// ItemBudget.
//
// The facts' history and the pending facts of imports take the room left
// by the record's real size ([RecordBytes]), at the time it is written:
// see [MaxHistory] and [Config.MaxImportedPending].
func (c Config) MaxRecordBytes() int {
	c = c.WithDefaults()
	perThread := ThreadKeyLen + threadOverhead
	perTombstone := 4*c.MaxFactChars + tombstoneOverhead
	return recordOverhead + (c.MaxFacts+c.MaxPending)*c.factBytes() + (c.MaxThreads+MaxTails)*perThread + c.MaxTombstones*perTombstone + importsBytes
}

// MaxImportedPending is the most pending facts proposed by imports a user
// has ([Store.Import]), apart from the MaxPending learned in
// conversations: MaxFacts, so that every fact of an import can be kept.
// Each must also fit the record's real size within [ItemBudget] when it
// is written; one that does not is counted as left out for want of room
// ([ImportLeftOut].NoRoom).
func (c Config) MaxImportedPending() int { return c.WithDefaults().MaxFacts }

// factBytes is the bound of one stored fact or pending fact under c.
func (c Config) factBytes() int { return 2*4*c.MaxFactChars + factOverhead }

// Validate returns a *Error with CodeInvalidConfig naming the first field
// outside its bounds, or nil. It checks c as [Config.WithDefaults] fills it.
func (c Config) Validate() error {
	c = c.WithDefaults()
	bad := func(format string, args ...any) error {
		return &Error{Code: CodeInvalidConfig,
			Message: "invalid config: " + fmt.Sprintf(format, args...)}
	}
	switch {
	case c.MaxFacts < maxFactsLowerBound || c.MaxFacts > MaxFactsUpperBound:
		return bad("maxFacts %d is outside [%d, %d]", c.MaxFacts, maxFactsLowerBound, MaxFactsUpperBound)
	case c.MaxFactChars < maxFactCharsLowerBound || c.MaxFactChars > MaxFactCharsUpperBound:
		return bad("maxFactChars %d is outside [%d, %d]", c.MaxFactChars, maxFactCharsLowerBound, MaxFactCharsUpperBound)
	case c.ExtractEveryTurns < 1 || c.ExtractEveryTurns > extractEveryTurnsUpperBound:
		return bad("extractEveryTurns %d is outside [1, %d]", c.ExtractEveryTurns, extractEveryTurnsUpperBound)
	case c.TranscriptChars < TranscriptCharsLowerBound || c.TranscriptChars > transcriptCharsUpperBound:
		return bad("transcriptChars %d is outside [%d, %d]", c.TranscriptChars, TranscriptCharsLowerBound, transcriptCharsUpperBound)
	case c.ContextChars < contextCharsLowerBound || c.ContextChars > contextCharsUpperBound:
		return bad("contextChars %d is outside [%d, %d]", c.ContextChars, contextCharsLowerBound, contextCharsUpperBound)
	case c.MaxOperations < 1 || c.MaxOperations > 4*c.MaxFacts:
		return bad("maxOperations %d is outside [1, 4×maxFacts]", c.MaxOperations)
	case c.MaxThreads < 1 || c.MaxThreads > maxThreadsUpperBound:
		return bad("maxThreads %d is outside [1, %d]", c.MaxThreads, maxThreadsUpperBound)
	case c.MaxTombstones < 1 || c.MaxTombstones > MaxFactsUpperBound:
		return bad("maxTombstones %d is outside [1, %d]", c.MaxTombstones, MaxFactsUpperBound)
	case c.MaxConflictRetries < 1 || c.MaxConflictRetries > 100:
		return bad("maxConflictRetries %d is outside [1, 100]", c.MaxConflictRetries)
	case !strings.Contains(c.Prompt, "{facts}"):
		return bad("the prompt must hold the placeholder {facts}")
	case !strings.Contains(c.ImportPrompt, "{facts}"):
		return bad("the import prompt must hold the placeholder {facts}")
	case c.MaxPending < 1 || c.MaxPending > maxPendingUpperBound:
		return bad("maxPending %d is outside [1, %d]", c.MaxPending, maxPendingUpperBound)
	case c.PendingLifetime < pendingLifetimeLowerBound || c.PendingLifetime > PendingLifetimeUpperBound:
		return bad("pendingLifetime %s is outside [%s, %s]", c.PendingLifetime, pendingLifetimeLowerBound, PendingLifetimeUpperBound)
	}
	for _, cat := range c.PendingCategories {
		if !ValidCategory(cat) {
			return bad("pending category %q is not one of %s", cat, strings.Join(Categories, ", "))
		}
	}
	if n := c.MaxRecordBytes(); n > ItemBudget {
		return bad("the facts, pending facts, watermarks and tombstones of a full record could reach %d bytes, over the budget of %d: lower maxFacts (%d), maxFactChars (%d), maxThreads (%d), maxTombstones (%d) or maxPending (%d)",
			n, ItemBudget, c.MaxFacts, c.MaxFactChars, c.MaxThreads, c.MaxTombstones, c.MaxPending)
	}
	return nil
}
