package memory

import (
	"strings"
	"testing"
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
