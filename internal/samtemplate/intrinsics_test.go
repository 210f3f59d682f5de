package samtemplate

import (
	"maps"
	"slices"
	"testing"
)

// TestIntrinsicsListIsWhatIsEvaluated: the list the error message and the
// docs name is the set of functions the evaluator has.
func TestIntrinsicsListIsWhatIsEvaluated(t *testing.T) {
	got := slices.Sorted(maps.Keys(intrinsicFuncs))
	want := slices.Sorted(slices.Values(Intrinsics))
	if !slices.Equal(got, want) {
		t.Errorf("evaluated %v, listed %v", got, want)
	}
}
