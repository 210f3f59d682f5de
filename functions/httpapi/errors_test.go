package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// errorsDoc is the document whose table codeTable writes, from the module's
// root.
const errorsDoc = "docs/errors.md"

// codePackages are the directories, from the module's root, whose Code*
// constants are the service's error codes.
var codePackages = []string{"memory", "functions/httpapi"}

// root is the module's root: go test runs a package's tests in its
// directory, two below it.
var root = filepath.Join("..", "..")

// TestEveryCodeKeepsItsStatus holds codeTable to the code and the wire:
// every Code* constant of codePackages has one entry, under its own name
// and number, and a line in testdata/statuses.txt, the status each code
// answered with before the statuses left the core; each code answers with
// that status, and a problem that says its message only below 500 (and for
// CodeUnavailable).
func TestEveryCodeKeepsItsStatus(t *testing.T) {
	consts := map[string]int64{}
	for _, dir := range codePackages {
		readCodeConstants(t, filepath.Join(root, dir), consts)
	}
	table := map[string]codeEntry{}
	byCode := map[int64]string{}
	for _, e := range codeTable {
		if other, ok := byCode[e.code]; ok {
			t.Errorf("codeTable: %s and %s share the code %d", other, e.name, e.code)
		}
		byCode[e.code], table[e.name] = e.name, e
		if v, ok := consts[e.name]; !ok || v != e.code {
			t.Errorf("codeTable lists %s as %d; no Code* constant of %v is so (found %d, %t)", e.name, e.code, codePackages, v, ok)
		}
	}
	wire := readStatuses(t)
	for name, v := range consts {
		if _, ok := table[name]; !ok {
			t.Errorf("%s (%d) has no entry in codeTable", name, v)
		}
		if w, ok := wire[name]; !ok || w.code != v {
			t.Errorf("%s (%d) has no line of its own in testdata/statuses.txt", name, v)
		}
	}
	for name, w := range wire {
		if _, ok := consts[name]; !ok {
			t.Errorf("testdata/statuses.txt lists %s, which is not a constant of %v", name, codePackages)
		}
		err := fmt.Errorf("wrapped: %w", &memory.Error{Code: w.code, Message: "m", UserMessage: "u"})
		want := Problem{Type: TypePrefix + strconv.FormatInt(w.code, 10), Title: http.StatusText(w.status),
			Status: w.status, Code: w.code, Detail: "m", UserMessage: "u"}
		if w.status >= 500 && w.code != CodeUnavailable {
			want.Detail, want.UserMessage = "internal error", ""
		}
		if got := StatusOf(err); got != w.status {
			t.Errorf("%s answers %d; it answered %d", name, got, w.status)
		}
		if got := ProblemFor(err); got != want {
			t.Errorf("%s: ProblemFor = %+v, want %+v", name, got, want)
		}
	}
}

// wireStatus is one line of testdata/statuses.txt.
type wireStatus struct {
	code   int64
	status int
}

// readStatuses returns the lines of testdata/statuses.txt by constant name.
func readStatuses(t *testing.T) map[string]wireStatus {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "statuses.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]wireStatus{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var w wireStatus
		var name string
		if _, err := fmt.Sscanf(line, "%d %d %s", &w.code, &w.status, &name); err != nil {
			t.Fatalf("testdata/statuses.txt: %q: %v", line, err)
		}
		if _, dup := out[name]; dup {
			t.Errorf("testdata/statuses.txt lists %s twice", name)
		}
		out[name] = w
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readCodeConstants adds to consts, as "pkg.Name", every constant named
// Code* of the non-test files of the package in dir. A code must be an
// integer literal.
func readCodeConstants(t *testing.T, dir string, consts map[string]int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range constSpecs(f) {
			for i, n := range spec.Names {
				if len(n.Name) < 5 || !strings.HasPrefix(n.Name, "Code") || n.Name[4] < 'A' || n.Name[4] > 'Z' {
					continue
				}
				lit, _ := spec.Values[i].(*ast.BasicLit)
				if lit == nil || lit.Kind != token.INT {
					t.Errorf("%s: %s is not an integer literal; write codes as literals", fset.Position(n.Pos()), n.Name)
					continue
				}
				v, err := strconv.ParseInt(lit.Value, 0, 64)
				if err != nil {
					t.Errorf("%s: %s: %v", fset.Position(n.Pos()), n.Name, err)
					continue
				}
				consts[f.Name.Name+"."+n.Name] = v
			}
		}
	}
}

// constSpecs returns the constant declarations of f that give values.
func constSpecs(f *ast.File) []*ast.ValueSpec {
	var out []*ast.ValueSpec
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				if vs := s.(*ast.ValueSpec); len(vs.Values) == len(vs.Names) {
					out = append(out, vs)
				}
			}
		}
	}
	return out
}

// TestErrorsDoc holds docs/errors.md's table of codes to codeTable and its
// example to the problem the code answers for a value too long; with
// -docs.write it writes them.
func TestErrorsDoc(t *testing.T) {
	path := filepath.Join(root, errorsDoc)
	docblock.Check(t, path, "error-codes", codesMarkdown())
	docblock.Check(t, path, "error-example", exampleMarkdown(t))
}

// codesMarkdown returns the table of docs/errors.md.
func codesMarkdown() string {
	rows := []string{"| code | status | constant | meaning |", "|---|---|---|---|"}
	for _, e := range codeTable {
		meaning := e.meaning
		if e.origin {
			meaning = "*(origin)* " + meaning
		}
		rows = append(rows, fmt.Sprintf("| %d | %d | %s | %s |", e.code, e.status, e.name, meaning))
	}
	return strings.Join(rows, "\n")
}

// exampleValueChars is the length of the value of docs/errors.md's example.
const exampleValueChars = 412

// exampleMarkdown returns the problem the service answers when a value of
// exampleValueChars characters is set by hand under the default caps, as
// docs/errors.md shows it.
func exampleMarkdown(t *testing.T) string {
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Put(context.Background(), memory.Scope{TenantID: "acme", UserID: "u-123"}, memory.FactInput{Key: "bio", Value: strings.Repeat("a", exampleValueChars)})
	b, err := json.MarshalIndent(ProblemFor(err), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return "```json\n" + string(b) + "\n```"
}
