package sourcetest_test

import (
	"go/ast"
	"os"
	"path/filepath"
	"testing"

	"github.com/usermemory/usermemory/internal/sourcetest"
	"github.com/usermemory/usermemory/memory"
)

// TestStringConsts reads a package written here: the kept string
// constants and variables by value, not the others, not a test file's.
func TestStringConsts(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":      "package a\n\ntype Kind string\n\nconst (\n\tKindA Kind = \"a\"\n\tKindB Kind = \"b\"\n\tother = \"o\"\n\tn = 3\n)\n\nvar KindC Kind = \"c\"\n",
		"a_test.go": "package a\n\nconst KindT Kind = \"t\"\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := sourcetest.StringConsts(t, dir, func(s *ast.ValueSpec, _ string) bool {
		id, ok := s.Type.(*ast.Ident)
		return ok && id.Name == "Kind"
	})
	want := map[string]string{"a": "KindA", "b": "KindB", "c": "KindC"}
	if len(got) != len(want) {
		t.Errorf("StringConsts = %v, want %v", got, want)
	}
	for v, name := range want {
		if got[v] != name {
			t.Errorf("StringConsts[%q] = %q, want %q", v, got[v], name)
		}
	}
}

// TestOutcomes checks the reader against the code: memory's outcomes are
// found under the names that declare them.
func TestOutcomes(t *testing.T) {
	got := sourcetest.Outcomes(t, filepath.Join("..", ".."))
	for _, o := range []memory.Outcome{memory.OutcomeChanged, memory.OutcomeRefused} {
		if got[string(o)] == "" {
			t.Errorf("Outcomes has no %q: %v", o, got)
		}
	}
}
