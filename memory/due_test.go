package memory

import "testing"

func TestIsExtractDue(t *testing.T) {
	cfg := Config{ExtractEveryTurns: 4}.WithDefaults()
	tests := []struct {
		prev, count int
		want        bool
	}{
		{0, 2, true},   // first answer
		{0, 0, false},  // nothing happened
		{2, 3, false},  // between beats
		{3, 4, true},   // crossed 4
		{2, 9, true},   // jumped over 4 and 8
		{4, 5, false},  // just after a beat
		{7, 8, true},   // crossed 8
		{8, 8, false},  // no new turn
		{9, 7, false},  // backwards
		{-1, 3, false}, // invalid
	}
	for _, tt := range tests {
		if got := isExtractDue(cfg, tt.prev, tt.count); got != tt.want {
			t.Errorf("isExtractDue(%d, %d) = %v, want %v", tt.prev, tt.count, got, tt.want)
		}
	}
	cfg.ExtractionDisabled = true
	if isExtractDue(cfg, 0, 2) {
		t.Error("isExtractDue with extraction disabled = true, want false")
	}
}
