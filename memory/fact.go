package memory

import (
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Fact is one durable thing the user stated: a canonical key, a value, when
// it was last set and, for an extracted fact, the thread it came from
// (empty for a fact set by hand or through a tool).
type Fact struct {
	Key            string
	Value          string
	UpdatedAt      time.Time
	SourceThreadID string
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

// Validate returns a 400 *Error with CodeInvalidID when either ID is not
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
// either end. Letters and digits of every script are kept ("língua").
// It returns "" for a key with no letter or digit.
func CanonicalKey(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	pendingSep := false
	for _, r := range key {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
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
