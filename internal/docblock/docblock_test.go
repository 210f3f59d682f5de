package docblock_test

import (
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
)

func TestSplit(t *testing.T) {
	doc := "intro\n<!-- begin x: written by cmd; do not edit -->\nold\n<!-- end x -->\nrest\n"
	before, block, after, err := docblock.Split(doc, "x")
	if err != nil {
		t.Fatal(err)
	}
	if before != "intro\n<!-- begin x: written by cmd; do not edit -->\n" || block != "old\n" || after != "<!-- end x -->\nrest\n" {
		t.Errorf("Split = %q, %q, %q", before, block, after)
	}
	for _, bad := range []string{"no markers\n", "<!-- begin x: cmd -->\nold\n", "<!-- begin y: cmd -->\n<!-- end y -->\n"} {
		if _, _, _, err := docblock.Split(bad, "x"); err == nil {
			t.Errorf("Split(%q) found a block", bad)
		}
	}
}

func TestInWords(t *testing.T) {
	for n, want := range map[int]string{0: "no", 3: "three", 10: "ten", 11: "11", -1: "-1"} {
		if got := docblock.InWords(n); got != want {
			t.Errorf("InWords(%d) = %q, want %q", n, got, want)
		}
	}
}
