// Package docblock holds a block of a document to the code that computes
// it. A block sits between two marker lines,
//
//	<!-- begin NAME: written by COMMAND; do not edit -->
//	…
//	<!-- end NAME -->
//
// and a test that computes the block's text calls [Check]: the test fails
// when the document says something else, and rewrites the block instead
// when it runs with -docs.write.
package docblock

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// write is set by -docs.write: Check rewrites blocks instead of failing.
var write = flag.Bool("docs.write", false, "rewrite the document blocks the tests compute")

// Check compares the block called name of the document at path with want
// (its lines, without the markers) and reports a difference as an error of
// t; with -docs.write it writes want into the block instead.
func Check(t testing.TB, path, name, want string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, got, after, err := Split(string(src), name)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	want = strings.TrimRight(want, "\n") + "\n"
	if got == want {
		return
	}
	if *write {
		if err := os.WriteFile(path, []byte(before+want+after), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: block %s rewritten", path, name)
		return
	}
	t.Errorf("%s: block %s is stale (rerun the test with -docs.write to rewrite it)\n--- the document\n%s--- this run\n%s", path, name, got, want)
}

// Split cuts doc around the block called name: the text up to and with its
// begin marker, the block, and the text from its end marker on.
func Split(doc, name string) (before, block, after string, err error) {
	begin, end := "<!-- begin "+name+":", "<!-- end "+name+" -->"
	i := strings.Index(doc, begin)
	if i < 0 {
		return "", "", "", fmt.Errorf("no line %q…", begin)
	}
	nl := strings.IndexByte(doc[i:], '\n')
	if nl < 0 {
		return "", "", "", fmt.Errorf("marker %q ends the file", begin)
	}
	start := i + nl + 1
	j := strings.Index(doc[start:], end)
	if j < 0 {
		return "", "", "", fmt.Errorf("no line %q after %q", end, begin)
	}
	return doc[:start], doc[start : start+j], doc[start+j:], nil
}

// Thousands formats n with a comma every three digits, as the docs write
// figures.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// InWords writes n as the docs write a small count: in words up to ten,
// in digits above.
func InWords(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}
