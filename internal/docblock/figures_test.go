package docblock

import (
	"slices"
	"testing"
)

// TestMismatches finds a figure that differs, one that is missing, and
// reads one with a thousands separator across a line break as equal.
func TestMismatches(t *testing.T) {
	doc := "a limit of\n1,000 requests and a burst of 20"
	got := Mismatches(doc, Figures{
		`limit of ([0-9,]+) requests`: 1000,
		`burst of ([0-9]+)`:           30,
		`timeout of ([0-9]+)`:         2,
	})
	want := []string{
		`"burst of 20" says 20; the code gives 30`,
		`no figure matches "timeout of ([0-9]+)" (the code gives 2)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Mismatches = %q, want %q", got, want)
	}
}
