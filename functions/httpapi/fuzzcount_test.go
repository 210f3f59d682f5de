package httpapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
)

// TestBenchmarksCountTheFuzzTargets holds the number of fuzz targets
// BENCHMARKS.md gives for this package to the Fuzz functions of its test
// files.
func TestBenchmarksCountTheFuzzTargets(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
				n++
			}
		}
	}
	docblock.CheckFigures(t, filepath.Join("..", "..", "BENCHMARKS.md"), docblock.Figures{
		"table tests, ([a-z0-9]+) fuzz targets \\(`functions/httpapi`\\)": docblock.InWords(n),
	})
}
