package logref_test

import (
	"testing"

	"github.com/usermemory/usermemory/functions/logref"
)

// TestUser holds the reference to the shell command that package logref's
// documentation gives operators: printf '%s' 'acme/u-123' | sha256sum |
// cut -c1-16.
func TestUser(t *testing.T) {
	if got, want := logref.User("acme", "u-123"), "b0e35159bdc1e924"; got != want {
		t.Errorf("User(acme, u-123) = %s, want %s", got, want)
	}
	if logref.User("acme", "u-123") == logref.User("globex", "u-123") {
		t.Error("the same user ID in two tenants has one reference")
	}
}
