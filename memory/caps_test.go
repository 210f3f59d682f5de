package memory

import (
	"testing"
	"time"
)

func TestCapFactsDropsLeastRecentlyUpdatedNeverKept(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	facts := []Fact{
		{Key: "a", UpdatedAt: t0.Add(3 * time.Hour)},
		{Key: "b", UpdatedAt: t0},
		{Key: "c", UpdatedAt: t0.Add(time.Hour)},
		{Key: "new", UpdatedAt: t0.Add(-time.Hour)}, // Older clock, still kept.
	}
	got := capFacts(facts, 2, "new")
	if len(got) != 2 || got[0].Key != "a" || got[1].Key != "new" {
		t.Errorf("capFacts = %v, want a and new", got)
	}
}
