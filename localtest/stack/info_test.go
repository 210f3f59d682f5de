package stack

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInfoCarriesParameters: the state file holds the parameters the
// stack runs with, as ReadInfo returns them, and is written whole by a
// rename, leaving nothing aside.
func TestInfoCarriesParameters(t *testing.T) {
	dir := t.TempDir()
	s := &Stack{Info: Info{StateDir: dir, PID: os.Getpid(), Parameters: map[string]string{"MaxFacts": "75", "ExtractionEnabled": "false"}}}
	path, err := s.WriteInfo()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Parameters) != 2 || got.Parameters["MaxFacts"] != "75" || got.Parameters["ExtractionEnabled"] != "false" {
		t.Errorf("parameters read back %v, want %v", got.Parameters, s.Info.Parameters)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || filepath.Join(dir, entries[0].Name()) != path {
		t.Errorf("the state folder holds %v, want the state file %s only", entries, path)
	}
}
