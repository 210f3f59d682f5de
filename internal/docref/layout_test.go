package docref_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/localnet"
)

// TestREADMELayoutNamesEveryPackage holds the README's table of folders
// to the tree: each package folder under functions/ and internal/ is named
// in its folder's row.
func TestREADMELayoutNamesEveryPackage(t *testing.T) {
	root, err := localnet.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(readme), "\n") {
		for _, top := range []string{"functions", "internal"} {
			if strings.HasPrefix(line, "| `"+top+"/` |") {
				rows[top] = line
			}
		}
	}
	for _, top := range []string{"functions", "internal"} {
		if rows[top] == "" {
			t.Fatalf("README.md has no row for %s/", top)
		}
		entries, err := os.ReadDir(filepath.Join(root, top))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if gos, _ := filepath.Glob(filepath.Join(root, top, e.Name(), "*.go")); !e.IsDir() || len(gos) == 0 {
				continue
			}
			if !strings.Contains(rows[top], "`"+e.Name()+"`") {
				t.Errorf("README.md's row for %s/ does not name %s", top, e.Name())
			}
		}
	}
}
