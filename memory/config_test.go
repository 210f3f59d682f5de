package memory

import "testing"

// ExtractEveryTurnsUpperBound lets the external tests (the shared due
// vectors) reach the bound of Config.ExtractEveryTurns.
const ExtractEveryTurnsUpperBound = extractEveryTurnsUpperBound

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	bad := []Config{
		{MaxFacts: -1},
		{MaxFacts: MaxFactsUpperBound + 1},
		{MaxFactChars: 5},
		{ExtractEveryTurns: -2},
		{TranscriptChars: 10},
		{ContextChars: contextCharsLowerBound - 1},
		{ContextChars: contextCharsUpperBound + 1},
		{MaxFacts: 500, MaxFactChars: 2000}, // Could not fit an item.
		{Prompt: "no placeholders"},
	}
	for _, c := range bad {
		err := c.Validate()
		if ErrorCode(err) != CodeInvalidConfig {
			t.Errorf("Validate(%+v) = %v, want code %d", c, err, CodeInvalidConfig)
		}
	}
	// Every accepted configuration fits the item budget.
	for _, facts := range []int{1, 30, 100, 500} {
		for _, chars := range []int{16, 200, 400, 2000} {
			c := Config{MaxFacts: facts, MaxFactChars: chars}
			if c.Validate() == nil && c.WithDefaults().MaxRecordBytes() > ItemBudget {
				t.Errorf("config %+v accepted but MaxRecordBytes %d > %d", c, c.MaxRecordBytes(), ItemBudget)
			}
		}
	}
}

func TestValidateCountsTombstones(t *testing.T) {
	// Fits the budget with one tombstone, not with as many as facts.
	cfg := Config{MaxFacts: 14, MaxFactChars: 2000, MaxTombstones: 1, MaxPending: 1}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v, want nil", cfg, err)
	}
	cfg.MaxTombstones = 0 // default: MaxFacts
	if err := cfg.Validate(); ErrorCode(err) != CodeInvalidConfig {
		t.Errorf("Validate(%+v) = %v, want CodeInvalidConfig", cfg, err)
	}
	if err := (Config{MaxTombstones: MaxFactsUpperBound + 1}).Validate(); ErrorCode(err) != CodeInvalidConfig {
		t.Errorf("maxTombstones over the bound: %v", err)
	}
}
