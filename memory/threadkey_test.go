package memory_test

import (
	"strings"
	"testing"

	"github.com/usermemory/usermemory/memory"
)

// TestThreadKey holds ThreadKey to its stored form: the records written
// with it depend on it staying the same.
func TestThreadKey(t *testing.T) {
	tests := []struct{ id, want string }{
		{"th-1", "th-1"},
		{"thread-012345", "thread-012345"}, // 13 bytes: kept as it is
		{"thread-0123456", "#6MraSDGtmerU"},
		{"5f0c1a7e-8b2d-4c3e-9a4f-6d7e8f901234", "#5KkS6upF9_Pr"},
		{strings.Repeat("x", memory.MaxIDLen), memory.ThreadKey(strings.Repeat("x", memory.MaxIDLen))},
	}
	for _, tt := range tests {
		got := memory.ThreadKey(tt.id)
		if got != tt.want {
			t.Errorf("ThreadKey(%q) = %q, want %q", tt.id, got, tt.want)
		}
		if len(got) > memory.ThreadKeyLen {
			t.Errorf("ThreadKey(%q) = %q, over %d bytes", tt.id, got, memory.ThreadKeyLen)
		}
		if again := memory.ThreadKey(got); again != got {
			t.Errorf("ThreadKey(ThreadKey(%q)) = %q, want %q", tt.id, again, got)
		}
		if len(tt.id) > memory.ThreadKeyLen && memory.ValidID(got) {
			t.Errorf("ThreadKey(%q) = %q is a valid ID: it could equal a short ID", tt.id, got)
		}
	}
}
