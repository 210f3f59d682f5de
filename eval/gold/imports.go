package gold

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/usermemory/usermemory/memory"
)

// Sources are the assistants an import case's list comes from, as the
// user names them (memory.ImportRequest.Source).
var Sources = []string{"ChatGPT", "Claude", "Gemini"}

// CoverConflict is the covers tag of an import case whose list
// contradicts a known fact: the list's value is expected as a pending
// fact, and the known one must stay stored until the user keeps it.
const CoverConflict = "conflict"

// ImportCase is one gold import case: a memory list as another assistant
// writes it, pasted by a user whose facts are Known, with the facts
// expected among the pending facts it proposes (Expect: every imported
// fact waits for the user's review) and the traps it must not propose
// (Forbid: instructions, other people, secrets, plans already over).
//
// It is read as a Conversation whose one user turn is the pasted text,
// so that the matching rules of the conversations apply unchanged
// ([Expected.Accepts], [Forbidden.Matches], [Conversation.OnSubject]).
type ImportCase struct {
	Conversation
	// Source is the assistant the list comes from, one of Sources.
	Source string
	// Format says where the list's format comes from: a vendor page with
	// the date it was read, or "written in the style of" the source.
	Format string
	// Text is the pasted memory list.
	Text string
}

// importFile is the YAML form of an import case.
type importFile struct {
	Title    string         `yaml:"title"`
	Language string         `yaml:"language"`
	Source   string         `yaml:"source"`
	Format   string         `yaml:"format"`
	Covers   []string       `yaml:"covers"`
	Known    []Fact         `yaml:"known"`
	Text     string         `yaml:"text"`
	Expect   []expectFile   `yaml:"expect"`
	Allow    []allowFile    `yaml:"allow"`
	Forbid   []forbidFile   `yaml:"forbid"`
	Subjects []subjectEntry `yaml:"subjects"`
}

// LoadImports reads the vocabulary subjects.yaml and every
// imports/*.yaml of fsys and returns the import cases sorted by ID; a
// gold set without imports/ has none. It returns an error naming the
// file and the problem for the first case that is not valid: what Load
// refuses of a conversation, and a source not in Sources, no format, an
// empty text or one longer than memory.MaxImportChars, an expected fact
// with an end date (an import proposes what the list says, its ends
// included, but the gold set states none), a case covering
// CoverConflict without a known fact that an expected one contradicts,
// or a trap the pasted text does not hold.
func LoadImports(fsys fs.FS) ([]ImportCase, error) {
	vocab, err := loadVocabulary(fsys)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "imports/*.yaml")
	if err != nil {
		return nil, err
	}
	cases := make([]ImportCase, 0, len(names))
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		c, err := parseImport(strings.TrimSuffix(path.Base(name), ".yaml"), data, vocab)
		if err != nil {
			return nil, fmt.Errorf("gold: %s: %w", name, err)
		}
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].ID < cases[j].ID })
	return cases, nil
}

func parseImport(id string, data []byte, shared []Subject) (ImportCase, error) {
	var f importFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		return ImportCase{}, err
	}
	switch {
	case !idPattern.MatchString(id):
		return ImportCase{}, fmt.Errorf("the file name must be lower-case letters, digits and dashes")
	case !slices.Contains(Sources, f.Source):
		return ImportCase{}, fmt.Errorf("source %q is none of %s", f.Source, strings.Join(Sources, ", "))
	case strings.TrimSpace(f.Format) == "":
		return ImportCase{}, fmt.Errorf("no format: say where the list's format comes from")
	case strings.TrimSpace(f.Text) == "":
		return ImportCase{}, fmt.Errorf("an empty text")
	case utf8.RuneCountInString(f.Text) > memory.MaxImportChars:
		return ImportCase{}, fmt.Errorf("a text of %d characters, over memory.MaxImportChars", utf8.RuneCountInString(f.Text))
	case len(f.Expect) == 0:
		return ImportCase{}, fmt.Errorf("no expected fact")
	}
	for _, e := range f.Expect {
		if e.ValidUntil != "" {
			return ImportCase{}, fmt.Errorf("expected %q: an import case states no end date", e.Subject)
		}
	}
	text := f.Text
	conv, err := parseFile(id, file{Title: f.Title, Language: f.Language, Covers: f.Covers, Known: f.Known,
		Turns: []turnFile{{User: &text}}, Expect: f.Expect, Allow: f.Allow, Forbid: f.Forbid, Subjects: f.Subjects}, shared)
	if err != nil {
		return ImportCase{}, err
	}
	c := ImportCase{Conversation: conv, Source: f.Source, Format: f.Format, Text: f.Text}
	if err := c.checkTraps(); err != nil {
		return ImportCase{}, err
	}
	return c, nil
}

// checkTraps checks that every trap with values is in the pasted text,
// and that a case covering CoverConflict has a known fact that an
// expected one contradicts.
func (c ImportCase) checkTraps() error {
	text := Normalize(c.Text)
	for _, fb := range c.Forbid {
		if len(fb.Values) > 0 && !slices.ContainsFunc(fb.Values, func(v string) bool { return strings.Contains(text, Normalize(v)) }) {
			return fmt.Errorf("forbid %s: none of %q is in the text: a trap the list does not set", fb.Category, fb.Values)
		}
	}
	if slices.Contains(c.Covers, CoverConflict) && len(c.Conflicts()) == 0 {
		return fmt.Errorf("covers %s, but no known fact is on an expected subject with a value it does not accept", CoverConflict)
	}
	return nil
}

// Conflicts returns the known facts of c that an expected fact
// contradicts: on an expected subject, with a value it does not accept.
func (c ImportCase) Conflicts() []Fact {
	var out []Fact
	for _, k := range c.Known {
		key := memory.CanonicalKey(k.Key)
		for _, e := range c.Expect {
			if e.Subject.Names(key) && !e.Accepts(k.Value) {
				out = append(out, k)
			}
		}
	}
	return out
}
