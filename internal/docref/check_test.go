package docref_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/usermemory/usermemory/internal/docref"
)

// TestCheckFindsEachKind: in a small repository, a document that names
// what exists passes, and one dangling reference of each kind is found,
// a method written as a package-level name among them.
func TestCheckFindsEachKind(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/x\n")
	write("Makefile", "test:\n\tgo test ./...\nlint: test\n")
	write("memory/store.go", "package memory\n\ntype Store struct{ Limit int }\n\nfunc (s *Store) Extract() {}\n\nfunc New() *Store { return nil }\n")
	write("memory/store_test.go", "package memory\n\nimport \"testing\"\n\nfunc TestExtract(t *testing.T) {}\n")
	write("cmd/run/main.go", "package main\n\nimport \"flag\"\n\nvar live = flag.Bool(\"live\", false, \"\")\n\nfunc main() {}\n")
	write("docs/good.md", "See `memory.Store.Extract`, `memory.New`, `memory.Store.Limit`, TestExtract,\n"+
		"`memory/store.go`, [the store](../memory/store.go), `make lint`, `go run ./cmd/run -live`.\n")
	write("docs/bad.md", "`memory.Store.Forget` and `memory.Old`\n`memory.Extract`, a method written as the package's\nTestGone\n`memory/gone.go` [x](../nowhere.md)\n"+
		"as the design says (DESIGN.md: a rule)\n"+
		"```\nmake deploy\ngo run ./cmd/run -dry\n```\n")
	repo, err := docref.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := repo.Check("docs/good.md"); err != nil || len(got) != 0 {
		t.Errorf("good.md: %v, %v; want nothing dangling", got, err)
	}
	got, err := repo.Check("docs/bad.md")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range got {
		kinds = append(kinds, d.Kind+" "+d.Ref)
	}
	want := []string{"symbol memory.Store.Forget", "symbol memory.Old", "symbol memory.Extract", "test TestGone", "link ../nowhere.md",
		"path memory/gone.go", "path DESIGN.md", "make deploy", "flag go run ./cmd/run -dry"}
	slices.Sort(kinds)
	slices.Sort(want)
	if !slices.Equal(kinds, want) {
		t.Errorf("dangling:\n got %q\nwant %q", kinds, want)
	}
}
