package localnet_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/usermemory/usermemory/internal/localnet"
)

func TestFreePortsAreDistinctAndFree(t *testing.T) {
	ports, err := localnet.FreePorts(8)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p <= 0 {
			t.Fatalf("ports %v: %d twice or not a port", ports, p)
		}
		seen[p] = true
	}
	ln, err := localnet.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}

func TestModuleRoot(t *testing.T) {
	root, err := localnet.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("%s holds no go.mod", root)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "localnet", "localnet.go")); err != nil {
		t.Errorf("%s is not this module's root", root)
	}
	t.Chdir(t.TempDir())
	if _, err := localnet.ModuleRoot(); err == nil {
		t.Errorf("no error outside a module")
	}
}
