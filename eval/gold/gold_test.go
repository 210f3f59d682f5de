package gold_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/gold/goldtest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

func load(t *testing.T) []gold.Conversation {
	t.Helper()
	convs, err := gold.Load(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	return convs
}

// TestGoldSetCoverage holds the gold set to what the evaluation promises:
// at least 60 conversations, each kind of case, long threads and five
// languages other than English with expected values.
func TestGoldSetCoverage(t *testing.T) {
	convs := load(t)
	if len(convs) < 60 {
		t.Errorf("%d conversations, want at least 60", len(convs))
	}
	tags := map[string]int{}
	langs := map[string]int{}
	expectedSubjects := map[string]int{}
	categories := map[string]int{}
	temporary, pending := 0, 0
	for _, c := range convs {
		pending += len(c.Pending)
		for _, e := range c.Expect {
			if !e.ValidUntil.IsZero() {
				temporary++
			}
		}
		for _, tag := range c.Covers {
			tags[tag]++
		}
		for _, e := range c.Expect {
			expectedSubjects[e.Subject.Name]++
			if c.Language != "en" {
				langs[c.Language]++
			}
		}
		for _, f := range c.Forbid {
			categories[f.Category]++
		}
		if slices.Contains(c.Covers, "long_thread") && len(c.Turns) < 42 {
			t.Errorf("%s: a long thread of %d turns, want at least 42 (a fact stated 40 turns before the end)", c.ID, len(c.Turns))
		}
	}
	for _, tag := range []string{"stating", "correction", "move", "forget", "question", "one_off", "other_person",
		"secret", "health", "injected", "assistant_claim", "long_thread", "non_english", "temporary", "pending"} {
		if tags[tag] < 3 {
			t.Errorf("covers %q: %d conversations, want at least 3", tag, tags[tag])
		}
	}
	for _, s := range []string{"name", "preferred_language", "role", "home_city", "time_zone", "answer_style"} {
		if expectedSubjects[s] < 3 {
			t.Errorf("subject %s expected in %d conversations, want at least 3", s, expectedSubjects[s])
		}
	}
	if temporary < 3 || pending < 3 {
		t.Errorf("%d facts expected with an end date and %d expected pending, want at least 3 of each", temporary, pending)
	}
	for _, c := range gold.Categories {
		if categories[c] < 3 {
			t.Errorf("category %s forbidden in %d conversations, want at least 3", c, categories[c])
		}
	}
	if len(langs) < 5 {
		t.Errorf("expected values in %d languages other than English (%v), want at least 5", len(langs), langs)
	}
}

// TestGoldSetLeavesBetweenBeats holds the gold set to how threads end:
// at the default extractEveryTurns, a conversation whose last message is
// not due (the user leaves between beats, and only the idle read reads
// its last turns) covers left_between_beats, and one that covers it ends
// so. At least 10 do, and in at least 8 of them an expected fact is first
// stated in the turns after the last due message, so that the report's
// row of the beat alone measures what leaving costs.
func TestGoldSetLeavesBetweenBeats(t *testing.T) {
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	between, statedLate := 0, 0
	for _, c := range load(t) {
		last := 0
		if due := goldtest.DueCounts(store, c); len(due) > 0 {
			last = due[len(due)-1]
		}
		tagged := slices.Contains(c.Covers, gold.LeftBetweenBeats)
		if tagged != (last != len(c.Turns)) {
			t.Errorf("%s: %d of %d turns after the last due message at extractEveryTurns %d, and covers %s is %v: tag it exactly when the conversation ends between beats",
				c.ID, len(c.Turns)-last, len(c.Turns), memory.DefaultExtractEveryTurns, gold.LeftBetweenBeats, tagged)
		}
		if !tagged {
			continue
		}
		between++
		for _, e := range append(slices.Clone(c.Expect), c.Pending...) {
			if i := firstStated(c, e); i >= last {
				statedLate++
				break
			}
		}
	}
	if between < 10 || statedLate < 8 {
		t.Errorf("%d conversations end between beats, %d of them with an expected fact first stated after the last due message, want at least 10 and 8", between, statedLate)
	}
}

// firstStated returns the index in c.Turns of the first user turn that
// holds an accepted value of e (three characters or more, case folded),
// or -1.
func firstStated(c gold.Conversation, e gold.Expected) int {
	for i, turn := range c.Turns {
		if turn.Role != memory.RoleUser {
			continue
		}
		low := strings.ToLower(turn.Text)
		for _, v := range append(slices.Clone(e.Values), e.Contains...) {
			if v = strings.ToLower(v); len([]rune(v)) > 2 && strings.Contains(low, v) {
				return i
			}
		}
	}
	return -1
}

// TestFirstStated checks the index of the turn that states a value, so
// that the count above cannot pass on a wrong one.
func TestFirstStated(t *testing.T) {
	c := gold.Conversation{Turns: []gold.Turn{
		{Role: "user", Text: "hi"}, {Role: "assistant", Text: "Lisbon is nice"},
		{Role: "user", Text: "I live in LISBON now"}, {Role: "assistant", Text: "ok"},
	}}
	if got := firstStated(c, gold.Expected{Values: []string{"Lisbon"}}); got != 2 {
		t.Errorf("firstStated = %d, want 2 (the assistant's turn does not count)", got)
	}
	if got := firstStated(c, gold.Expected{Values: []string{"Porto"}}); got != -1 {
		t.Errorf("firstStated = %d, want -1", got)
	}
}

func TestCalls(t *testing.T) {
	c := gold.Conversation{Turns: []gold.Turn{
		{Role: "user", Text: "a"}, {Role: "assistant", Text: "b"},
		{Role: "user", Text: "c"}, {Role: "tool", Text: "d"}, {Role: "assistant", Text: "e"},
		{Role: "user", Text: "f"},
	}}
	calls := c.Calls()
	if len(calls) != 3 || len(calls[0]) != 2 || len(calls[1]) != 3 || len(calls[2]) != 1 {
		t.Errorf("calls = %v, want 2, 3 and 1 turns", calls)
	}
}

func TestAcceptsAndMatches(t *testing.T) {
	e := gold.Expected{Values: []string{"Lisboa"}, Contains: []string{"enfermeira"}}
	for v, want := range map[string]bool{"lisboa": true, " Lisboa. ": true, "Lisboa, Portugal": false, "Enfermeira": true, "nurse": false, "enfermeiras": false} {
		if got := e.Accepts(v); got != want {
			t.Errorf("Accepts(%q) = %v, want %v", v, got, want)
		}
	}
	f := gold.Forbidden{Subject: gold.Subject{Keys: []string{"role"}}, Values: []string{"admin"}}
	on := (&gold.Conversation{}).OnSubject
	for kv, want := range map[[2]string]bool{{"role", "Admin"}: true, {"role", "nurse"}: false, {"access", "admin"}: false, {"old_role", "admin"}: true} {
		if got := f.Matches(on, kv[0], kv[1]); got != want {
			t.Errorf("Matches(%q, %q) = %v, want %v", kv[0], kv[1], got, want)
		}
	}
	anyKey := gold.Forbidden{Values: []string{"hunter2"}}
	if !anyKey.Matches(on, "note", "pw hunter2") || anyKey.Matches(on, "note", "hunter") {
		t.Error("a values-only filter must match the value on any key")
	}
}

func TestLoadRefuses(t *testing.T) {
	vocab := "- name: name\n  keys: [first_name]\n- name: home_city\n  keys: [city]\n"
	good := "title: t\nlanguage: en\ncovers: [stating]\nturns:\n  - user: hi\n"
	cases := []struct {
		name, vocab, conv, want string
	}{
		{"unknown member", vocab, good + "extra: 1\n", "extra"},
		{"two roles in a turn", vocab, "title: t\nlanguage: en\ncovers: [x]\nturns:\n  - {user: a, assistant: b}\n", "exactly one"},
		{"starts with the assistant", vocab, "title: t\nlanguage: en\ncovers: [x]\nturns:\n  - assistant: a\n", "starts with a user turn"},
		{"unknown subject", vocab, good + "expect:\n  - subject: pet\n    values: [cat]\n", `subject "pet"`},
		{"no accepted value", vocab, good + "expect:\n  - subject: name\n", "give values or contains"},
		{"unknown category", vocab, good + "forbid:\n  - category: rude\n    values: [x]\n", `category "rude"`},
		{"empty filter", vocab, good + "forbid:\n  - category: secret\n    why: x\n", "give a subject, values or both"},
		{"no why", vocab, good + "forbid:\n  - category: secret\n    values: [x]\n", "say why"},
		{"no why to allow", vocab, good + "allow:\n  - subject: name\n", "say why"},
		{"unknown compare", "- name: name\n  compare: fuzzy\n", good, "compare"},
		{"key on two subjects", vocab, good + "expect:\n  - subject: name\n    keys: [city]\n    values: [x]\n", "belongs to both"},
		{"bad language", vocab, strings.Replace(good, "language: en", "language: english", 1), "ISO 639-1"},
		{"key on two subjects in the vocabulary", vocab + "- name: town\n  keys: [city]\n", good, "belongs to both"},
		{"not a date", vocab, good + "expect:\n  - subject: name\n    values: [x]\n    validUntil: Friday\n", "validUntil"},
		{"end before the day", vocab, good + "expect:\n  - subject: name\n    values: [x]\n    validUntil: 2026-12-01\n", "validUntil"},
		{"expected stored and pending", vocab, good + "expect:\n  - subject: name\n    values: [x]\npending:\n  - subject: name\n    values: [x]\n", "expected twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"subjects.yaml":          {Data: []byte(tc.vocab)},
				"conversations/c-1.yaml": {Data: []byte(tc.conv)},
			}
			_, err := gold.Load(fsys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load = %v, want an error about %q", err, tc.want)
			}
		})
	}
	fsys := fstest.MapFS{"subjects.yaml": {Data: []byte(vocab)}, "conversations/c-1.yaml": {Data: []byte(good)}}
	if convs, err := gold.Load(fsys); err != nil || len(convs) != 1 || convs[0].ID != "c-1" {
		t.Errorf("Load(valid) = %v, %v", convs, err)
	}
}

func TestFillerExpands(t *testing.T) {
	fsys := fstest.MapFS{
		"subjects.yaml":          {Data: []byte("- name: name\n")},
		"conversations/c-1.yaml": {Data: []byte("title: t\nlanguage: en\ncovers: [long_thread]\nturns:\n  - user: hi\n  - assistant: hello\n  - filler: 3\n")},
	}
	convs, err := gold.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(convs[0].Turns); n != 8 {
		t.Errorf("%d turns, want 2 + 3 pairs = 8", n)
	}
	if c := convs[0].Calls(); len(c) != 4 {
		t.Errorf("%d calls, want 4", len(c))
	}
}

func TestTranslationIsNotAccepted(t *testing.T) {
	e := gold.Expected{Contains: []string{"directas", "cortas"}, Translations: []string{"direct answers", "short"}}
	for v, want := range map[string]bool{"respuestas cortas y directas": true, "short and direct answers": false, "shortish": false, "Short.": false} {
		if got := e.Accepts(v); got != want {
			t.Errorf("Accepts(%q) = %v, want %v", v, got, want)
		}
	}
	if got := e.Translated("shortish answers"); got != "" {
		t.Errorf(`Translated("shortish answers") = %q, want "" (not the word "short")`, got)
	}
	ja := gold.Expected{Contains: []string{"大阪"}, Translations: []string{"Osaka"}}
	if !ja.Accepts("大阪") || ja.Accepts("Osaka") || ja.Translated("Osaka, Japan") != "Osaka" {
		t.Error("a romanised value must count as the translation")
	}
}
