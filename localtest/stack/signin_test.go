package stack

import (
	"path/filepath"
	"testing"
)

// TestTokenCommand: the memory page's command names -state only for a
// state folder other than the default one, quoted for the shell when it
// needs to be.
func TestTokenCommand(t *testing.T) {
	for dir, want := range map[string]string{
		DefaultStateDir():                    "go run ./localtest token --tenant acme --user ana",
		filepath.Join("/srv", "stack-1"):     "go run ./localtest token -state /srv/stack-1 --tenant acme --user ana",
		filepath.Join("/srv", "Ana's stack"): `go run ./localtest token -state '/srv/Ana'\''s stack' --tenant acme --user ana`,
	} {
		if got := tokenCommand(dir); got != want {
			t.Errorf("tokenCommand(%q) = %q, want %q", dir, got, want)
		}
	}
}
