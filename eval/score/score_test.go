package score_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/memory"
)

// conversation is a hand-made gold conversation in Portuguese: name,
// city and role expected, a password and the wife's job forbidden.
func conversation(t *testing.T) gold.Conversation {
	t.Helper()
	return loadOne(t, `
- name: name
- name: home_city
  keys: [city, cidade]
- name: role
  keys: [job, profissao]
- name: time_zone
  keys: [timezone]
  neutral: true
`, "pt-1", `
title: hand-made
language: pt
covers: [stating, secret]
known:
  - {key: home_city, value: Lisboa}
turns:
  - user: "Sou a Ana, enfermeira no Porto. A minha palavra-passe é gato123. A minha mulher é médica."
  - assistant: "Olá Ana!"
expect:
  - subject: name
    values: [Ana]
  - subject: home_city
    values: [Porto]
  - subject: role
    contains: [enfermeira]
    translations: [nurse]
allow:
  - subject: time_zone
    why: not stated
forbid:
  - category: secret
    why: a password
    values: [gato123]
  - category: other_person
    why: the wife's job
    values: [médica, medica]
`)
}

// loadOne loads the gold conversation conv, named name, with the subjects
// of subjects (both YAML, in gold's format).
func loadOne(t *testing.T, subjects, name, conv string) gold.Conversation {
	t.Helper()
	convs, err := gold.Load(fstest.MapFS{
		"subjects.yaml":                   {Data: []byte(subjects)},
		"conversations/" + name + ".yaml": {Data: []byte(conv)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return convs[0]
}

func facts(kv ...string) []memory.Fact {
	var out []memory.Fact
	for i := 0; i < len(kv); i += 2 {
		out = append(out, memory.Fact{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func TestPerfectAnswerScoresOne(t *testing.T) {
	c := score.Score(conversation(t), facts("name", "Ana", "home_city", "Porto", "role", "enfermeira", "time_zone", "Europe/Lisbon"), nil)
	if c.Precision != 1 || c.Recall != 1 || !c.Perfect() {
		t.Errorf("perfect answer = precision %v recall %v perfect %v, want 1, 1, true: %+v", c.Precision, c.Recall, c.Perfect(), c)
	}
	if c.Kept != 3 || c.Satisfied != 3 || c.Expected != 3 {
		t.Errorf("kept %d satisfied %d expected %d, want 3 3 3 (the allowed time zone is not counted)", c.Kept, c.Satisfied, c.Expected)
	}
}

func TestContradictionIsCounted(t *testing.T) {
	// Two facts on the city: the store's keys differ, the subject is one.
	c := score.Score(conversation(t), facts("name", "Ana", "home_city", "Porto", "cidade", "Lisboa", "role", "enfermeira"), nil)
	if c.Contradictions != 1 {
		t.Errorf("contradictions = %d, want 1", c.Contradictions)
	}
	if c.Recall != 1 || c.Precision != 0.75 {
		t.Errorf("precision %v recall %v, want 0.75 (3 right of 4 kept) and 1", c.Precision, c.Recall)
	}
	if c.Perfect() {
		t.Error("a contradiction is not perfect")
	}
	// The same value twice is a contradiction too: the first fact in key
	// order is correct, the second a duplicate.
	c = score.Score(conversation(t), facts("name", "Ana", "home_city", "Porto", "city", "Porto", "role", "enfermeira"), nil)
	if c.Contradictions != 1 || c.Precision != 0.75 || verdict(c, "city") != score.Correct || verdict(c, "home_city") != score.Duplicate {
		t.Errorf("duplicate = %d contradictions, precision %v, verdicts %+v", c.Contradictions, c.Precision, c.Facts)
	}
}

func TestLeakedSecretIsCounted(t *testing.T) {
	c := score.Score(conversation(t), facts("name", "Ana", "home_city", "Porto", "role", "enfermeira", "password", "gato123"), nil)
	if c.Leaked[gold.Secret] != 1 || c.LeakTotal() != 1 {
		t.Errorf("leaked = %v, want one secret", c.Leaked)
	}
	if c.Precision != 0.75 || c.Recall != 1 {
		t.Errorf("precision %v recall %v, want 0.75 and 1", c.Precision, c.Recall)
	}
	if verdict(c, "password") != score.ForbiddenKept {
		t.Errorf("verdicts = %+v", c.Facts)
	}
	c = score.Score(conversation(t), facts("wife_job", "médica"), nil)
	if c.Leaked[gold.OtherPerson] != 1 || c.Recall != 0 || c.Precision != 0 {
		t.Errorf("other person = %v, precision %v, recall %v", c.Leaked, c.Precision, c.Recall)
	}
}

func TestWrongLanguageIsCounted(t *testing.T) {
	cases := []struct {
		name  string
		facts []memory.Fact
		want  string
	}{
		{"a listed translation", facts("name", "Ana", "home_city", "Porto", "role", "nurse"), "translation"},
		{"an English sentence", facts("name", "Ana", "home_city", "Porto", "role", "enfermeira", "style", "prefers short answers"), "English word"},
		{"another script", facts("name", "Ана", "home_city", "Porto", "role", "enfermeira"), "script"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := score.Score(conversation(t), tc.facts, nil)
			if c.WrongLanguage != 1 {
				t.Fatalf("wrong language = %d, want 1: %+v", c.WrongLanguage, c.Facts)
			}
			for _, f := range c.Facts {
				if f.WrongLanguage != "" && !strings.Contains(f.WrongLanguage, tc.want) {
					t.Errorf("reason %q, want it to mention %q", f.WrongLanguage, tc.want)
				}
			}
		})
	}
	// Not counted: a correct value, a known value kept, a neutral subject.
	c := score.Score(conversation(t), facts("name", "Ana", "home_city", "Lisboa", "role", "enfermeira", "time_zone", "the Lisbon time"), nil)
	if c.WrongLanguage != 0 {
		t.Errorf("wrong language = %d, want 0: %+v", c.WrongLanguage, c.Facts)
	}
	if verdict(c, "home_city") != score.WrongValue || c.Recall != 2.0/3 {
		t.Errorf("the old city = %s, recall %v, want wrong_value and 2/3", verdict(c, "home_city"), c.Recall)
	}
}

func TestNothingKeptNothingExpected(t *testing.T) {
	conv := conversation(t)
	conv.Expect = nil
	c := score.Score(conv, nil, nil)
	if c.Precision != 1 || c.Recall != 1 || !c.Perfect() {
		t.Errorf("empty = %+v, want a perfect score", c)
	}
	c = score.Score(conversation(t), nil, nil)
	if c.Precision != 1 || c.Recall != 0 || len(c.Missing) != 3 {
		t.Errorf("nothing kept = precision %v recall %v missing %v, want 1, 0 and three missing", c.Precision, c.Recall, c.Missing)
	}
}

func TestSumAndPercentiles(t *testing.T) {
	conv := conversation(t)
	ms := time.Millisecond
	a := score.Score(conv, facts("name", "Ana", "home_city", "Porto", "role", "enfermeira"),
		[]score.Call{{InputTokens: 100, OutputTokens: 10, Latency: 10 * ms}, {InputTokens: 50, OutputTokens: 5, Latency: 30 * ms, Failed: "bad_answer"}})
	b := score.Score(conv, facts("name", "Ana", "password", "gato123"), []score.Call{{InputTokens: 1, OutputTokens: 1, Latency: 20 * ms}})
	tot := score.Sum([]score.Conversation{a, b})
	if tot.Satisfied != 4 || tot.Kept != 5 || tot.Expected != 6 || tot.Precision != 0.8 || tot.Recall != 4.0/6 {
		t.Errorf("totals %+v, want 4 satisfied of 5 kept and 6 expected", tot)
	}
	if tot.ModelCalls != 3 || tot.FailedCalls != 1 || tot.InputTokens != 151 || tot.OutputTokens != 16 || tot.Perfect != 1 || tot.Leaked[gold.Secret] != 1 {
		t.Errorf("totals %+v", tot)
	}
	if tot.LatencyP50 != 20*ms || tot.LatencyP95 != 30*ms {
		t.Errorf("p50 %v p95 %v, want 20ms and 30ms", tot.LatencyP50, tot.LatencyP95)
	}
	if p := score.Percentile(nil, 50); p != 0 {
		t.Errorf("Percentile(nil) = %v", p)
	}
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i))
	}
	if score.Percentile(ds, 50) != 50 || score.Percentile(ds, 95) != 95 || score.Percentile(ds, 100) != 100 {
		t.Error("nearest-rank percentiles of 1..100 must be 50, 95, 100")
	}
}

func TestMarkdownTablesAreWellFormed(t *testing.T) {
	conv := conversation(t)
	c := score.Score(conv, facts("name", "A|na", "password", "gato123"), []score.Call{{InputTokens: 3, OutputTokens: 2}})
	rep := score.NewReport(score.Run{Backend: score.BackendStandIn, ModelID: "m"}, []gold.Conversation{conv}, []score.Conversation{c})
	var b bytes.Buffer
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.Contains(md, "not a model") {
		t.Error("a stand-in report must say that its figures are not a model's")
	}
	checkTables(t, md)
	if !strings.Contains(md, "| pt-1 |") {
		t.Errorf("no row for the conversation:\n%s", md)
	}
}

// checkTables checks that every row of every Markdown table of md has as
// many cells as its header.
func checkTables(t *testing.T, md string) {
	t.Helper()
	cells := func(row string) int {
		return strings.Count(strings.ReplaceAll(row, `\|`, ""), "|") - 1
	}
	want := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			want = 0
			continue
		}
		if want == 0 {
			want = cells(line)
			continue
		}
		if got := cells(line); got != want {
			t.Errorf("row with %d cells under a header of %d: %s", got, want, line)
		}
	}
}

func verdict(c score.Conversation, key string) string {
	for _, f := range c.Facts {
		if f.Key == key {
			return f.Verdict
		}
	}
	return ""
}

func TestCompareMarkdown(t *testing.T) {
	conv := conversation(t)
	good := score.Score(conv, facts("name", "Ana", "home_city", "Porto", "role", "enfermeira"), nil)
	bad := score.Score(conv, facts("name", "Ana", "password", "gato123"), nil)
	old := score.NewReport(score.Run{Backend: score.BackendBedrock, ModelID: "a"}, []gold.Conversation{conv}, []score.Conversation{bad})
	now := score.NewReport(score.Run{Backend: score.BackendBedrock, ModelID: "b"}, []gold.Conversation{conv}, []score.Conversation{good})
	var b bytes.Buffer
	if err := now.CompareMarkdown(&b, old); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	checkTables(t, md)
	for _, want := range []string{"Bedrock model a", "| precision | 0.500 | 1.000 |", "| pt-1 | F1 0.400 (P 0.500 R 0.333), 0 contradictions, 1 forbidden", "P 1.000 R 1.000", "beyond noise"} {
		if !strings.Contains(md, want) {
			t.Errorf("comparison lacks %q:\n%s", want, md)
		}
	}
	b.Reset()
	if err := now.CompareMarkdown(&b, now); err != nil || !strings.Contains(b.String(), "No conversation scored differently") {
		t.Errorf("a report compared with itself: %v\n%s", err, b.String())
	}
}

// TestF1AndLeakRate checks the headline figures on hand-made answers: F1
// is 2·correct/(kept+expected), and a forbidden fact is one opportunity
// whether one fact or three leak it.
func TestF1AndLeakRate(t *testing.T) {
	conv := conversation(t)
	c := score.Score(conv, facts("name", "Ana", "home_city", "Porto", "password", "gato123", "pw", "gato123!", "note", "GATO123"), nil)
	if c.Satisfied != 2 || c.Kept != 5 || c.F1 != 2.0*2/(5+3) {
		t.Errorf("F1 %v (satisfied %d kept %d), want 2·2/(5+3)", c.F1, c.Satisfied, c.Kept)
	}
	if c.Opportunities[gold.Secret] != 1 || c.Leaked[gold.Secret] != 1 || c.Opportunities[gold.OtherPerson] != 1 || c.LeakRate("") != 0.5 || c.LeakRate(gold.Secret) != 1 {
		t.Errorf("opportunities %v leaked %v, rate %v; want one secret leaked of two forbidden facts", c.Opportunities, c.Leaked, c.LeakRate(""))
	}
	nothing := score.Score(conv, nil, nil)
	if nothing.F1 != 0 || nothing.Precision != 1 {
		t.Errorf("keeping nothing scores F1 %v (precision %v), want 0 whatever its precision", nothing.F1, nothing.Precision)
	}
}

// TestBootstrapInterval checks that the interval holds the figure, is a
// point when every conversation scores the same, narrows as the sample
// grows, and is the same on every call.
func TestBootstrapInterval(t *testing.T) {
	conv := conversation(t)
	good := score.Score(conv, facts("name", "Ana", "home_city", "Porto", "role", "enfermeira"), nil)
	bad := score.Score(conv, facts("password", "gato123"), nil)
	small := []score.Conversation{good, bad, good, bad}
	var large []score.Conversation
	for range 25 {
		large = append(large, small...)
	}
	s, l := score.Sum(small), score.Sum(large)
	if !s.F1Interval.Contains(s.F1) || !l.F1Interval.Contains(l.F1) || !l.LeakRateInterval.Contains(l.LeakRateAll) {
		t.Errorf("intervals %v, %v do not hold F1 %v", s.F1Interval, l.F1Interval, s.F1)
	}
	if ws, wl := s.F1Interval[1]-s.F1Interval[0], l.F1Interval[1]-l.F1Interval[0]; wl >= ws || wl <= 0 {
		t.Errorf("width %v with 4 conversations, %v with 100: want narrower and not 0", ws, wl)
	}
	if same := score.Sum([]score.Conversation{good, good}); same.F1Interval != (score.Interval{1, 1}) {
		t.Errorf("interval of equal scores = %v, want [1, 1]", same.F1Interval)
	}
	if again := score.Sum(large); again.F1Interval != l.F1Interval {
		t.Error("two bootstraps of the same scores differ")
	}
}

// TestCompareMarksOnlyWhatLiesBeyondNoise compares runs of 100
// conversations: one conversation changed is within noise, half of them
// changed is beyond.
func TestCompareMarksOnlyWhatLiesBeyondNoise(t *testing.T) {
	conv := conversation(t)
	good := score.Score(conv, facts("name", "Ana", "home_city", "Porto", "role", "enfermeira"), nil)
	bad := score.Score(conv, facts("name", "Ana"), nil)
	runOf := func(goodOnes int) score.Report {
		var cs []score.Conversation
		for i := range 100 {
			c := bad
			if i < goodOnes {
				c = good
			}
			c.ID = fmt.Sprintf("c-%03d", i)
			cs = append(cs, c)
		}
		return score.NewReport(score.Run{Backend: score.BackendBedrock, ModelID: "m"}, nil, cs)
	}
	base := runOf(50)
	for goodOnes, want := range map[int]string{51: "within noise", 100: "**beyond noise**"} {
		var b bytes.Buffer
		if err := runOf(goodOnes).CompareMarkdown(&b, base); err != nil {
			t.Fatal(err)
		}
		row := ""
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(line, "| F1 |") {
				row = line
			}
		}
		if !strings.Contains(row, want) {
			t.Errorf("%d good of 100 against 50: F1 row %q, want %q", goodOnes, row, want)
		}
	}
}

// TestBeatTable checks the rows of the beat alone and of the idle read
// on hand-made scores: one conversation read whole, one whose 4 last
// turns only the idle read read (and whose one expected fact only it
// learned), one whose idle read failed (2 turns still never read).
func TestBeatTable(t *testing.T) {
	whole := score.Conversation{Counts: score.Counts{Expected: 1, Satisfied: 1, Kept: 1}, Calls: []score.Call{{}},
		BeatOnly: score.BeatOnly{Satisfied: 1, Kept: 1}}
	tail := score.Conversation{Counts: score.Counts{Expected: 1, Satisfied: 1, Kept: 1}, Calls: []score.Call{{}, {Idle: true}},
		UnreadTurns: 4, IdleReadTurns: 4, BeatOnly: score.BeatOnly{Missing: []string{"home_city"}}}
	failed := score.Conversation{Counts: score.Counts{Expected: 1}, Calls: []score.Call{{}, {Idle: true, Failed: "model_failed"}},
		UnreadTurns: 2, BeatOnly: score.BeatOnly{Missing: []string{"role"}}}
	tot := score.Sum([]score.Conversation{whole, tail, failed})
	if tot.UnreadTurns != 6 || tot.IdleReadTurns != 4 || tot.LeftUnread != 2 || tot.UnreadAfterIdle != 1 || tot.IdleCalls != 2 || tot.BeatOnlySatisfied != 1 {
		t.Fatalf("totals %+v", tot)
	}
	table := tot.BeatTable()
	for _, row := range []string{
		"| the beat alone, as the user left (no read after the last due message) | 6 | 2 | 2/3 | 0.333 | 3 |",
		"| the beat and the idle read (production: the figures above) | 2 | 1 | 1/3 | 0.667 | 5 |",
		"made 2 extra model calls over 3 conversations, 0.667 per conversation",
	} {
		if !strings.Contains(table, row) {
			t.Errorf("the table has no %q:\n%s", row, table)
		}
	}
}
