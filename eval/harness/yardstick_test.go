package harness_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/harness"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/memory"
)

// oracle is a scripted model that knows the gold set: at the first call
// of each thread it SETs every fact the thread's conversation expects,
// stored or pending, with its first accepted value and its end date, and
// with the evidence quote gives it; it answers nothing after.
type oracle struct {
	threads []gold.Conversation
	quote   func(conv gold.Conversation) string
	mu      sync.Mutex
	called  map[string]bool
}

func (o *oracle) Extract(_ context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.called[req.Meta.ThreadID] {
		return memory.ModelAnswer{}, nil
	}
	o.called[req.Meta.ThreadID] = true
	var n int
	if _, err := fmt.Sscanf(req.Meta.ThreadID, "th-%d", &n); err != nil || n < 1 || n > len(o.threads) {
		return memory.ModelAnswer{}, nil
	}
	conv := o.threads[n-1]
	var ops []memory.Operation
	for _, e := range append(append([]gold.Expected{}, conv.Expect...), conv.Pending...) {
		op := memory.Operation{Op: memory.OpSet, Key: e.Subject.Name, Value: append(e.Values, e.Contains...)[0], Evidence: o.quote(conv)}
		if !e.ValidUntil.IsZero() {
			op.ValidUntil = e.ValidUntil.Format("2006-01-02")
		}
		ops = append(ops, op)
	}
	return memory.ModelAnswer{Operations: ops}, nil
}

// runGold runs the whole gold set, each user's threads on a new oracle
// that quotes with quote, or on a model that answers nothing when quote
// is nil, and returns the totals.
func runGold(t *testing.T, quote func(gold.Conversation) string) score.Totals {
	t.Helper()
	convs, err := gold.Load(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	groups, err := gold.Threads(convs)
	if err != nil {
		t.Fatal(err)
	}
	var all []score.Conversation
	for _, g := range groups {
		var threads []gold.Conversation
		for _, i := range g {
			threads = append(threads, convs[i])
		}
		var model memory.Model = nothing{}
		if quote != nil {
			model = &oracle{threads: threads, quote: quote, called: map[string]bool{}}
		}
		scores, err := harness.RunThreads(context.Background(), model, memory.Config{}, threads)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, scores...)
	}
	return score.Sum(all)
}

// nothing is a model that never answers an operation.
type nothing struct{}

func (nothing) Extract(context.Context, memory.ModelRequest) (memory.ModelAnswer, error) {
	return memory.ModelAnswer{}, nil
}

// firstUserTurn quotes the conversation's first user turn, which the
// first extraction of its thread reads.
func firstUserTurn(conv gold.Conversation) string { return conv.Turns[0].Text }

// The recalls TestKeepingNothingScoresBadly holds a memory that keeps
// nothing under, and one that quotes the user above.
const recallFloor, recallCeiling = 0.15, 0.8

// TestKeepingNothingScoresBadly holds the yardstick to what a memory is
// for: a model that keeps nothing, or whose SETs are all refused for want
// of the user's words, scores a recall below 0.15 (the known facts alone
// give about 0.09), while the same SETs quoting the user score a recall
// above 0.8; so the yardstick is not passed by keeping nothing, and every
// unsupported SET is counted.
func TestKeepingNothingScoresBadly(t *testing.T) {
	none := runGold(t, nil)
	unsupported := runGold(t, func(gold.Conversation) string { return "words the user never wrote" })
	quoted := runGold(t, firstUserTurn)
	t.Logf("recall: no SET %.3f, only unsupported %.3f, quoting %.3f; F1 %.3f, %.3f, %.3f", none.Recall, unsupported.Recall, quoted.Recall, none.F1, unsupported.F1, quoted.F1)
	for name, x := range map[string]score.Totals{"no SET": none, "only unsupported SETs": unsupported} {
		if x.Recall >= recallFloor || x.F1 >= quoted.F1/2 {
			t.Errorf("%s: recall %.3f, F1 %.3f; want a recall below %.2f and an F1 below half the quoting model's %.3f", name, x.Recall, x.F1, recallFloor, quoted.F1)
		}
	}
	if quoted.Recall <= recallCeiling {
		t.Errorf("the model that quotes the user: recall %.3f, want above %.2f (%+v)", quoted.Recall, recallCeiling, quoted.Counts)
	}
	if none.Sets != 0 || unsupported.Sets == 0 || unsupported.Unsupported != unsupported.Sets || unsupported.UnsupportedRate() != 1 {
		t.Errorf("SETs: none %d; unsupported %d of %d (rate %v), want all", none.Sets, unsupported.Unsupported, unsupported.Sets, unsupported.UnsupportedRate())
	}
	if quoted.Unsupported != 0 || quoted.BadQuotes != 0 || quoted.QuotesChecked == 0 || quoted.PendingSets == 0 {
		t.Errorf("the model that quotes the user: %d unsupported, %d of %d quotes bad, %d pending; want 0, 0 of some, some",
			quoted.Unsupported, quoted.BadQuotes, quoted.QuotesChecked, quoted.PendingSets)
	}
}
