package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/internal/sourcetest"
)

// TestOutcomeTableListsEveryOutcome holds the outcome table of
// docs/extractor.md ("Outcomes and retry policy") to the code: every
// memory.Outcome constant and every outcome of this package has a row,
// and every row names an outcome the code has. The constants are read
// from the source, so that a new outcome without a row fails.
func TestOutcomeTableListsEveryOutcome(t *testing.T) {
	root := httpapitest.Root(t)
	code := sourcetest.Outcomes(t, root) // outcome → where it is declared
	doc := outcomeTable(t, filepath.Join(root, "docs", "extractor.md"))
	for v, name := range code {
		if !slices.Contains(doc, v) {
			t.Errorf("docs/extractor.md's outcome table has no row for %q (%s)", v, name)
		}
	}
	for _, v := range doc {
		if code[v] == "" {
			t.Errorf("docs/extractor.md's outcome table names %q, which no constant declares", v)
		}
	}
}

// outcomeTable returns the outcomes the first column of the table under
// "### Outcomes and retry policy" names in backquotes.
func outcomeTable(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "\n### Outcomes and retry policy\n")
	if !ok {
		t.Fatalf("%s: no section \"Outcomes and retry policy\"", path)
	}
	quoted := regexp.MustCompile("`([a-z_]+)`")
	var names []string
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		if rows > 0 && !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(line, "|---") {
			continue
		}
		rows++
		for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: the outcome table names no outcome", path)
	}
	return names
}
