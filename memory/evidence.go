package memory

import (
	"strings"
)

// MaxEvidenceChars is the longest evidence kept with a fact, in runes: a
// longer quote is cut to it before it is checked, so that what is stored
// is still a span of the user's words.
const MaxEvidenceChars = 160

// minEvidenceChars is the fewest letters and digits an evidence must hold
// to count: a quote of one character ("I", "a") is found in almost any
// turn and proves nothing, while a two-letter answer ("ok", "ja", "sí") to
// the assistant's question is the user's word.
const minEvidenceChars = 2

// EvidenceFound reports whether evidence is a span of the text of one
// user turn among turns, leniently: both are compared after case folding
// and width folding (full-width Latin letters and digits are the ASCII
// ones), with every run of punctuation, symbols and white space taken as
// one space, so that "I’m  in PORTO!" is found in "i'm in Porto." An
// ellipsis ("…" or "...") in the evidence may stand for left-out words:
// its parts must then be found in that order in the same turn. Turns of
// another role (assistant, tool) never count. Evidence with fewer than 2
// letters or digits is never found. A [Store] given [WithNormalizer]
// (Unicode NFKC, say) applies it to both sides first.
func EvidenceFound(evidence string, turns []Turn) bool {
	return evidenceFound(evidence, turns, nil)
}

// evidenceFound is EvidenceFound with normalize, when not nil, applied to
// the evidence and to the turns first.
func evidenceFound(evidence string, turns []Turn, normalize func(string) string) bool {
	if normalize != nil {
		evidence = normalize(evidence)
	}
	parts := evidenceParts(evidence)
	if parts == nil {
		return false
	}
	for _, t := range turns {
		if t.Role != RoleUser {
			continue
		}
		text := t.Text
		if normalize != nil {
			text = normalize(text)
		}
		if inOrder(" "+normalizeForMatch(text)+" ", parts) {
			return true
		}
	}
	return false
}

// evidenceParts returns the normalised parts of evidence between its
// ellipses, each padded with a space at both ends so that it matches whole
// words only, or nil when they hold fewer than minEvidenceChars letters
// and digits in all.
func evidenceParts(evidence string) []string {
	raw := strings.Split(strings.ReplaceAll(evidence, "...", "…"), "…")
	var parts []string
	n := 0
	for _, p := range raw {
		p = normalizeForMatch(p)
		if p == "" {
			continue
		}
		n += strings.Count(p, "") - 1 - strings.Count(p, " ")
		parts = append(parts, " "+p+" ")
	}
	if n < minEvidenceChars {
		return nil
	}
	return parts
}

// inOrder reports whether parts occur in text one after the other, in
// order, without overlapping.
func inOrder(text string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(text, p)
		if i < 0 {
			return false
		}
		text = text[i+len(p)-1:] // keep the trailing space: the next part starts with one
	}
	return true
}

// normalizeForMatch returns s case-folded and width-folded, with every run
// of characters that are neither letters, digits nor marks replaced by one
// space, and trimmed.
func normalizeForMatch(s string) string {
	s = strings.ToLower(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if r >= '\uFF01' && r <= '\uFF5E' { // full-width ASCII
			r -= 0xFEE0
		}
		if keyRune(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// cleanEvidence returns the evidence as a fact keeps it: one line, trimmed,
// and, when over MaxEvidenceChars runes, cut to them at the end of a word,
// so that what is kept is still whole words of the quote.
func cleanEvidence(e string) string {
	e = cleanValue(e)
	cut := cutRunes(e, MaxEvidenceChars)
	if cut == e {
		return e
	}
	if next := []rune(e[len(cut):]); len(next) > 0 && keyRune(next[0]) {
		if i := strings.LastIndexFunc(cut, func(r rune) bool { return !keyRune(r) }); i > 0 {
			cut = strings.TrimRightFunc(cut[:i], func(r rune) bool { return !keyRune(r) })
		}
	}
	return cut
}
