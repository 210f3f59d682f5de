package memory

// IsExtractDue reports whether a thread earned an extraction with its last
// call: after the first answer of a thread (previousTurnCount 0, turnCount
// above it), then whenever the call crossed a multiple of
// ExtractEveryTurns, even when it jumped over one. Never while extraction
// is switched off. Pure: no read, no write.
func (s *Store) IsExtractDue(previousTurnCount, turnCount int) bool {
	return isExtractDue(s.cfg, previousTurnCount, turnCount)
}

func isExtractDue(cfg Config, prev, count int) bool {
	if cfg.ExtractionDisabled || prev < 0 || count <= prev {
		return false
	}
	if prev == 0 {
		return true
	}
	n := cfg.ExtractEveryTurns
	return count/n > prev/n
}
