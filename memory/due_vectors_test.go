package memory_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// dueVectorsPath is the file of isExtractDue vectors that this package and
// the TypeScript client (clients/typescript) both answer.
const dueVectorsPath = "../testdata/producer-vectors/due.json"

// dueVectorFile is testdata/producer-vectors/due.json.
type dueVectorFile struct {
	About   string      `json:"about"`
	Configs []dueConfig `json:"configs"`
}

// dueConfig is one configuration and its cases, each [previousTurnCount,
// turnCount, 1 when due or 0].
type dueConfig struct {
	ExtractEveryTurns  int      `json:"extractEveryTurns"`
	ExtractionDisabled bool     `json:"extractionDisabled"`
	Cases              [][3]int `json:"cases"`
}

// TestSharedDueVectors holds isExtractDue to the shared vectors; the
// TypeScript client's tests hold its isExtractDue to the same file.
// go test -update rewrites the file from this package's answers.
func TestSharedDueVectors(t *testing.T) {
	if *update {
		writeDueVectors(t)
	}
	raw, err := os.ReadFile(dueVectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var f dueVectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range f.Configs {
		store := newDueStore(t, c)
		for _, tc := range c.Cases {
			if got := store.IsExtractDue(tc[0], tc[1]); got != (tc[2] == 1) {
				t.Errorf("every %d, disabled %v: isExtractDue(%d, %d) = %v, want %v", c.ExtractEveryTurns, c.ExtractionDisabled, tc[0], tc[1], got, tc[2] == 1)
			}
			n++
		}
	}
	if n < 500 {
		t.Errorf("%s holds %d cases, want at least 500: go test ./memory/ -run SharedDueVectors -update", dueVectorsPath, n)
	}
}

// writeDueVectors writes the vector file with this package's answers: for
// a few beats, every previous count from -1 to 13 and every count from -1
// to 20, and counts near the largest.
func writeDueVectors(t *testing.T) {
	t.Helper()
	f := dueVectorFile{About: "Shared test vectors of isExtractDue: memory (memory/due_vectors_test.go) and the TypeScript client " +
		"(clients/typescript/test/vectors.test.ts) must give these answers. Each case is [previousTurnCount, turnCount, 1 when due]. " +
		"Written by: go test ./memory/ -run SharedDueVectors -update."}
	for _, c := range []dueConfig{{ExtractEveryTurns: 1}, {ExtractEveryTurns: 4}, {ExtractEveryTurns: 6}, {ExtractEveryTurns: 7},
		{ExtractEveryTurns: 6, ExtractionDisabled: true}, {ExtractEveryTurns: memory.ExtractEveryTurnsUpperBound}} {
		store := newDueStore(t, c)
		pairs := [][2]int{{999, 1000}, {1000, 1999}, {1999, 2000}, {2147483000, 2147483647}, {2147483646, 2147483647}}
		for prev := -1; prev <= 13; prev++ {
			for count := -1; count <= 20; count++ {
				pairs = append(pairs, [2]int{prev, count})
			}
		}
		for _, p := range pairs {
			due := 0
			if store.IsExtractDue(p[0], p[1]) {
				due = 1
			}
			c.Cases = append(c.Cases, [3]int{p[0], p[1], due})
		}
		f.Configs = append(f.Configs, c)
	}
	var buf bytes.Buffer
	buf.WriteString("{\n  \"about\": ")
	about, _ := json.Marshal(f.About)
	buf.Write(about)
	buf.WriteString(",\n  \"configs\": [")
	for i, c := range f.Configs {
		if i > 0 {
			buf.WriteString(",")
		}
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("\n    ")
		buf.Write(line)
	}
	buf.WriteString("\n  ]\n}\n")
	if err := os.WriteFile(dueVectorsPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newDueStore returns a store configured as c.
func newDueStore(t *testing.T, c dueConfig) *memory.Store {
	t.Helper()
	store, err := memory.New(memorytest.NewRepo(), memory.Config{ExtractEveryTurns: c.ExtractEveryTurns, ExtractionDisabled: c.ExtractionDisabled})
	if err != nil {
		t.Fatal(err)
	}
	return store
}
