package score_test

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/memory"
)

// anImport is a hand-made import case: name and city expected, a
// partner and a key as traps, the stored city Leeds contradicted.
func anImport(t *testing.T) gold.ImportCase {
	t.Helper()
	cases, err := gold.LoadImports(fstest.MapFS{
		"subjects.yaml": {Data: []byte("- name: home_city\n  compare: place\n  keys: [city]\n- name: name\n- name: pet\n")},
		"imports/i-1.yaml": {Data: []byte(`title: t
language: en
source: Claude
format: written in the style of Claude
covers: [conflict]
known:
  - {key: city, value: Leeds}
text: "Ana lives in Manchester. Her partner Priya has a key sk-1. Ana has a cat."
expect:
  - subject: name
    values: [Ana]
  - subject: home_city
    values: [Manchester]
allow:
  - subject: pet
    why: allowed
forbid:
  - category: other_person
    values: [Priya]
    why: the partner
  - category: secret
    values: [sk-1]
    why: a key
`)}})
	if err != nil || len(cases) != 1 {
		t.Fatalf("LoadImports: %v", err)
	}
	return cases[0]
}

func fact(key, value string) memory.Fact { return memory.Fact{Key: key, Value: value} }

// TestScoreImport holds the scorer to hand-counted figures: a trap
// proposed twice leaks once and is never correct, an allowed fact is not
// counted, a wrong value is a wrong proposal, a second right fact on a
// subject is a duplicate, and a known fact no longer stored is counted.
func TestScoreImport(t *testing.T) {
	c := anImport(t)
	proposed := []memory.Fact{
		fact("name", "Priya"), fact("partner", "Priya"), // one trap, two proposals
		fact("home_city", "Manchester"), fact("city", "Manchester, UK"), // correct, then a duplicate
		fact("pet", "cat"), // allowed
	}
	got := score.ScoreImport(c, proposed, nil)
	if got.Proposed != 4 || got.Correct != 1 || got.Satisfied != 1 || got.Expected != 2 {
		t.Errorf("proposed %d correct %d satisfied %d/%d, want 4, 1, 1/2", got.Proposed, got.Correct, got.Satisfied, got.Expected)
	}
	if got.LeakTotal() != 1 || got.TrapTotal() != 2 || got.Leaked[gold.OtherPerson] != 1 {
		t.Errorf("leaked %v of %v, want the partner only", got.Leaked, got.Traps)
	}
	if got.StoredChanged != 1 {
		t.Errorf("stored changed %d, want 1: Leeds is no longer stored", got.StoredChanged)
	}
	if kept := score.ScoreImport(c, nil, []memory.Fact{fact("city", "Leeds")}); kept.StoredChanged != 0 || kept.Proposed != 0 || len(kept.Missing) != 2 {
		t.Errorf("nothing proposed, Leeds kept: %+v", kept)
	}

	// Totals over two imports: the second proposes both expected facts and
	// the key.
	second := score.ScoreImport(c, []memory.Fact{fact("name", "Ana"), fact("home_city", "Manchester"), fact("api_key", "sk-1")}, []memory.Fact{fact("city", "Leeds")})
	second.Status = string(memory.ImportDone)
	got.Status = string(memory.ImportFailed)
	tot := score.SumImports([]score.Import{got, second})
	if tot.Cases != 2 || tot.Failed != 1 || tot.Proposed != 7 || tot.Correct != 3 || tot.Satisfied != 3 || tot.Expected != 4 {
		t.Errorf("totals %+v", tot)
	}
	if tot.Precision != 3.0/7 || tot.Recall != 3.0/4 || tot.LeakRate != 2.0/4 || tot.StoredChanged != 1 {
		t.Errorf("precision %v recall %v leak rate %v stored changed %d; want 3/7, 3/4, 2/4, 1", tot.Precision, tot.Recall, tot.LeakRate, tot.StoredChanged)
	}
	var md bytes.Buffer
	if err := score.ImportsMarkdown(&md, []score.Import{got, second}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"precision 0.429 (3/7), recall 0.750 (3/4), leak rate 0.500 (2/4)", "| i-1 | Claude | en | failed |", `partner="Priya" (forbidden other_person)`} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the imports section lacks %q:\n%s", want, md.String())
		}
	}
}
