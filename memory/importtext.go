package memory

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// importIDPrefix starts every [NewImportID] ID.
const importIDPrefix = "imp-"

// importIDRandChars is how many random characters end a [NewImportID] ID
// (base32, 5 bits each: 80 bits).
const importIDRandChars = 16

// DeclinedDigestLen is the length of a [DeclinedDigest]: 16 characters of
// unpadded base64url, 96 bits of SHA-256.
const DeclinedDigestLen = 16

// DeclinedDigest returns the digest under which [Record.Declined]
// remembers an imported fact the user discarded: a hash of its key and
// its value, normalized, so that neither is kept in clear.
//
// The key is taken in its canonical form ([CanonicalKey]), the value
// compared as the evidence check compares text (case, width, punctuation
// and spacing folded), so that "Lisbon" and "lisbon." decline together.
func DeclinedDigest(key, value string) string {
	sum := sha256.Sum256([]byte(CanonicalKey(key) + "\x00" + strings.TrimSpace(normalizeForMatch(cleanValue(value)))))
	return base64.RawURLEncoding.EncodeToString(sum[:DeclinedDigestLen*6/8])
}

// NewImportID returns a new import ID made at now: "imp-", now in unix
// milliseconds, "-" and random characters. It is a valid ID ([ValidID]).
func NewImportID(now time.Time) string {
	return importIDPrefix + strconv.FormatInt(now.UnixMilli(), 10) + "-" + strings.ToLower(rand.Text()[:importIDRandChars])
}

// ImportIDTime returns the time a [NewImportID] ID was made at, and false
// when id is not of that form.
func ImportIDTime(id string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(id, importIDPrefix)
	if !ok || !ValidID(id) {
		return time.Time{}, false
	}
	ms, tail, ok := strings.Cut(rest, "-")
	if !ok || tail == "" || ms == "" || ms[0] == '+' || ms[0] == '-' {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(n).UTC(), true
}

// CleanImportSource returns the source of an import as a mark and its
// facts keep it: one line, trimmed, cut to MaxImportSourceChars.
func CleanImportSource(source string) string {
	return cutRunes(cleanValue(source), MaxImportSourceChars)
}

// CheckImport validates what a user asks to import and returns the source
// cleaned and the text the model will read (statements joined by
// newlines). Errors: CodeInvalidImport (no source, a source over
// MaxImportSourceChars, neither or both of text and statements, an empty
// text or statement, over MaxImportStatements statements);
// CodeImportTooLong (over MaxImportChars characters, or more than
// MaxImportStatements statements once long lines are cut).
func CheckImport(in ImportText) (source, text string, err error) {
	invalid := func(msg, user string) error { return badRequest(CodeInvalidImport, msg, user) }
	source = cleanValue(in.Source)
	switch {
	case source == "":
		return "", "", invalid("the import names no source", "Say which assistant the list comes from.")
	case utf8.RuneCountInString(source) > MaxImportSourceChars:
		return "", "", invalid(fmt.Sprintf("the source is over %d characters", MaxImportSourceChars),
			fmt.Sprintf("The name of the assistant can have at most %d characters.", MaxImportSourceChars))
	case in.Text != "" && in.Statements != nil:
		return "", "", invalid("give either text or statements, not both", "")
	case in.Text == "" && in.Statements == nil:
		return "", "", invalid("give text or statements", "Paste what the other assistant remembers.")
	}
	if in.Statements != nil {
		if text, err = joinStatements(in.Statements); err != nil {
			return "", "", err
		}
	} else {
		text = cleanImportText(in.Text)
	}
	if strings.TrimSpace(text) == "" {
		return "", "", invalid("the text is empty", "Paste what the other assistant remembers.")
	}
	if n := utf8.RuneCountInString(text); n > MaxImportChars {
		return "", "", &Error{Code: CodeImportTooLong, Message: fmt.Sprintf("the text has %d characters, over %d", n, MaxImportChars),
			UserMessage: fmt.Sprintf("This is too long to import at once: at most %d characters (it has %d). Import it in pieces.", MaxImportChars, n)}
	}
	if n := len(ImportStatements(text)); n > MaxImportStatements {
		return "", "", &Error{Code: CodeImportTooLong, Message: fmt.Sprintf("the text makes %d statements, over %d", n, MaxImportStatements),
			UserMessage: fmt.Sprintf("This is too long to import at once: at most %d lines. Import it in pieces.", MaxImportStatements)}
	}
	return source, text, nil
}

// joinStatements returns the statements of a JSON list, each cleaned to
// one line, joined by newlines, or a CodeInvalidImport error.
func joinStatements(statements []string) (string, error) {
	if len(statements) == 0 {
		return "", badRequest(CodeInvalidImport, "the list of statements is empty", "Paste what the other assistant remembers.")
	}
	if len(statements) > MaxImportStatements {
		return "", badRequest(CodeInvalidImport, fmt.Sprintf("%d statements, over %d", len(statements), MaxImportStatements),
			fmt.Sprintf("At most %d statements can be imported at once.", MaxImportStatements))
	}
	lines := make([]string, len(statements))
	for i, st := range statements {
		if lines[i] = cleanValue(st); lines[i] == "" {
			return "", badRequest(CodeInvalidImport, fmt.Sprintf("statement %d is empty", i), "")
		}
	}
	return strings.Join(lines, "\n"), nil
}

// cleanImportText returns pasted text with its line ends made "\n", other
// control characters (tabs but for) made spaces, invalid UTF-8 replaced,
// trailing spaces of each line and blank lines at both ends removed.
func cleanImportText(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text)
	text = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, text)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// ImportStatements returns the statements of text, in order: each
// non-blank line, trimmed, a line over ImportStatementChars characters
// cut into pieces of at most that many, after the last sentence end
// (". ", "! ", "? ", "; ") in the second half of a piece, else after its
// last space, else hard.
func ImportStatements(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, piece := range cutLine(strings.TrimSpace(line), ImportStatementChars) {
			if piece = strings.TrimSpace(piece); piece != "" {
				out = append(out, piece)
			}
		}
	}
	return out
}

// SplitImport splits text into the parts one model call reads each: its
// statements ([ImportStatements]), ImportPartStatements a part (the last
// may hold fewer), joined by newlines.
func SplitImport(text string) []string {
	stmts := ImportStatements(text)
	var parts []string
	for len(stmts) > 0 {
		n := min(len(stmts), ImportPartStatements)
		parts = append(parts, strings.Join(stmts[:n], "\n"))
		stmts = stmts[n:]
	}
	return parts
}

// cutLine returns line in pieces of at most max runes, each cut as
// [ImportStatements] says.
func cutLine(line string, max int) []string {
	var out []string
	for utf8.RuneCountInString(line) > max {
		end, runes := 0, 0 // byte index after max runes
		for end < len(line) && runes < max {
			_, size := utf8.DecodeRuneInString(line[end:])
			end += size
			runes++
		}
		cut := cutAt(line[:end])
		out = append(out, strings.TrimRight(line[:cut], " "))
		line = strings.TrimLeft(line[cut:], " ")
	}
	return append(out, line)
}

// cutAt returns the byte index after which the piece head of a long line
// ends: after its last sentence end in its second half, else after its
// last space, else len(head).
func cutAt(head string) int {
	best := -1
	for _, end := range []string{". ", "! ", "? ", "; "} {
		best = max(best, strings.LastIndex(head, end))
	}
	if best >= len(head)/2 {
		return best + 2
	}
	if i := strings.LastIndexByte(head, ' '); i > 0 {
		return i + 1
	}
	return len(head)
}
