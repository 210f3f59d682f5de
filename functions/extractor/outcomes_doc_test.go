package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/httpapitest"
)

// TestOutcomeTableListsEveryOutcome holds the outcome table of
// docs/extractor.md ("Outcomes and retry policy") to the code: every
// memory.Outcome constant and every outcome of this package has a row,
// and every row names an outcome the code has. The constants are read
// from the source, so that a new outcome without a row fails.
func TestOutcomeTableListsEveryOutcome(t *testing.T) {
	root := httpapitest.Root(t)
	code := map[string]string{} // outcome → where it is declared
	for v, name := range outcomeConsts(t, filepath.Join(root, "memory"), func(s *ast.ValueSpec, _ string) bool {
		id, ok := s.Type.(*ast.Ident)
		return ok && id.Name == "Outcome"
	}) {
		code[v] = "memory." + name
	}
	for v, name := range outcomeConsts(t, ".", func(_ *ast.ValueSpec, name string) bool {
		return strings.HasPrefix(name, "outcome")
	}) {
		code[v] = name
	}
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

// outcomeConsts returns the string constants (or variables) of the
// non-test files of dir that keep accepts, by value.
func outcomeConsts(t *testing.T, dir string, keep func(s *ast.ValueSpec, name string) bool) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, path := range slices.DeleteFunc(files, func(p string) bool { return strings.HasSuffix(p, "_test.go") }) {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			for i := 0; ok && i < min(len(vs.Names), len(vs.Values)); i++ {
				lit, isLit := vs.Values[i].(*ast.BasicLit)
				if isLit && lit.Kind == token.STRING && keep(vs, vs.Names[i].Name) {
					v, _ := strconv.Unquote(lit.Value)
					out[v] = vs.Names[i].Name
				}
			}
			return !ok
		})
	}
	if len(out) == 0 {
		t.Fatalf("no outcome constants in %s", dir)
	}
	return out
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
