package harness

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/memory"
)

// Problems of a kept fact's evidence, as [QuoteProblem] names them.
const (
	QuoteMissing   = "no evidence"
	QuoteAssistant = "quotes an assistant or tool turn, not the user"
	QuoteNotFound  = "not in any turn of the conversation"
)

// QuoteProblem returns "" when evidence is a span of one user turn of
// turns, and otherwise why not: QuoteMissing, QuoteAssistant (found only in
// a turn of another role) or QuoteNotFound. It is the harness's own check,
// written apart from the store's (memory.EvidenceFound) so that the two
// hold each other: the text is compared as words, after Unicode NFKC
// normalisation and case folding, every character that is not a letter,
// digit or mark separating words, and a character of a script written
// without spaces (Han, kana) being a word of its own. An ellipsis ("…" or
// "...") stands for left-out words: the parts around it must come in that
// order in the same turn.
func QuoteProblem(evidence string, turns []gold.Turn) string {
	var parts [][]string
	for _, p := range strings.Split(strings.ReplaceAll(evidence, "...", "…"), "…") {
		if w := words(p); len(w) > 0 {
			parts = append(parts, w)
		}
	}
	if len(parts) == 0 {
		return QuoteMissing
	}
	problem := QuoteNotFound
	for _, t := range turns {
		if !partsInOrder(words(t.Text), parts) {
			continue
		}
		if t.Role == memory.RoleUser {
			return ""
		}
		problem = QuoteAssistant
	}
	return problem
}

// words returns the words of s, normalised and case-folded.
func words(s string) []string {
	s = cases.Fold().String(norm.NFKC.String(s))
	var out []string
	var w strings.Builder
	flush := func() {
		if w.Len() > 0 {
			out = append(out, w.String())
			w.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			w.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// partsInOrder reports whether each of parts is a run of text's words,
// each after the one before it.
func partsInOrder(text []string, parts [][]string) bool {
	for _, p := range parts {
		i := indexRun(text, p)
		if i < 0 {
			return false
		}
		text = text[i+len(p):]
	}
	return true
}

// indexRun returns where run starts in text, or -1.
func indexRun(text, run []string) int {
	for i := 0; i+len(run) <= len(text); i++ {
		if slices.Equal(text[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}
