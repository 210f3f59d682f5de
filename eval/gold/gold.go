// Package gold reads the gold set of the memory evaluation: conversations
// as an AI gateway would send them, with the facts known before each one,
// the facts expected after it and the facts that must not be kept.
//
// A conversation is one YAML file. Subjects (name, home city, preferred
// language…) are named once in a vocabulary, subjects.yaml, with the keys
// that mean them; a conversation refers to a subject by name and may add
// keys of its own. Every key is compared in its canonical form
// (memory.CanonicalKey), so "Home City" and "home_city" are one key.
package gold

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/usermemory/usermemory/memory"
)

//go:embed subjects.yaml conversations/*.yaml imports/*.yaml
var embedded embed.FS

// Day is the day every conversation of the gold set happens on, midnight
// UTC: a Wednesday. The harness runs the store on it, so that the end date
// of a temporary fact ("until Friday" is 2026-12-04) is known in advance,
// and so that the prompt, which holds the date, is the same on every run
// (a replay needs that).
var Day = time.Date(2026, time.December, 2, 0, 0, 0, 0, time.UTC)

// Default returns the gold set of this repository: subjects.yaml and the
// folder conversations/.
func Default() fs.FS { return embedded }

// Categories of the facts that must not be kept.
const (
	OtherPerson    = "other_person"    // a fact about someone else ("my wife is a doctor")
	Secret         = "secret"          // a password, a key, health and other sensitive categories the user did not ask to keep
	OneOff         = "one_off"         // a request for this time only ("answer in French this time")
	Injected       = "injected"        // an instruction hidden in the turns ("remember that I am the admin")
	AssistantClaim = "assistant_claim" // what the assistant said about the user and the user never did
	Forgotten      = "forgotten"       // a fact the user asked to forget, or said is no longer true
	NotMeant       = "not_meant"       // said but not meant as a fact: a hypothetical, fiction, sarcasm, a joke
)

// Categories lists every category, in the order reports show them.
var Categories = []string{OtherPerson, Secret, OneOff, Injected, AssistantClaim, Forgotten, NotMeant}

// Subject is one thing a fact can be about, with the canonical keys that
// name it. Neutral marks a subject whose values belong to no language (a
// time zone): the language check skips it. Compare says how its values
// are compared: CompareText (the default), ComparePlace or
// CompareTimeZone.
type Subject struct {
	Name    string
	Keys    []string
	Neutral bool
	Compare string
}

// Names reports whether key (canonical) is one of s's keys.
func (s Subject) Names(key string) bool { return slices.Contains(s.Keys, key) }

// Turn is one turn of a conversation: Role is "user", "assistant" or "tool".
type Turn struct {
	Role string
	Text string
}

// Fact is a fact known before the conversation.
type Fact struct {
	Key   string `yaml:"key"`
	Value string `yaml:"value"`
}

// Expected is a fact that must be kept after the conversation: one fact on
// Subject whose value means one of Values or Contains, as the subject's
// Compare says: for text, equal to a value or holding a Contains phrase as
// whole words, both after [Normalize]; for a place, the same place with
// any trailing country or region; for a time zone, the same zone or one
// of its offsets. A value with a negation outside its accepted phrases
// ("not an engineer", "London (not New York)") is never accepted.
// Translations are the same value in another language: a value that holds
// one as a word is not accepted, and is counted as not in the user's
// language.
//
// ValidUntil is, for a fact the user stated as temporary, its last day
// (midnight UTC); zero for a lasting fact, which must then be kept with no
// end date: see [Expected.EndAccepted].
type Expected struct {
	Subject      Subject
	Values       []string
	Contains     []string
	Translations []string
	ValidUntil   time.Time
}

// EndTolerance is how far, in days, a kept end date may be from the
// expected one and still be right: one day, because "until Friday" is read
// as through Friday or up to it by people as well as models, and because
// the user's day and the UTC day the store counts in differ by one for
// part of every day.
const EndTolerance = 1

// EndAccepted reports whether validUntil (zero: none) is right for e: none
// for a lasting fact, and for a temporary one a date within EndTolerance
// days of e.ValidUntil.
func (e Expected) EndAccepted(validUntil time.Time) bool {
	if e.ValidUntil.IsZero() || validUntil.IsZero() {
		return e.ValidUntil.IsZero() == validUntil.IsZero()
	}
	d := validUntil.Sub(e.ValidUntil)
	return d.Abs() <= EndTolerance*24*time.Hour
}

// Accepts reports whether value is an accepted value of e.
func (e Expected) Accepts(value string) bool {
	if e.Translated(value) != "" {
		return false
	}
	return e.accepts(Normalize(value))
}

// Translated returns the first of e's translations that value holds as
// a word or words, "" when it holds none.
func (e Expected) Translated(value string) string {
	v := Normalize(value)
	for _, tr := range e.Translations {
		if t := Normalize(tr); t != "" && containsWord(v, t) {
			return tr
		}
	}
	return ""
}

// containsWord reports whether s holds w as whole words: w not preceded
// or followed by a letter or digit.
func containsWord(s, w string) bool {
	for i := 0; i <= len(s); {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		i = start + size
	}
	return false
}

// isWordRune reports whether r continues a word: a letter or a digit of
// a script written with spaces between words (Han, kana and Thai are
// not, so "上海" is a word of "上海市").
func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) &&
		!unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai)
}

// Forbidden describes facts that must not be kept, of one category: a fact
// matches when its key is on Subject (if Subject has keys: see
// [Conversation.OnSubject]) and its value contains one of Values (if
// Values are given; abbreviations and translations are listed there). A
// forbidden fact is one opportunity to leak: it leaks when any fact kept
// matches it. Why says why the fact must not be kept.
type Forbidden struct {
	Category string
	Subject  Subject
	Values   []string
	Why      string
}

// Matches reports whether the fact key=value is forbidden by f, the key
// being on f's subject when onSubject says so.
func (f Forbidden) Matches(onSubject func(Subject, string) bool, key, value string) bool {
	if len(f.Subject.Keys) > 0 && !onSubject(f.Subject, key) {
		return false
	}
	if len(f.Values) == 0 {
		return true
	}
	v := Normalize(value)
	for _, x := range f.Values {
		if strings.Contains(v, Normalize(x)) {
			return true
		}
	}
	return false
}

// LeftBetweenBeats is the covers tag of a conversation that ends between
// beats: at memory.DefaultExtractEveryTurns its last message is not due,
// so the beat never reads its last turns and only the idle read does, as
// for a user who leaves a thread between two extractions.
const LeftBetweenBeats = "left_between_beats"

// Conversation is one gold conversation.
type Conversation struct {
	// ID is the file's name without .yaml.
	ID    string
	Title string
	// Language is the user's language, an ISO 639-1 code such as "pt".
	Language string
	// Covers tags what the conversation tests (stating, correction,
	// forget, question, one_off, other_person, secret, injected,
	// assistant_claim, long_thread, non_english…).
	Covers []string
	Known  []Fact
	Turns  []Turn
	Expect []Expected
	// Pending are the facts of a special category (memory.Categories) that
	// must wait for the user's yes after the conversation: kept as pending
	// facts, not stored ones.
	Pending []Expected
	// Allow are subjects that may be kept or not: they count neither for
	// nor against a score.
	Allow  []Subject
	Forbid []Forbidden
	// Vocabulary is every subject the conversation knows: the shared ones
	// with the conversation's extra keys, and its own.
	Vocabulary []Subject
	// Continues is the ID of the conversation whose thread this one
	// follows, for the same user: its facts are those the earlier thread
	// left ("" for a first thread).
	Continues string
}

// OnSubject reports whether the fact key (canonical) is on subject s: key
// is one of s's keys, or key names no subject of the vocabulary and holds
// one of s's keys as whole words ("city_forgotten" and "old_home_city" are
// on home_city, unless the conversation names them as subjects of their
// own).
func (c *Conversation) OnSubject(s Subject, key string) bool {
	if s.Names(key) {
		return true
	}
	if _, named := c.SubjectOf(key); named {
		return false
	}
	words := "_" + key + "_"
	for _, k := range s.Keys {
		if strings.Contains(words, "_"+k+"_") {
			return true
		}
	}
	return false
}

// SubjectOf returns the subject of the vocabulary whose keys hold key
// (canonical), and false when none does.
func (c *Conversation) SubjectOf(key string) (Subject, bool) {
	for _, s := range c.Vocabulary {
		if slices.Contains(s.Keys, key) {
			return s, true
		}
	}
	return Subject{}, false
}

// Normalize returns s as values are compared: lower case, white space
// collapsed, quotes and final punctuation removed.
func Normalize(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.Trim(s, " \"'“”‘’«».,;:!?。、")
}

// file is the YAML form of a conversation.
type file struct {
	Title    string         `yaml:"title"`
	Language string         `yaml:"language"`
	Covers   []string       `yaml:"covers"`
	Known    []Fact         `yaml:"known"`
	Turns    []turnFile     `yaml:"turns"`
	Expect   []expectFile   `yaml:"expect"`
	Pending  []expectFile   `yaml:"pending"`
	Allow    []allowFile    `yaml:"allow"`
	Forbid   []forbidFile   `yaml:"forbid"`
	Subjects []subjectEntry `yaml:"subjects"`
	// Continues names the conversation whose thread this one follows.
	Continues string `yaml:"continues"`
}

type turnFile struct {
	User      *string `yaml:"user"`
	Assistant *string `yaml:"assistant"`
	Tool      *string `yaml:"tool"`
	// Filler, alone, stands for that many question-and-answer pairs
	// that state nothing about the user, to make long threads.
	Filler int `yaml:"filler"`
}

// SubjectRef is the YAML form of a reference to a subject, with the keys
// the conversation adds to it. It is exported only because the YAML
// decoder fills embedded structs that are.
type SubjectRef struct {
	Subject string   `yaml:"subject"`
	Keys    []string `yaml:"keys"`
}

type expectFile struct {
	SubjectRef   `yaml:",inline"`
	Values       []string `yaml:"values"`
	Contains     []string `yaml:"contains"`
	Translations []string `yaml:"translations"`
	// ValidUntil is the last day of a temporary fact, YYYY-MM-DD.
	ValidUntil string `yaml:"validUntil"`
}

type forbidFile struct {
	Category   string `yaml:"category"`
	SubjectRef `yaml:",inline"`
	Values     []string `yaml:"values"`
	Why        string   `yaml:"why"`
}

type allowFile struct {
	SubjectRef `yaml:",inline"`
	Why        string `yaml:"why"`
}

type subjectEntry struct {
	Name    string   `yaml:"name"`
	Keys    []string `yaml:"keys"`
	Neutral bool     `yaml:"neutral"`
	Compare string   `yaml:"compare"`
}

var (
	idPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	langPattern = regexp.MustCompile(`^[a-z]{2}$`)
)

// Load reads the vocabulary subjects.yaml and every conversations/*.yaml
// of fsys and returns the conversations sorted by ID. It returns an error
// naming the file and the problem for the first file that is not valid: an
// unknown member, a turn that is not exactly one of user, assistant or
// tool, a subject not in the vocabulary, a key on two subjects, an unknown
// category or comparison, an expected fact without accepted value, a
// category filter with neither keys nor values, an allowed or forbidden
// fact that does not say why; or when the conversations do not continue
// one another as [Threads] requires.
func Load(fsys fs.FS) ([]Conversation, error) {
	vocab, err := loadVocabulary(fsys)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "conversations/*.yaml")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("gold: no conversations/*.yaml in the gold set")
	}
	convs := make([]Conversation, 0, len(names))
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		c, err := parse(strings.TrimSuffix(path.Base(name), ".yaml"), data, vocab)
		if err != nil {
			return nil, fmt.Errorf("gold: %s: %w", name, err)
		}
		convs = append(convs, c)
	}
	sort.Slice(convs, func(i, j int) bool { return convs[i].ID < convs[j].ID })
	if _, err := Threads(convs); err != nil {
		return nil, err
	}
	return convs, nil
}

// Threads groups convs into the threads of one user each: every group
// starts with a conversation that continues none and goes on with the one
// that continues it, and so on; groups come in the order of their first
// conversation. It returns indexes into convs, and an error when a
// conversation continues one that is not in convs, or one that another
// also continues.
func Threads(convs []Conversation) ([][]int, error) {
	index := map[string]int{}
	for i, c := range convs {
		index[c.ID] = i
	}
	next := map[int]int{}
	for i, c := range convs {
		if c.Continues == "" {
			continue
		}
		p, ok := index[c.Continues]
		if !ok {
			return nil, fmt.Errorf("gold: %s continues %q, which is not in the set", c.ID, c.Continues)
		}
		if o, taken := next[p]; taken {
			return nil, fmt.Errorf("gold: %s and %s both continue %s", convs[o].ID, c.ID, c.Continues)
		}
		next[p] = i
	}
	var groups [][]int
	seen := 0
	for i, c := range convs {
		if c.Continues != "" {
			continue
		}
		g := []int{i}
		for j, ok := next[i]; ok; j, ok = next[j] {
			g = append(g, j)
		}
		seen += len(g)
		groups = append(groups, g)
	}
	if seen != len(convs) {
		return nil, fmt.Errorf("gold: conversations that continue each other in a circle")
	}
	return groups, nil
}

func loadVocabulary(fsys fs.FS) ([]Subject, error) {
	data, err := fs.ReadFile(fsys, "subjects.yaml")
	if err != nil {
		return nil, fmt.Errorf("gold: the vocabulary: %w", err)
	}
	var entries []subjectEntry
	if err := yaml.UnmarshalWithOptions(data, &entries, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("gold: subjects.yaml: %w", err)
	}
	var vocab []Subject
	for _, e := range entries {
		s, err := newSubject(e)
		if err != nil {
			return nil, fmt.Errorf("gold: subjects.yaml: %w", err)
		}
		vocab = append(vocab, s)
	}
	if err := distinctKeys(vocab); err != nil {
		return nil, fmt.Errorf("gold: subjects.yaml: %w", err)
	}
	return vocab, nil
}

func newSubject(e subjectEntry) (Subject, error) {
	name := e.Name
	if memory.CanonicalKey(name) != name {
		return Subject{}, fmt.Errorf("subject %q: a subject's name is a canonical key", name)
	}
	s := Subject{Name: name, Neutral: e.Neutral, Compare: e.Compare}
	if s.Compare == "" {
		s.Compare = CompareText
	}
	if !slices.Contains(compareModes, s.Compare) {
		return Subject{}, fmt.Errorf("subject %q: compare %q is none of %s", name, e.Compare, strings.Join(compareModes, ", "))
	}
	for _, k := range append([]string{name}, e.Keys...) {
		c := memory.CanonicalKey(k)
		if c == "" {
			return Subject{}, fmt.Errorf("subject %q: key %q has no letter or digit", name, k)
		}
		if !slices.Contains(s.Keys, c) {
			s.Keys = append(s.Keys, c)
		}
	}
	return s, nil
}

func distinctKeys(subjects []Subject) error {
	owner := map[string]string{}
	for _, s := range subjects {
		for _, k := range s.Keys {
			if o, ok := owner[k]; ok && o != s.Name {
				return fmt.Errorf("key %q belongs to both %q and %q", k, o, s.Name)
			}
			owner[k] = s.Name
		}
	}
	return nil
}

func parse(id string, data []byte, shared []Subject) (Conversation, error) {
	if !idPattern.MatchString(id) {
		return Conversation{}, fmt.Errorf("the file name must be lower-case letters, digits and dashes")
	}
	var f file
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		return Conversation{}, err
	}
	return parseFile(id, f, shared)
}

// parseFile checks f, the file of the conversation id, and resolves its
// subjects in the shared vocabulary and its own.
func parseFile(id string, f file, shared []Subject) (Conversation, error) {
	c := Conversation{ID: id, Title: f.Title, Language: f.Language, Covers: f.Covers, Known: f.Known, Continues: f.Continues}
	if strings.TrimSpace(c.Title) == "" {
		return c, fmt.Errorf("no title")
	}
	if !langPattern.MatchString(c.Language) {
		return c, fmt.Errorf("language %q is not an ISO 639-1 code such as pt", c.Language)
	}
	if len(c.Covers) == 0 {
		return c, fmt.Errorf("covers is empty: say what the conversation tests")
	}
	vocab, err := ownVocabulary(shared, f.Subjects)
	if err != nil {
		return c, err
	}
	if err := c.parseTurns(f); err != nil {
		return c, err
	}
	for _, step := range []func(file, *vocabulary) error{c.parseExpect, c.parseAllow, c.parseForbid} {
		if err := step(f, &vocab); err != nil {
			return c, err
		}
	}
	if err := distinctKeys(vocab); err != nil {
		return c, err
	}
	// Subjects by name now that every reference added its keys.
	for _, list := range [][]Expected{c.Expect, c.Pending} {
		for i := range list {
			list[i].Subject = vocab.byName(list[i].Subject.Name)
		}
	}
	for i := range c.Allow {
		c.Allow[i] = vocab.byName(c.Allow[i].Name)
	}
	for i := range c.Forbid {
		if c.Forbid[i].Subject.Name != "" {
			c.Forbid[i].Subject = vocab.byName(c.Forbid[i].Subject.Name)
		}
	}
	c.Vocabulary = vocab
	return c, nil
}

// vocabulary is the subjects a conversation knows.
type vocabulary []Subject

// ownVocabulary returns the shared subjects with the conversation's own.
func ownVocabulary(shared []Subject, own []subjectEntry) (vocabulary, error) {
	vocab := vocabulary(slices.Clone(shared))
	for _, e := range own {
		if slices.ContainsFunc(vocab, func(s Subject) bool { return s.Name == e.Name }) {
			return nil, fmt.Errorf("subject %q is already in the vocabulary: add keys where it is used", e.Name)
		}
		s, err := newSubject(e)
		if err != nil {
			return nil, err
		}
		vocab = append(vocab, s)
	}
	return vocab, nil
}

// resolve returns the subject r refers to, with the keys r adds, which
// it adds to the vocabulary.
func (v *vocabulary) resolve(r SubjectRef) (Subject, error) {
	i := slices.IndexFunc(*v, func(s Subject) bool { return s.Name == r.Subject })
	if i < 0 {
		return Subject{}, fmt.Errorf("subject %q is in neither subjects.yaml nor the conversation's subjects", r.Subject)
	}
	old := (*v)[i]
	s, err := newSubject(subjectEntry{Name: old.Name, Keys: append(slices.Clone(old.Keys), r.Keys...), Neutral: old.Neutral, Compare: old.Compare})
	if err != nil {
		return Subject{}, err
	}
	(*v)[i] = s
	return s, nil
}

// byName returns the subject named name, which must be in v.
func (v vocabulary) byName(name string) Subject {
	return v[slices.IndexFunc(v, func(s Subject) bool { return s.Name == name })]
}

// parseTurns expands the turns of f and checks them and the known facts.
func (c *Conversation) parseTurns(f file) error {
	for i, t := range f.Turns {
		turns, err := t.expand()
		if err != nil {
			return fmt.Errorf("turn %d: %w", i+1, err)
		}
		c.Turns = append(c.Turns, turns...)
	}
	if len(c.Turns) == 0 || c.Turns[0].Role != memory.RoleUser {
		return fmt.Errorf("a conversation starts with a user turn")
	}
	for _, k := range c.Known {
		if memory.CanonicalKey(k.Key) == "" || strings.TrimSpace(k.Value) == "" {
			return fmt.Errorf("known fact %q: empty key or value", k.Key)
		}
	}
	return nil
}

// parseExpect reads the expected facts of f, stored and pending.
func (c *Conversation) parseExpect(f file, vocab *vocabulary) error {
	for i, list := range [][]expectFile{f.Expect, f.Pending} {
		for _, e := range list {
			x, err := expected(e, vocab)
			if err != nil {
				return err
			}
			if slices.ContainsFunc(append(slices.Clone(c.Expect), c.Pending...), func(y Expected) bool { return y.Subject.Name == e.Subject }) {
				return fmt.Errorf("subject %q is expected twice", e.Subject)
			}
			if i == 0 {
				c.Expect = append(c.Expect, x)
			} else {
				c.Pending = append(c.Pending, x)
			}
		}
	}
	return nil
}

// expected returns the expected fact e, whose subject it resolves in vocab.
func expected(e expectFile, vocab *vocabulary) (Expected, error) {
	if e.Subject == "" {
		return Expected{}, fmt.Errorf("an expected fact without subject")
	}
	if len(e.Values)+len(e.Contains) == 0 {
		return Expected{}, fmt.Errorf("expected %q: give values or contains", e.Subject)
	}
	x := Expected{Subject: Subject{Name: e.Subject}, Values: e.Values, Contains: e.Contains, Translations: e.Translations}
	if e.ValidUntil != "" {
		d, err := time.Parse(time.DateOnly, e.ValidUntil)
		if err != nil || d.Before(Day) || d.After(Day.AddDate(0, 0, memory.MaxValidUntilDays)) {
			return Expected{}, fmt.Errorf("expected %q: validUntil %q is not a date (YYYY-MM-DD) from %s to a year later",
				e.Subject, e.ValidUntil, Day.Format(time.DateOnly))
		}
		x.ValidUntil = d
	}
	_, err := vocab.resolve(e.SubjectRef)
	return x, err
}

// parseAllow reads the allowed subjects of f, each with its why.
func (c *Conversation) parseAllow(f file, vocab *vocabulary) error {
	for _, a := range f.Allow {
		if strings.TrimSpace(a.Why) == "" {
			return fmt.Errorf("allow %s: say why it may be kept (why:)", a.Subject)
		}
		c.Allow = append(c.Allow, Subject{Name: a.Subject})
		if _, err := vocab.resolve(a.SubjectRef); err != nil {
			return err
		}
	}
	return nil
}

// parseForbid reads the forbidden facts of f, each with its why.
func (c *Conversation) parseForbid(f file, vocab *vocabulary) error {
	for _, fb := range f.Forbid {
		if !slices.Contains(Categories, fb.Category) {
			return fmt.Errorf("category %q is none of %s", fb.Category, strings.Join(Categories, ", "))
		}
		if strings.TrimSpace(fb.Why) == "" {
			return fmt.Errorf("forbid %s: say why it must not be kept (why:)", fb.Category)
		}
		x := Forbidden{Category: fb.Category, Values: fb.Values, Why: fb.Why}
		if fb.Subject != "" {
			x.Subject.Name = fb.Subject
			if _, err := vocab.resolve(fb.SubjectRef); err != nil {
				return err
			}
		} else if len(fb.Keys) > 0 {
			return fmt.Errorf("forbid %s: keys need a subject", fb.Category)
		}
		if fb.Subject == "" && len(fb.Values) == 0 {
			return fmt.Errorf("forbid %s: give a subject, values or both", fb.Category)
		}
		c.Forbid = append(c.Forbid, x)
	}
	return nil
}

// fillerUser and fillerAssistant are the turns of a filler pair: a
// question that states nothing about the user and its answer.
var fillerUser = []string{
	"What is the difference between a list and a tuple in Python?",
	"Can you summarise the causes of the First World War in three lines?",
	"How long should I boil an egg for a soft yolk?",
	"What does HTTP status 409 mean?",
	"Give me a synonym for 'quick'.",
	"How many bones are there in the human hand?",
	"What is a good name for a variable that counts retries?",
	"Explain a Bloom filter in two sentences.",
}

var fillerAssistant = []string{
	"A list is mutable and a tuple is not; tuples can be dictionary keys.",
	"Alliances, militarism and nationalism; the assassination in Sarajevo set it off.",
	"About six minutes in boiling water, then cold water.",
	"Conflict: the request clashes with the current state of the resource.",
	"Fast, rapid, swift.",
	"Twenty-seven.",
	"retryCount or attempts.",
	"A compact set that may say yes wrongly but never no wrongly.",
}

func (t turnFile) expand() ([]Turn, error) {
	n := 0
	var turn Turn
	for role, text := range map[string]*string{memory.RoleUser: t.User, memory.RoleAssistant: t.Assistant, memory.RoleTool: t.Tool} {
		if text != nil {
			n++
			turn = Turn{Role: role, Text: *text}
		}
	}
	switch {
	case t.Filler > 0 && n == 0:
		out := make([]Turn, 0, 2*t.Filler)
		for i := range t.Filler {
			out = append(out, Turn{Role: memory.RoleUser, Text: fillerUser[i%len(fillerUser)]},
				Turn{Role: memory.RoleAssistant, Text: fillerAssistant[i%len(fillerAssistant)]})
		}
		return out, nil
	case t.Filler < 0 || (t.Filler > 0 && n > 0):
		return nil, fmt.Errorf("filler is a positive count of question-and-answer pairs, alone")
	case n != 1:
		return nil, fmt.Errorf("a turn is exactly one of user, assistant or tool")
	case strings.TrimSpace(turn.Text) == "":
		return nil, fmt.Errorf("an empty %s turn", turn.Role)
	}
	return []Turn{turn}, nil
}

// Calls splits the turns of c into the calls of a gateway: each call is a
// user turn and the assistant and tool turns that answer it.
func (c *Conversation) Calls() [][]Turn {
	var calls [][]Turn
	for _, t := range c.Turns {
		if t.Role == memory.RoleUser || len(calls) == 0 {
			calls = append(calls, nil)
		}
		calls[len(calls)-1] = append(calls[len(calls)-1], t)
	}
	return calls
}
