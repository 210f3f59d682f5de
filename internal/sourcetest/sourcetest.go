// Package sourcetest reads declarations from the repository's Go source
// for the tests that hold a doc or the template to the code, so that a
// new constant is seen without a list in the test.
package sourcetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Files parses, with mode, the Go files of dir that are not tests, by
// path, failing t on a file that does not parse.
func Files(t testing.TB, dir string, mode parser.Mode) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, mode)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	return files
}

// StringConsts returns the string constants (or variables) of the
// non-test files of dir that keep accepts, by value, each with the name
// that declares it.
func StringConsts(t testing.TB, dir string, keep func(s *ast.ValueSpec, name string) bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range Files(t, dir, 0) {
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
	return out
}

// Outcomes returns the outcomes the extractor reports, by value, each
// with where it is declared: the memory.Outcome constants of memory
// ("memory." and the name) and the outcome… constants of
// functions/extractor, below the module root. It fails t when either
// package has none: the reader would be out of date.
func Outcomes(t testing.TB, root string) map[string]string {
	t.Helper()
	store := StringConsts(t, filepath.Join(root, "memory"), func(s *ast.ValueSpec, _ string) bool {
		id, ok := s.Type.(*ast.Ident)
		return ok && id.Name == "Outcome"
	})
	extractor := StringConsts(t, filepath.Join(root, "functions", "extractor"), func(_ *ast.ValueSpec, name string) bool {
		return strings.HasPrefix(name, "outcome")
	})
	if len(store) == 0 || len(extractor) == 0 {
		t.Fatalf("read %d outcomes from memory and %d from functions/extractor: the reader is out of date", len(store), len(extractor))
	}
	out := map[string]string{}
	for v, name := range store {
		out[v] = "memory." + name
	}
	for v, name := range extractor {
		out[v] = name
	}
	return out
}
