package memory

import (
	"strings"
	"testing"
	"time"
)

func TestCanonicalKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Home City", "home_city"},
		{"home_city", "home_city"},
		{" home-city ", "home_city"},
		{"HOME.CITY", "home_city"},
		{"home__city!!", "home_city"},
		{"Língua Preferida", "língua_preferida"},
		{"  ", ""},
		{"---", ""},
		{"name", "name"},
		{"Time zone (UTC)", "time_zone_utc"},
		{"日本語", "日本語"},
	}
	for _, tt := range tests {
		if got := CanonicalKey(tt.in); got != tt.want {
			t.Errorf("CanonicalKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidID(t *testing.T) {
	good := []string{"acme", "u-123", "auth0|5f3a", "a.b:c@d+e=f_g", strings.Repeat("x", MaxIDLen)}
	bad := []string{"", "a#b", "a/b", "a b", "é", strings.Repeat("x", MaxIDLen+1), "a\x00b", "../x"}
	for _, id := range good {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false, want true", id)
		}
	}
	for _, id := range bad {
		if ValidID(id) {
			t.Errorf("ValidID(%q) = true, want false", id)
		}
	}
}

func TestCutRunes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"olá mundo", 3, "olá"},
		{"ab cd", 3, "ab"},
		{"日本語テキスト", 2, "日本"},
	}
	for _, tt := range tests {
		if got := cutRunes(tt.in, tt.n); got != tt.want {
			t.Errorf("cutRunes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

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

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	bad := []Config{
		{MaxFacts: -1},
		{MaxFacts: MaxMaxFacts + 1},
		{MaxFactChars: 5},
		{ExtractEveryTurns: -2},
		{TranscriptChars: 10},
		{MaxFacts: 500, MaxFactChars: 2000}, // Could not fit an item.
		{Template: "no placeholders"},
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

func TestTranscript(t *testing.T) {
	turns := []Turn{
		{Role: RoleUser, Text: "Hi, I'm Ana"},
		{Role: RoleTool, Text: `{"secret":"tool output"}`},
		{Role: RoleAssistant, Text: "Hello Ana!"},
		{Role: RoleUser, Text: "  "},
	}
	got := Transcript(turns, 1000)
	want := "User: Hi, I'm Ana\n\nAssistant: Hello Ana!"
	if got != want {
		t.Errorf("Transcript = %q, want %q", got, want)
	}
}

func TestTranscriptDropsOldestFirstWithinBudget(t *testing.T) {
	var turns []Turn
	for i := range 200 {
		turns = append(turns, Turn{Role: RoleUser, Text: strings.Repeat("x", 90) + string(rune('a'+i%26))})
	}
	turns = append(turns, Turn{Role: RoleUser, Text: "the newest turn"})
	for _, budget := range []int{500, 2000, 5000} {
		got := Transcript(turns, budget)
		if n := len([]rune(got)); n > budget {
			t.Errorf("budget %d: transcript has %d runes", budget, n)
		}
		if !strings.HasSuffix(got, "User: the newest turn") {
			t.Errorf("budget %d: newest turn missing at the end", budget)
		}
	}
}
