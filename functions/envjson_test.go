package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/httpapitest"
)

// envJSONOwnValues are the variables of events/env.json whose local value
// differs from the deployed one on purpose: the names of the stack's
// resources (the table, the queues), which only a deployed stack has.
var envJSONOwnValues = map[string]bool{"TABLE_NAME": true, "EXTRACTION_QUEUE_URL": true, "IDLE_QUEUE_URL": true, "IDLE_QUEUE_ARN": true}

// envJSON returns the variables of events/env.json: its Parameters, which
// sam local invoke gives every function, and scripts/bench-api.sh too.
func envJSON(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "events", "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Parameters map[string]string }
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatalf("events/env.json: %v", err)
	}
	if len(doc.Parameters) == 0 {
		t.Fatal("events/env.json: no Parameters")
	}
	return doc.Parameters
}

// TestEnvJSONHoldsTemplateDefaults holds events/env.json, the environment
// of `sam local invoke`, to template.yaml deployed with its defaults: each
// variable it sets is one a function has, with the value the template
// gives it (the erasure fence, the caps, the model ID…).
func TestEnvJSONHoldsTemplateDefaults(t *testing.T) {
	params := envJSON(t)
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	deployed := map[string]map[string]bool{} // variable → the values functions get
	for _, f := range app.Functions {
		for k, v := range f.Env {
			if deployed[k] == nil {
				deployed[k] = map[string]bool{}
			}
			deployed[k][v] = true
		}
	}
	for k, v := range params {
		values, ok := deployed[k]
		switch {
		case !ok:
			t.Errorf("events/env.json sets %s, which no function of template.yaml has", k)
		case envJSONOwnValues[k]:
		case !values[v]:
			t.Errorf("events/env.json sets %s=%q; template.yaml gives %v", k, v, slices.Sorted(maps.Keys(values)))
		}
	}
}

// TestEnvJSONStartsEveryFunction builds every function (functions/*/main.go)
// and runs it with events/env.json's variables, as scripts/bench-api.sh
// and sam local invoke do, and the few that Lambda sets, without a runtime
// API: each must get through its wiring (settings, SDK configuration,
// clients) to lambda.Start, which then says AWS_LAMBDA_RUNTIME_API is
// missing. A setting a function requires and env.json lacks stops it
// before, with its own message: before, the extractor refused an idle
// read without its queue, and the benchmark stopped at once.
func TestEnvJSONStartsEveryFunction(t *testing.T) {
	root := httpapitest.Root(t)
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		t.Fatalf("no functions/*/main.go: %v", err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot build the functions")
	}
	bin := t.TempDir()
	args := []string{"build", "-tags", "lambda.norpc", "-ldflags", "-s -w", "-o", bin + string(filepath.Separator)}
	for _, m := range mains {
		args = append(args, "./"+filepath.ToSlash(must(filepath.Rel(root, filepath.Dir(m)))))
	}
	build := exec.Command(goTool, args...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + bin, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test"}
	for k, v := range envJSON(t) {
		env = append(env, k+"="+v)
	}
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name))
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		cancel()
		if !bytes.Contains(out, []byte("AWS_LAMBDA_RUNTIME_API")) {
			t.Errorf("functions/%s stops before lambda.Start with events/env.json's settings:\n%s", name, out)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
