package score

import (
	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/memory"
)

// Baseline is the score of a memory that learns nothing from the
// conversations: a model is worth its margin over each.
type Baseline struct {
	// Name names the baseline; Keeps says what it keeps.
	Name   string `json:"name"`
	Keeps  string `json:"keeps"`
	Totals Totals `json:"totals"`
}

// Names of the baselines.
const (
	KeepNothing      = "keep nothing"
	DeleteEverything = "delete everything"
	KnownFactsOnly   = "known facts only"
)

// Baselines scores convs for three memories that need no model: one that
// never answers an operation (the known facts stay as they were), one
// that deletes every fact (the memory ends empty), and one that keeps the
// known facts that are still expected and nothing else (what knowing the
// user before earns, with no mistake). They take no call, so their
// interval comes from the same bootstrap as a run's.
func Baselines(convs []gold.Conversation) []Baseline {
	out := []Baseline{
		{Name: KeepNothing, Keeps: "the known facts, unchanged: no operation ever"},
		{Name: DeleteEverything, Keeps: "nothing: every fact deleted"},
		{Name: KnownFactsOnly, Keeps: "the known facts that are still expected, and nothing else"},
	}
	kept := []func(gold.Conversation) []memory.Fact{knownFacts, func(gold.Conversation) []memory.Fact { return nil }, stillExpected}
	for i := range out {
		scores := make([]Conversation, len(convs))
		for j, c := range convs {
			scores[j] = Score(c, kept[i](c), nil)
		}
		out[i].Totals = Sum(scores)
	}
	return out
}

// knownFacts returns the facts known before c.
func knownFacts(c gold.Conversation) []memory.Fact {
	var out []memory.Fact
	for _, k := range c.Known {
		out = append(out, memory.Fact{Key: k.Key, Value: k.Value})
	}
	return out
}

// stillExpected returns the facts known before c that c expects after it,
// with the same value.
func stillExpected(c gold.Conversation) []memory.Fact {
	var out []memory.Fact
	for _, f := range knownFacts(c) {
		if e, ok := expectedOn(c, memory.CanonicalKey(f.Key)); ok && e.Accepts(f.Value) {
			out = append(out, f)
		}
	}
	return out
}
