package memory

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Fact is one durable thing the user stated: a canonical key, a value, when
// it was last set, how it came to be stored and, for an extracted fact,
// the thread it came from (empty for a fact set by hand or through a
// tool) with that thread's title when the gateway gave one.
type Fact struct {
	Key               string
	Value             string
	UpdatedAt         time.Time
	Origin            Origin
	SourceThreadID    string
	SourceThreadTitle string
	// Evidence is, for an extracted fact, the user's own words the model
	// quoted for it: a span of a user turn of the extraction, checked
	// against it ([EvidenceFound]), at most [MaxEvidenceChars] runes. Empty
	// for a fact set by hand or by a tool: its Origin says why it is kept.
	// It is stored, exported and shown with the fact, never logged.
	Evidence string
	// ValidUntil is, for a fact the user stated as temporary, the last day
	// (midnight UTC) on which it holds; zero for a lasting fact. From the
	// next day on the fact is never read ([Fact.Expired]) and the record's
	// next whole write removes it.
	ValidUntil time.Time
	// Category is the special category of personal data the fact belongs
	// to ([Categories]), "" for none. An extracted fact of a category in
	// Config.PendingCategories waits in Record.Pending for the user's yes.
	Category string
	// SaidAt is, for an extracted fact, when the user said it: the time
	// of the extraction's request (ExtractRequest.SentAt, sent right
	// after the turn that ended), or of the extraction when that is not
	// known. It stays when a pending fact is kept, so that UpdatedAt later
	// than SaidAt is when the user kept it. Zero for a fact set by hand or
	// by a tool.
	SaidAt time.Time
	// Replaced says that the write that set Value replaced another value
	// of the key (an extraction's change or a kept pending fact), whether
	// or not that value is still in the history ([Record.History]): an
	// Undo of the change then never removes the fact ([Store.UndoChange]).
	Replaced bool
}

// Expired reports whether f is a temporary fact whose last day ended
// before now: now is on or after the day after ValidUntil (in UTC).
func (f Fact) Expired(now time.Time) bool {
	return !f.ValidUntil.IsZero() && !now.Before(f.ValidUntil.AddDate(0, 0, 1))
}

// Origin says how a fact came to be stored; it is recorded at write time.
type Origin string

// The origins of a fact.
const (
	// OriginConversation: extracted from a conversation by the cheap model.
	OriginConversation Origin = "conversation"
	// OriginManual: set by hand, through the fact API or its page.
	OriginManual Origin = "manual"
	// OriginRememberTool: set by the remember tool, which the user
	// approved in a conversation ([Store.ExecuteTool]).
	OriginRememberTool Origin = "remember_tool"
)

// Learned reports whether a fact of origin o was learned from a source the
// user can forget as a whole ([Store.ForgetThread]): a conversation, whose
// thread is its SourceThreadID, or an import, whose ID is.
func (o Origin) Learned() bool { return o == OriginConversation || o == OriginImported }

// CheckWriteOrigin returns an *Error with CodeInvalidOrigin unless o is
// an origin a write by hand may name: OriginManual or OriginRememberTool.
// A fact of OriginConversation is only written by an extraction, with its
// thread.
func CheckWriteOrigin(o Origin) error {
	if o != OriginManual && o != OriginRememberTool {
		return badRequest(CodeInvalidOrigin,
			fmt.Sprintf("the origin %q is not one of manual, remember_tool", string(o)), "")
	}
	return nil
}

// MaxThreadTitleChars is the longest title of a thread kept with a fact,
// in characters; a longer one is cut at a rune boundary.
const MaxThreadTitleChars = 60

// CleanThreadTitle returns a thread title as a fact keeps it: cleaned like
// a value (one line, trimmed) and cut to [MaxThreadTitleChars].
func CleanThreadTitle(title string) string {
	return cutRunes(cleanValue(title), MaxThreadTitleChars)
}

// Scope names the one user whose facts an operation reads or writes. Both
// IDs come from a trusted source (verified token claims, the SQS envelope)
// and are validated by [Scope.Validate] before any repository call.
type Scope struct {
	TenantID string
	UserID   string
}

// MaxIDLen is the longest tenant, user or thread ID accepted, in bytes.
const MaxIDLen = 128

// ValidID reports whether id is 1 to MaxIDLen bytes of ASCII letters, digits
// and the characters - _ . : @ | + =. The set leaves out '#' and '/', which
// the repository and the queue use as separators, so that no ID can reach
// another user's key.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-_.:@|+=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Validate returns an *Error with CodeInvalidID when either ID is not
// [ValidID].
func (s Scope) Validate() error {
	if !ValidID(s.TenantID) {
		return badRequest(CodeInvalidID, "invalid tenant ID", "")
	}
	if !ValidID(s.UserID) {
		return badRequest(CodeInvalidID, "invalid user ID", "")
	}
	return nil
}

// CanonicalKey returns the canonical form of a fact key, so that near
// duplicates name one fact: "Home City", "home_city", " home-city " and
// "HOME.CITY" are all "home_city". The form is: lower case; every run of
// characters that are neither letters nor digits becomes one '_'; no '_' at
// either end. Letters, digits and combining marks of every script are kept
// ("língua", "हिंदी"). It returns "" for a key with no letter or digit.
// A key set by hand must pass [CheckKey] first, so that the only changes
// this makes to it are case and separators.
func CanonicalKey(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	pendingSep := false
	for _, r := range key {
		if keyRune(r) {
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		pendingSep = true
	}
	return b.String()
}

// keyRune reports whether r is kept by [CanonicalKey]: a letter, a digit
// or a combining mark.
func keyRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// KeySeparators are the characters besides letters, digits and marks that
// a key set by hand may hold; [CanonicalKey] turns each run of them into
// one '_'.
const KeySeparators = " -_."

// CheckKey returns an *Error with CodeInvalidKeyChars (and a
// userMessage) when key, set or removed by hand, holds a character that
// [CanonicalKey] would drop other than [KeySeparators]: "Home City" and
// "home-city" pass and name home_city, "Bad Key!" is refused rather than
// stored quietly as bad_key.
func CheckKey(key string) error {
	for _, r := range key {
		if !keyRune(r) && !strings.ContainsRune(KeySeparators, r) {
			return badRequest(CodeInvalidKeyChars,
				fmt.Sprintf("the key holds %q: a key may hold letters, digits, spaces, '-', '_' and '.' only", r),
				"The name of a fact can hold letters, digits, spaces, hyphens, underscores and dots only.")
		}
	}
	return nil
}

// cutRunes returns s cut to at most n runes, at a rune boundary, with
// trailing white space removed.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return strings.TrimRightFunc(s[:j], unicode.IsSpace)
		}
		i++
	}
	return s
}

// cleanValue trims a value and replaces control characters (newlines, tabs
// included) by spaces, so that a value is always one line of text.
func cleanValue(v string) string {
	v = strings.TrimSpace(v)
	if !strings.ContainsFunc(v, unicode.IsControl) && utf8.ValidString(v) {
		return v
	}
	v = strings.ToValidUTF8(v, "\uFFFD")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, v))
}

// sortFacts sorts facts by key, the order every read returns.
func sortFacts(facts []Fact) {
	sort.Slice(facts, func(i, j int) bool { return facts[i].Key < facts[j].Key })
}
