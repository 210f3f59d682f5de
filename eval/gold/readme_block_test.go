package gold_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/internal/docblock"
)

// TestREADMEGoldSetBlock writes eval/README.md's counts of the gold set
// from the gold set itself (rewrite with -args -docs.write): the prose
// around the block names what the conversations cover, the block how
// many.
func TestREADMEGoldSetBlock(t *testing.T) {
	convs := load(t)
	real, switching, between := 0, 0, 0
	subjects, langs := map[string]bool{}, map[string]bool{}
	longest, atLongest := 0, 0
	for _, c := range convs {
		if gold.LikeRealChat(c) {
			real++
		}
		switch n := len(c.Turns); {
		case n > longest:
			longest, atLongest = n, 1
		case n == longest:
			atLongest++
		}
		if slices.Contains(c.Covers, "code_switching") {
			switching++
		}
		if slices.Contains(c.Covers, "left_between_beats") {
			between++
		}
		for _, e := range append(c.Expect, c.Pending...) {
			subjects[e.Subject.Name] = true
		}
		langs[c.Language] = true
	}
	rows := [][2]string{
		{"conversations", fmt.Sprint(len(convs))},
		{fmt.Sprintf("read like real chats (%d user turns or more)", gold.RealChatUserTurns), fmt.Sprint(real)},
		{"subjects with an expected fact", fmt.Sprint(len(subjects))},
		{"languages", fmt.Sprint(len(langs))},
		{fmt.Sprintf("long threads (%d turns)", longest), fmt.Sprint(atLongest)},
		{"switch between two languages (`code_switching`)", fmt.Sprint(switching)},
		{"end between two beats (`left_between_beats`)", fmt.Sprint(between)},
		{"the day they happen on (`gold.Day`)", gold.Day.Format("Monday " + time.DateOnly)},
	}
	lines := []string{"| the gold set | |", "|---|---:|"}
	for _, r := range rows {
		lines = append(lines, "| "+r[0]+" | "+r[1]+" |")
	}
	docblock.Check(t, filepath.Join("..", "README.md"), "gold-set", strings.Join(lines, "\n"))
}
