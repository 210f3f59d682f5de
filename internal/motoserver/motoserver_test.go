package motoserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProgram writes an executable file at path.
func fakeProgram(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestFind holds the order of the places moto_server is looked for: the
// variable, PATH, then make setup's virtual environment; and, where it is
// in none, an error that names the working install command.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	onPath, inVenv, named := filepath.Join(dir, "path", "moto_server"), filepath.Join(dir, "data", "usermemory", "venv", "bin", "moto_server"), filepath.Join(dir, "named")
	for _, p := range []string{onPath, inVenv, named} {
		fakeProgram(t, p)
	}
	empty := filepath.Join(dir, "empty")
	tests := []struct {
		name, env, path, data, want string
	}{
		{"the variable first", named, filepath.Dir(onPath), filepath.Join(dir, "data"), named},
		{"PATH before the venv", "", filepath.Dir(onPath), filepath.Join(dir, "data"), onPath},
		{"the venv of make setup", "", empty, filepath.Join(dir, "data"), inVenv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(BinEnv, tt.env)
			t.Setenv("PATH", tt.path)
			t.Setenv("XDG_DATA_HOME", tt.data)
			got, err := Find()
			if err != nil || got != tt.want {
				t.Errorf("Find() = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
	t.Run("nowhere", func(t *testing.T) {
		t.Setenv(BinEnv, "")
		t.Setenv("PATH", empty)
		t.Setenv("XDG_DATA_HOME", empty)
		_, err := Find()
		if err == nil || !strings.Contains(err.Error(), "make setup") || !strings.Contains(err.Error(), "python3 -m venv") || strings.Contains(err.Error(), "  ") {
			t.Errorf("Find() error = %v, want one naming make setup and the venv command, without a double space", err)
		}
	})
	t.Run("a wrong variable", func(t *testing.T) {
		t.Setenv(BinEnv, filepath.Join(dir, "missing"))
		if _, err := Find(); err == nil || !strings.Contains(err.Error(), BinEnv) {
			t.Errorf("Find() error = %v, want one naming %s", err, BinEnv)
		}
	})
}
