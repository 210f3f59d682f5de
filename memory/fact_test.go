package memory

import (
	"errors"
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
		{"हिंदी भाषा", "हिंदी_भाषा"},
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

func TestCheckKey(t *testing.T) {
	good := []string{"Home City", "home_city", " home-city ", "HOME.CITY", "língua", "हिंदी", "日本語", "a1"}
	bad := []string{"Bad Key!", "home/city", "time zone (UTC)", "a\tb", "a#b", "k\uFFFD", "e-mail@work"}
	for _, k := range good {
		if err := CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", k, err)
		}
	}
	for _, k := range bad {
		var e *Error
		if err := CheckKey(k); !errors.As(err, &e) || e.Code != CodeInvalidKeyChars || e.UserMessage == "" {
			t.Errorf("CheckKey(%q) = %v, want CodeInvalidKeyChars and a userMessage", k, err)
		}
	}
}

func TestCleanThreadTitle(t *testing.T) {
	long := strings.Repeat("é", MaxThreadTitleChars+5)
	tests := []struct{ in, want string }{
		{"  Trip to Porto\n", "Trip to Porto"},
		{"a\tb", "a b"},
		{long, long[:2*MaxThreadTitleChars]},
		{"", ""},
	}
	for _, tt := range tests {
		if got := CleanThreadTitle(tt.in); got != tt.want {
			t.Errorf("CleanThreadTitle(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
