package score

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/memory"
)

// Import is the score of one gold import case: what the import proposed
// (the pending facts it left, all of which wait for the user's review)
// against the facts the case expects and the traps it sets.
//
// Precision is correct / proposed (allowed facts not counted), recall
// expected subjects met / expected, and the leak rate traps proposed /
// traps (each trap one opportunity, however many proposals match it). A
// proposed fact that matches a trap is a leak and a wrong proposal; it is
// never correct.
type Import struct {
	ID       string `json:"id"`
	Source   string `json:"source"`
	Language string `json:"language"`
	// Status, Reason and LeftOut are the import's mark; Outcome is the
	// store's outcome; Error, when not empty, is why the import failed.
	Status  string               `json:"status"`
	Reason  string               `json:"reason,omitempty"`
	Outcome string               `json:"outcome"`
	Error   string               `json:"error,omitempty"`
	LeftOut memory.ImportLeftOut `json:"leftOut"`
	// Proposed counts the pending facts proposed, allowed ones left out;
	// Correct those that meet an expected fact.
	Proposed  int `json:"proposed"`
	Correct   int `json:"correct"`
	Expected  int `json:"expected"`
	Satisfied int `json:"satisfied"`
	// Traps counts the case's traps by category, Leaked those proposed.
	Traps  map[string]int `json:"traps"`
	Leaked map[string]int `json:"leaked"`
	// StoredChanged counts the known facts whose stored value the import
	// changed or removed: an import proposes, it never writes a fact.
	StoredChanged int `json:"storedChanged"`
	// BadQuotes counts the proposals whose evidence is not a span of the
	// pasted text (the harness's own check), with what is wrong.
	BadQuotes     int      `json:"badQuotes"`
	QuoteProblems []string `json:"quoteProblems,omitempty"`
	ModelCalls    int      `json:"modelCalls"`
	InputTokens   int      `json:"inputTokens"`
	OutputTokens  int      `json:"outputTokens"`
	// Calls are the import's model calls, one a part, with the answers as
	// the model gave them: a replay gives them to the store again.
	Calls   []Call   `json:"calls"`
	Missing []string `json:"missing"`
	Facts   []Fact   `json:"facts"`
}

// TrapTotal returns the traps of the case, all categories.
func (i Import) TrapTotal() int { return sumOf(i.Traps) }

// LeakTotal returns the traps proposed, all categories.
func (i Import) LeakTotal() int { return sumOf(i.Leaked) }

// ScoreImport scores the facts an import of case c proposed (proposed:
// the pending facts of the import) and the facts stored after it
// (stored), against c.
func ScoreImport(c gold.ImportCase, proposed, stored []memory.Fact) Import {
	out := Import{ID: c.ID, Source: c.Source, Language: c.Language, Expected: len(c.Expect),
		Traps: map[string]int{}, Leaked: map[string]int{}, Missing: []string{}, Facts: []Fact{}, Calls: []Call{}}
	for _, f := range c.Forbid {
		out.Traps[f.Category]++
	}
	sorted := slices.Clone(proposed)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	satisfied, leaked := map[string]bool{}, map[int]bool{}
	for _, f := range sorted {
		sf := judge(c.Conversation, memory.CanonicalKey(f.Key), f, satisfied, leaked)
		sf.Pending = true
		if sf.Verdict != Allowed {
			out.Proposed++
		}
		if sf.Verdict == Correct {
			out.Correct++
		}
		out.Facts = append(out.Facts, sf)
	}
	for i := range leaked {
		out.Leaked[c.Forbid[i].Category]++
	}
	for _, e := range c.Expect {
		if !satisfied[e.Subject.Name] {
			out.Missing = append(out.Missing, e.Subject.Name)
		}
	}
	out.Satisfied = len(satisfied)
	out.StoredChanged = storedChanged(c.Known, stored)
	return out
}

// storedChanged counts the known facts whose key holds another value in
// stored, or none.
func storedChanged(known []gold.Fact, stored []memory.Fact) int {
	n := 0
	for _, k := range known {
		key := memory.CanonicalKey(k.Key)
		if !slices.ContainsFunc(stored, func(f memory.Fact) bool { return memory.CanonicalKey(f.Key) == key && f.Value == k.Value }) {
			n++
		}
	}
	return n
}

// ImportTotals sums the scores of the import cases of a run.
type ImportTotals struct {
	Cases         int                  `json:"cases"`
	Failed        int                  `json:"failed"`
	Proposed      int                  `json:"proposed"`
	Correct       int                  `json:"correct"`
	Expected      int                  `json:"expected"`
	Satisfied     int                  `json:"satisfied"`
	Traps         map[string]int       `json:"traps"`
	Leaked        map[string]int       `json:"leaked"`
	StoredChanged int                  `json:"storedChanged"`
	BadQuotes     int                  `json:"badQuotes"`
	LeftOut       memory.ImportLeftOut `json:"leftOut"`
	ModelCalls    int                  `json:"modelCalls"`
	InputTokens   int                  `json:"inputTokens"`
	OutputTokens  int                  `json:"outputTokens"`
	// Precision is Correct / Proposed, Recall Satisfied / Expected and
	// LeakRate the traps proposed / Traps, over all cases.
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	LeakRate  float64 `json:"leakRate"`
}

// SumImports returns the totals of imports.
func SumImports(imports []Import) ImportTotals {
	t := ImportTotals{Traps: map[string]int{}, Leaked: map[string]int{}}
	for _, i := range imports {
		t.Cases++
		if i.Error != "" || i.Status != string(memory.ImportDone) {
			t.Failed++
		}
		t.Proposed += i.Proposed
		t.Correct += i.Correct
		t.Expected += i.Expected
		t.Satisfied += i.Satisfied
		t.StoredChanged += i.StoredChanged
		t.BadQuotes += i.BadQuotes
		t.ModelCalls += i.ModelCalls
		t.InputTokens += i.InputTokens
		t.OutputTokens += i.OutputTokens
		for k, n := range i.Traps {
			t.Traps[k] += n
		}
		for k, n := range i.Leaked {
			t.Leaked[k] += n
		}
		l := &t.LeftOut
		l.Secrets += i.LeftOut.Secrets
		l.Instructions += i.LeftOut.Instructions
		l.Unsupported += i.LeftOut.Unsupported
		l.Ended += i.LeftOut.Ended
		l.Known += i.LeftOut.Known
		l.Declined += i.LeftOut.Declined
		l.Deletes += i.LeftOut.Deletes
		l.Skipped += i.LeftOut.Skipped
		l.OverCap += i.LeftOut.OverCap
	}
	t.Precision = ratio(t.Correct, t.Proposed)
	t.Recall = ratio(t.Satisfied, t.Expected)
	t.LeakRate = share(sumOf(t.Leaked), sumOf(t.Traps))
	return t
}

// ImportsHeadline returns the Markdown headline of the import cases:
// precision, recall and leak rate with their counts, the traps proposed
// by category and what the store left out. It is what eval/README.md's
// block of the stand-in's import figures holds.
func ImportsHeadline(imports []Import) string {
	t := SumImports(imports)
	var b strings.Builder
	fmt.Fprintf(&b, "**Imports, scored apart: precision %.3f (%d/%d), recall %.3f (%d/%d), leak rate %.3f (%d/%d)** over %d gold import cases "+
		"(%d model calls, %d input and %d output tokens); %d did not end done.\n\n",
		t.Precision, t.Correct, t.Proposed, t.Recall, t.Satisfied, t.Expected, t.LeakRate, sumOf(t.Leaked), sumOf(t.Traps),
		t.Cases, t.ModelCalls, t.InputTokens, t.OutputTokens, t.Failed)
	b.WriteString("| traps proposed |")
	sep := "|---|"
	cells := "| proposed / set (leak rate) |"
	for _, cat := range gold.Categories {
		if t.Traps[cat] == 0 {
			continue
		}
		b.WriteString(" " + cat + " |")
		sep += "---:|"
		cells += fmt.Sprintf(" %d/%d (%.3f) |", t.Leaked[cat], t.Traps[cat], share(t.Leaked[cat], t.Traps[cat]))
	}
	b.WriteString("\n" + sep + "\n" + cells + "\n\n")
	l := t.LeftOut
	fmt.Fprintf(&b, "The store left out %d secrets, %d instructions, %d SETs whose evidence is not in the paste, %d ended plans, "+
		"%d known values, %d DELETEs, %d statements no fact came from and %d facts over the cap. Known facts the imports changed: %d (an import only proposes). "+
		"Proposals whose evidence is not a span of the paste (the harness's own check): %d.\n",
		l.Secrets, l.Instructions, l.Unsupported, l.Ended, l.Known, l.Deletes, l.Skipped, l.OverCap, t.StoredChanged, t.BadQuotes)
	return b.String()
}

// ImportsMarkdown writes the section of the report on the import cases:
// the headline and one row per case with what it missed and every
// proposal that is not right.
func ImportsMarkdown(w io.Writer, imports []Import) error {
	if len(imports) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\n## Imports (scored apart)\n\n")
	b.WriteString(ImportsHeadline(imports))
	b.WriteString("\n| case | source | language | status | precision | recall | traps proposed | missing | not right |\n|---|---|---|---|---:|---:|---:|---|---|\n")
	for _, i := range imports {
		var wrong []string
		for _, f := range i.Facts {
			if f.Verdict != Correct && f.Verdict != Allowed {
				wrong = append(wrong, fmt.Sprintf("%s=%q (%s)", f.Key, f.Value, strings.TrimSpace(f.Verdict+" "+f.Category)))
			}
		}
		status := i.Status
		if i.Reason != "" {
			status += " (" + i.Reason + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f | %.2f | %d/%d | %s | %s |\n", i.ID, i.Source, i.Language, status,
			ratio(i.Correct, i.Proposed), ratio(i.Satisfied, i.Expected), i.LeakTotal(), i.TrapTotal(),
			cell(i.Missing), cell(wrong))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
