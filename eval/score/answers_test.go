package score

import (
	"math"
	"testing"
)

func TestAnswerSizeFitsTheLine(t *testing.T) {
	// Answers of 20 tokens plus 17 a operation, as a model would give.
	var f answerFit
	for _, ops := range []int{0, 1, 1, 2, 4, 0, 3} {
		f.add(ops, 20+17*ops)
	}
	a := f.result()
	if !a.Fitted || math.Abs(a.PerAnswer-20) > 1e-9 || math.Abs(a.PerOperation-17) > 1e-9 {
		t.Fatalf("line = %.3f + %.3f × ops (fitted %v), want 20 + 17 × ops", a.PerAnswer, a.PerOperation, a.Fitted)
	}
	if got, ok := a.Tokens(60); !ok || math.Abs(got-(20+17*60)) > 1e-9 {
		t.Errorf("Tokens(60) = %.1f, %v; want %d", got, ok, 20+17*60)
	}
	if a.Calls != 7 || a.Operations != 11 || a.MaxTokens != 20+17*4 || a.MaxTokensOperations != 4 {
		t.Errorf("counts = %+v", a)
	}
}

func TestAnswerSizeUnknownWithOneOperationCount(t *testing.T) {
	var f answerFit
	for range 3 {
		f.add(1, 40)
	}
	a := f.result()
	if a.Fitted {
		t.Errorf("a line fitted through answers that all carry one operation: %+v", a)
	}
	if _, ok := a.Tokens(10); ok {
		t.Error("Tokens says the line is known")
	}
}

func TestSumMeasuresAnswersOfAnsweredCallsOnly(t *testing.T) {
	ops := func(n int) []Operation { return make([]Operation, n) }
	convs := []Conversation{{Calls: []Call{
		{OutputTokens: 30, Operations: ops(1)},
		{OutputTokens: 50, Operations: ops(3)},
		{OutputTokens: 900, Failed: "bad_answer"},
	}}}
	got := sum(convs).Answers
	if got.Calls != 2 || got.MaxTokens != 50 || !got.Fitted || math.Abs(got.PerOperation-10) > 1e-9 || math.Abs(got.PerAnswer-20) > 1e-9 {
		t.Errorf("answers = %+v, want 2 calls, the failed one left out, 20 + 10 × ops", got)
	}
}
