package gold_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/usermemory/usermemory/eval/gold"
)

// TestImportSetMix holds the gold import cases to what issue 34 asks:
// at least 8, lists as ChatGPT, Claude and Gemini write them, English and
// at least three other languages, and every kind of trap (instructions,
// other people, secrets, plans already over, a fact that contradicts a
// stored one) in the set, most in every case.
func TestImportSetMix(t *testing.T) {
	cases, err := gold.LoadImports(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 8 {
		t.Errorf("%d import cases, want at least 8", len(cases))
	}
	sources, langs, cats := map[string]int{}, map[string]int{}, map[string]int{}
	conflicts := 0
	for _, c := range cases {
		sources[c.Source]++
		langs[c.Language]++
		kinds := map[string]bool{}
		for _, f := range c.Forbid {
			cats[f.Category]++
			kinds[f.Category] = true
		}
		if len(c.Conflicts()) > 0 {
			conflicts++
		}
		// Every case sets an other person, a secret and a plan or a
		// one-off: the traps every memory list holds.
		for _, k := range []string{gold.OtherPerson, gold.Secret, gold.OneOff} {
			if !kinds[k] {
				t.Errorf("%s: no %s trap", c.ID, k)
			}
		}
	}
	for _, s := range gold.Sources {
		if sources[s] == 0 {
			t.Errorf("no import case from %s", s)
		}
	}
	if langs["en"] == 0 || len(langs) < 4 {
		t.Errorf("languages %v: want English and at least three others", langs)
	}
	for _, k := range []string{gold.Injected, gold.OtherPerson, gold.Secret, gold.OneOff} {
		if cats[k] < 4 {
			t.Errorf("%d %s traps in the set, want at least 4", cats[k], k)
		}
	}
	if conflicts < 3 {
		t.Errorf("%d cases with a known fact the list contradicts, want at least 3", conflicts)
	}
}

const importVocab = "- name: home_city\n  compare: place\n  keys: [city]\n- name: name\n"

const goodImport = `title: t
language: en
source: ChatGPT
format: written in the style of ChatGPT
covers: [conflict]
known:
  - {key: city, value: Leeds}
text: |
  - Lives in Manchester.
  - Partner is called Priya.
expect:
  - subject: home_city
    values: [Manchester]
forbid:
  - category: other_person
    values: [Priya]
    why: the partner
`

// TestLoadImportsRefuses holds the loader to its checks: each broken
// case is refused with a message that says why, and the good one loads.
func TestLoadImportsRefuses(t *testing.T) {
	load := func(data string) ([]gold.ImportCase, error) {
		return gold.LoadImports(fstest.MapFS{"subjects.yaml": {Data: []byte(importVocab)}, "imports/i-1.yaml": {Data: []byte(data)}})
	}
	cases, err := load(goodImport)
	if err != nil || len(cases) != 1 {
		t.Fatalf("the good case: %v, %d cases", err, len(cases))
	}
	c := cases[0]
	if c.Source != "ChatGPT" || !strings.Contains(c.Text, "Manchester") || len(c.Turns) != 1 || c.Turns[0].Text != c.Text {
		t.Errorf("case = %+v, want its text as its one user turn", c)
	}
	if k := c.Conflicts(); len(k) != 1 || k[0].Value != "Leeds" {
		t.Errorf("Conflicts = %v, want the known Leeds", k)
	}
	for _, tc := range []struct{ edit, want string }{
		{strings.Replace(goodImport, "source: ChatGPT", "source: Copilot", 1), "source"},
		{strings.Replace(goodImport, "format: written in the style of ChatGPT\n", "", 1), "format"},
		{strings.Replace(goodImport, "values: [Priya]", "values: [Marc]", 1), "trap the list does not set"},
		{strings.Replace(goodImport, "{key: city, value: Leeds}", "{key: city, value: Manchester}", 1), "covers conflict"},
		{strings.Replace(goodImport, "    values: [Manchester]\n", "    values: [Manchester]\n    validUntil: 2026-12-04\n", 1), "no end date"},
		{strings.Replace(goodImport, "source: ChatGPT", "source: ChatGPT\nturns: []", 1), "unknown"},
		{strings.Replace(goodImport, "expect:\n  - subject: home_city\n    values: [Manchester]\n", "", 1), "no expected fact"},
		{strings.Replace(goodImport, "why: the partner", "why: \"\"", 1), "why"},
		{strings.Replace(goodImport, "text: |\n  - Lives in Manchester.\n  - Partner is called Priya.\n", "text: \"\"\n", 1), "empty text"},
	} {
		if _, err := load(tc.edit); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error = %v, want one saying %q for:\n%s", err, tc.want, tc.edit)
		}
	}
	if cases, err := gold.LoadImports(fstest.MapFS{"subjects.yaml": {Data: []byte(importVocab)}}); err != nil || len(cases) != 0 {
		t.Errorf("a gold set without imports/: %v, %d cases; want none and no error", err, len(cases))
	}
}

// TestImportCasesTrapsAreNotExpected holds every case to traps that no
// expected value meets: a trap value that an accepted value holds would
// make a correct fact a leak.
func TestImportCasesTrapsAreNotExpected(t *testing.T) {
	cases, err := gold.LoadImports(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, e := range c.Expect {
			for _, v := range slices.Concat(e.Values, e.Contains) {
				for _, f := range c.Forbid {
					if f.Matches(c.OnSubject, e.Subject.Keys[0], v) {
						t.Errorf("%s: the accepted %s %q is a %s trap", c.ID, e.Subject.Name, v, f.Category)
					}
				}
			}
		}
	}
}
