package docref_test

import (
	"path/filepath"
	"testing"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/docref"
	"github.com/usermemory/usermemory/internal/localnet"
)

// TestDocsReferToWhatExists fails on every reference a document makes to
// a Go symbol, a test, a file, a make target or a command's flag that the
// repository does not have.
func TestDocsReferToWhatExists(t *testing.T) {
	root, err := localnet.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := docref.Read(root, setup.DefaultUserScope, setup.DefaultAdminScope)
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md"),
		filepath.Join(root, "clients", "typescript", "README.md"), filepath.Join(root, "eval", "README.md"),
		filepath.Join(root, "web", "README.md"))
	n := 0
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		dangling, err := repo.Check(rel)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range dangling {
			t.Error(x)
			n++
		}
	}
	if n > 0 {
		t.Logf("%d dangling references", n)
	}
}
