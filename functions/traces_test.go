package functions_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/httpapitest"
)

// tracingModules are the module paths of the instrumentation that would
// add subsegments, annotations or metadata to a function's X-Ray trace:
// the X-Ray SDK for Go, AWS's OpenTelemetry distribution and
// OpenTelemetry's own SDK. Without one, a trace holds only what Lambda
// itself records (docs/privacy.md, "Traces").
var tracingModules = []string{"github.com/aws/aws-xray-sdk-go", "go.opentelemetry.io/", "github.com/aws-observability/"}

// TestTracesCarryNoUserData checks that no function links a tracing SDK:
// with active tracing, Lambda sends its own segments (function name,
// times, cold start, errors), and only code in the function could add a
// user ID, a key or a value to them. It lists every package the functions'
// binaries are built from, as the go command resolves them.
func TestTracesCarryNoUserData(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./functions/...")
	cmd.Dir = httpapitest.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !slices.Contains(deps, "github.com/aws/aws-lambda-go/lambda") {
		t.Fatalf("go list found %d packages, without aws-lambda-go: not the functions' dependencies", len(deps))
	}
	for _, m := range tracingModules {
		for _, d := range deps {
			if strings.HasPrefix(d, m) {
				t.Errorf("a function depends on %s: its traces may carry what it records; check it and docs/privacy.md", d)
			}
		}
	}
}
