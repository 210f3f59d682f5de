package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/localnet"
)

// TestSkipNeeds holds docs/testing.md's table of what a test may need
// (block skip-needs) to the tests' skips: every file that skips a test or
// a package (t.Skip, testenv.Need, a TestMain that prints "skipped:")
// names, in its messages, a need of the table, and every need of the table
// is named by a file that skips. A new kind of skip fails until docs/testing.md
// says what it needs.
func TestSkipNeeds(t *testing.T) {
	root, err := localnet.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _, err := docblock.Split(string(readme), "skip-needs")
	if err != nil {
		t.Fatalf("docs/testing.md: %v", err)
	}
	var needs []string
	for _, line := range strings.Split(block, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(line, "|---") || strings.TrimSpace(cells[1]) == "need" {
			continue
		}
		needs = append(needs, strings.TrimSpace(cells[1]))
	}
	named := map[string]bool{}
	files := skippingFiles(t, root)
	if len(files) == 0 {
		t.Fatal("no file skips a test: the search is broken")
	}
	for path, text := range files {
		found := false
		for _, n := range needs {
			if strings.Contains(strings.ToLower(text), strings.ToLower(n)) {
				named[n], found = true, true
			}
		}
		if !found {
			t.Errorf("%s skips tests for a need docs/testing.md's table (skip-needs) does not list", path)
		}
	}
	for _, n := range needs {
		if !named[n] {
			t.Errorf("docs/testing.md lists the need %q, which no skipping file names", n)
		}
	}
}

// skippingFiles returns the Go files under root, outside internal/testenv
// (which skips for its callers) and this command (which reads skips), that
// skip a test or a package, each with its string literals.
func skippingFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" ||
			path == filepath.Join(root, "internal", "testenv") || path == filepath.Join(root, "scripts", "skips")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		var text strings.Builder
		skips := false
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				switch n.Sel.Name {
				case "Skip", "Skipf", "SkipNow", "Need":
					skips = true
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
					skips = skips || strings.Contains(s, "skipped:")
					text.WriteString(s + "\n")
				}
			}
			return true
		})
		if skips {
			rel, _ := filepath.Rel(root, path)
			out[rel] = text.String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
