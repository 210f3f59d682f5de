package fault_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/httpapitest"
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

// TestBenchmarksStateTheTemplateAndTheSDK holds what BENCHMARKS.md's
// "When a dependency stalls" says of the deployed stack to the template
// (the queue's visibility timeout and maxReceiveCount, the extractor's
// timeout) and to the DynamoDB client's attempts, and the time a message
// takes to reach the dead-letter queue to their product.
func TestBenchmarksStateTheTemplateAndTheSDK(t *testing.T) {
	res := httpapitest.LoadSAMTemplate(t)["Resources"].(map[string]any)
	props := func(id string) map[string]any { return res[id].(map[string]any)["Properties"].(map[string]any) }
	queue, extractor := props("ExtractionQueue"), props("ExtractorFunction")
	visibility := fmt.Sprint(queue["VisibilityTimeout"])
	receives := fmt.Sprint(queue["RedrivePolicy"].(map[string]any)["maxReceiveCount"])
	timeout := fmt.Sprint(extractor["Timeout"])
	var v, n int
	if _, err := fmt.Sscan(visibility+" "+receives, &v, &n); err != nil {
		t.Fatalf("visibility timeout %s, maxReceiveCount %s: %v", visibility, receives, err)
	}
	toDLQ := fmt.Sprintf("%d minutes", v*n/60)
	if v*n == 1800 {
		toDLQ = "half an hour"
	}
	docblock.CheckFigures(t, filepath.Join("..", "..", "BENCHMARKS.md"), docblock.Figures{
		"as the template's ([0-9]+) s is longer":                       visibility,
		"than the function's ([0-9]+) s\\)":                            timeout,
		"`maxReceiveCount` ([0-9]+) as in the template":                receives,
		"ends by its own deadline \\(each DynamoDB attempt ([0-9]+) s": int(setup.DynamoDBAttemptTimeout / time.Second),
		"the SDK's ([0-9]+) attempts with a backoff":                   dynamodb.New(dynamodb.Options{}).Options().Retryer.MaxAttempts(),
		"before the function's ([0-9]+) s timeout":                     timeout,
		"With the template's visibility timeout \\(([0-9]+) s\\)":      visibility,
		"and `maxReceiveCount` \\(([0-9]+)\\), a message":              receives,
		"DynamoDB fails it for about ([a-z0-9 ]+); then":               toDLQ,
	})
}
