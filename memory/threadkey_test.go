package memory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
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

// TestLongThreadIDWatermark checks that the store keys the watermark of a
// long thread ID by ThreadKey, the key it looks it up by: a redelivery is a
// duplicate, with no model call, and the source of a fact keeps the whole
// ID.
func TestLongThreadIDWatermark(t *testing.T) {
	ctx := context.Background()
	const uuid = "5f0c1a7e-8b2d-4c3e-9a4f-6d7e8f901234"
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{set("name", "Ana")}})
	s, repo := newStore(t, memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
	req := extractReq(memorytest.Ana, uuid, 0, 2, "I'm Ana", "Olá Ana!")
	if _, err := s.Extract(ctx, req); err != nil {
		t.Fatal(err)
	}
	rec, _ := repo.Record(memorytest.Ana)
	if _, ok := rec.Threads[uuid]; ok || rec.Threads[memory.ThreadKey(uuid)].TurnCount != 2 || len(rec.Threads) != 1 {
		t.Errorf("watermarks = %+v, want turn count 2 under %q only", rec.Threads, memory.ThreadKey(uuid))
	}
	if len(rec.Facts) != 1 || rec.Facts[0].SourceThreadID != uuid {
		t.Errorf("facts = %+v, want name with source %s", rec.Facts, uuid)
	}
	res, err := s.Extract(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != memory.OutcomeDuplicate || model.Calls() != 1 {
		t.Errorf("redelivery: outcome %q after %d model calls, want duplicate after 1", res.Outcome, model.Calls())
	}
}
