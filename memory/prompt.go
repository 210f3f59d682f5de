package memory

import (
	_ "embed"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultPrompt is the embedded MEMORY_USER prompt: the system prompt
// of an extraction. {facts} is replaced by the known facts, one per line;
// the transcript goes in the user message. Config.Template overrides it.
//
//go:embed prompts/memory_user.txt
var DefaultPrompt string

// RenderPrompt returns tmpl with {facts} replaced by the facts, one
// "- key: value" line each in key order, values quoted as JSON strings so
// that none spans lines or poses as instructions; "(none)" when there is
// no fact. {today} is replaced by now's date, YYYY-MM-DD in UTC, from
// which the model counts the end date of a temporary fact. {transcript},
// when present, is removed: the transcript is sent as the user message.
func RenderPrompt(tmpl string, facts []Fact, now time.Time) string {
	r := strings.NewReplacer("{facts}", factLines(facts), "{today}", now.UTC().Format(time.DateOnly),
		"{transcript}", "(see the user message)")
	return r.Replace(tmpl)
}

func factLines(facts []Fact) string {
	if len(facts) == 0 {
		return "(none)"
	}
	sorted := make([]Fact, len(facts))
	copy(sorted, facts)
	sortFacts(sorted)
	var b strings.Builder
	for i, f := range sorted {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- ")
		b.WriteString(quote(f.Key))
		b.WriteString(": ")
		b.WriteString(quote(f.Value))
	}
	return b.String()
}

// quote returns s as a JSON string: control characters, quotes and the
// characters < > & escaped, so that a stored value can neither span lines
// nor open or close a markup block.
func quote(s string) string {
	b, _ := json.Marshal(s) // A string always marshals.
	return string(b)
}

// Transcript returns the turns as a plain transcript, "User: …" and
// "Assistant: …" blocks in order, separated by a blank line: the blocks
// of [TranscriptTurns] within maxChars runes. Tool turns are counted,
// never transcribed; when the whole is over maxChars, the oldest turns
// are dropped first (and the oldest kept turn keeps the end of its text),
// so that a prompt never grows with the length of the thread.
func Transcript(turns []Turn, maxChars int) string {
	return blocks(TranscriptTurns(turns, maxChars))
}

// blocks writes turns kept by [TranscriptTurns] as transcript blocks
// joined by a blank line.
func blocks(turns []Turn) string {
	var b strings.Builder
	for i, t := range turns {
		who, text, _ := transcribed(t)
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(who + text)
	}
	return b.String()
}

// transcribed returns the label and the text of t as a transcript writes
// them, or false for a turn it leaves out: a tool turn, a turn of another
// role, a turn of only white space. The text is trimmed, and invalid UTF-8
// is replaced by U+FFFD.
func transcribed(t Turn) (who, text string, ok bool) {
	switch t.Role {
	case RoleUser:
		who = "User: "
	case RoleAssistant:
		who = "Assistant: "
	default:
		return "", "", false
	}
	text = strings.TrimSpace(strings.ToValidUTF8(t.Text, "\uFFFD"))
	return who, text, text != ""
}

// lastRunes returns the last n runes of s.
func lastRunes(s string, n int) string {
	c := utf8.RuneCountInString(s)
	if c <= n {
		return s
	}
	skip := c - n
	for i := range s {
		if skip == 0 {
			return s[i:]
		}
		skip--
	}
	return ""
}
