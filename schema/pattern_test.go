package schema

import (
	"regexp"
	"strings"
	"testing"
)

// TestCompilePatternAcceptsWhatThePatternDoes: a counted character class
// compiled as the class repeated plus bounds accepts exactly the strings
// the pattern itself accepts, at, around and past its bounds.
func TestCompilePatternAcceptsWhatThePatternDoes(t *testing.T) {
	for _, p := range []string{`^[A-Za-z0-9_.:@|+=-]{1,128}$`, `^[A-Za-z0-9._:/+-]{1,256}$`, `^[!-~]{0,256}$`, `^[a\]b]{2,3}$`, `^(a|b){1,2}$`} {
		full := regexp.MustCompile(p)
		re, lo, hi, err := compilePattern(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, unit := range []string{"a", "Z", "-", " ", "é", "]", "b", "#"} {
			for _, n := range []int{0, 1, 2, 3, 127, 128, 129, 255, 256, 257} {
				s := strings.Repeat(unit, n)
				c := len([]rune(s))
				got := re.MatchString(s) && c >= lo && (hi < 0 || c <= hi)
				if want := full.MatchString(s); got != want {
					t.Errorf("%s on %d × %q: %v, the pattern says %v", p, n, unit, got, want)
				}
			}
		}
	}
}
