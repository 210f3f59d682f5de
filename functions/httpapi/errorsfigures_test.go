package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// exampleValueChars is the length of the value in docs/errors.md's
// example problem.
const exampleValueChars = 412

// TestErrorsDocExampleIsTheCode holds the problem docs/errors.md shows to
// the one the code answers when a value of exampleValueChars characters
// is set by hand under the default caps.
func TestErrorsDocExampleIsTheCode(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", errorsDoc))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s has no json example", errorsDoc)
	}
	var doc Problem
	dec := json.NewDecoder(bytes.NewReader(m[1]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s's example: %v", errorsDoc, err)
	}
	store, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.UpsertFact(context.Background(), memory.Scope{TenantID: "acme", UserID: "u-123"}, "bio", strings.Repeat("a", exampleValueChars))
	if got := ProblemFor(err); got != doc {
		t.Errorf("%s's example is %+v; the code answers %+v", errorsDoc, doc, got)
	}
}

// TestErrorsDocFigures holds the limits docs/errors.md's table names to
// the code, and its count of the codes that come from the store the
// service comes from (those below the service's own 5380000000000).
func TestErrorsDocFigures(t *testing.T) {
	a := newErrorScan(t, filepath.Join("..", ".."))
	for _, dir := range codePackages {
		a.readCodes(filepath.Join("..", "..", dir))
	}
	inherited := 0
	for _, c := range a.codes {
		if c.value < 5380000000000 {
			inherited++
		}
	}
	words := []string{"no", "one", "two", "three", "four", "five", "six"}
	docblock.CheckFigures(t, filepath.Join("..", "..", errorsDoc), docblock.Figures{
		"the body is over ([0-9]+) KiB":                   DefaultMaxBodyBytes / 1024,
		"from today \\(UTC\\) to ([0-9]+) days ahead":     memory.MaxValidUntilDays,
		"\\(`httpapi.AnswerBound`, ([0-9]+) s\\)":         int(AnswerBound / time.Second),
		"The first ([a-z]+) codes are those of the store": words[inherited],
	})
}
