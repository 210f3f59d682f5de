package docblock

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Figures maps a pattern to the value the code gives for the figure a
// document writes by hand, outside a block: the pattern's first group
// captures the figure as the document writes it. White space in the
// document is read as single spaces, so a pattern may span a line break.
type Figures map[string]any

// CheckFigures holds the figures of the document at path to the code:
// each pattern must match, and each match, thousands separators dropped,
// must equal fmt.Sprint of its value. The next figure a document states
// is one more line in the caller's map.
func CheckFigures(t testing.TB, path string, figures Figures) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range Mismatches(string(raw), figures) {
		t.Errorf("%s: %s", path, msg)
	}
}

// Mismatches returns what is wrong with the figures of doc, in the order
// of the patterns: a pattern that matches nothing, or a match that says
// another value than the code.
func Mismatches(doc string, figures Figures) []string {
	doc = strings.Join(strings.Fields(doc), " ")
	var out []string
	for _, pattern := range slices.Sorted(maps.Keys(figures)) {
		want := fmt.Sprint(figures[pattern])
		ms := regexp.MustCompile(pattern).FindAllStringSubmatch(doc, -1)
		if len(ms) == 0 {
			out = append(out, fmt.Sprintf("no figure matches %q (the code gives %s)", pattern, want))
		}
		for _, m := range ms {
			if got := strings.ReplaceAll(m[1], ",", ""); got != want {
				out = append(out, fmt.Sprintf("%q says %s; the code gives %s", m[0], m[1], want))
			}
		}
	}
	return out
}
