package fault_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/setup"
)

// TestBenchmarksStateTheBounds holds the bounds that BENCHMARKS.md's
// "When a dependency stalls" names to the code's.
func TestBenchmarksStateTheBounds(t *testing.T) {
	b, err := os.ReadFile("../../BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## When a dependency stalls")
	if !ok {
		t.Fatal(`BENCHMARKS.md has no section "When a dependency stalls"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{
		"`httpapi.AnswerBound` (" + httpapi.AnswerBound.String() + ")",
		"`setup.DynamoDBAttemptTimeout` (" + setup.DynamoDBAttemptTimeout.String() + ")",
		// The tests' limit: the bound and a second for the emulators.
		fmt.Sprintf("| ≤ %d s |", (httpapi.AnswerBound+time.Second)/time.Second),
		fmt.Sprintf("`Retry-After: %d`", httpapi.RetryAfterSeconds),
	} {
		if !strings.Contains(section, want) {
			t.Errorf("BENCHMARKS.md, When a dependency stalls: no %q", want)
		}
	}
}
