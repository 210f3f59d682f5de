package funclen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/funclen"
	"github.com/usermemory/usermemory/internal/localnet"
)

// TestNoLongFunctions fails on every function or method outside tests
// that spans more than funclen.MaxLines lines.
func TestNoLongFunctions(t *testing.T) {
	root, err := localnet.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			seen++
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > funclen.MaxLines {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: %s is %d lines, over %d: split it into named steps", rel, fd.Name.Name, n, funclen.MaxLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 100 {
		t.Fatalf("read %d functions: the walk missed the module", seen)
	}
}
