package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/funclen"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/apigw"
	"github.com/usermemory/usermemory/localtest/lambdapool"
	"github.com/usermemory/usermemory/localtest/sqsevents"
	"github.com/usermemory/usermemory/memory"
)

// TestLocaltestDocFigures holds the figures docs/localtest.md writes by
// hand to the code: the moto version, the ports, the emulator's size
// limits, the template's visibility timeout, the functions' bounds, the
// pool's size, the chat's wait and the event source's long poll.
// Timings stay in its table with the command that measures them.
func TestLocaltestDocFigures(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	queue := tpl["Resources"].(map[string]any)["ExtractionQueue"].(map[string]any)["Properties"].(map[string]any)
	docblock.CheckFigures(t, filepath.Join("..", "docs", "localtest.md"), docblock.Figures{
		"installs `moto\\[server\\]` ([0-9.]+)":         motoserver.Version,
		"moto ([0-9.]+) does not keep":                  motoserver.Version,
		"listens on `127.0.0.1:([0-9]+)`":               DefaultAPIPort,
		"memory page on `127.0.0.1:([0-9]+)`":           DefaultPagePort,
		"the template's ([0-9]+) s makes":               fmt.Sprint(queue["VisibilityTimeout"]),
		"come back after ([0-9]+) minutes, as in AWS":   toInt(t, queue["VisibilityTimeout"]) / 60,
		"([0-9,]+) sequential requests":                 flagDefault(t, "bench.go", "n"),
		"stand-in model, ([0-9]+) extractions":          flagDefault(t, "bench.go", "extractions"),
		"body > ([0-9]+) MB":                            apigw.MaxBody >> 20,
		"takes bodies up to ([0-9]+) MB":                apigw.MaxBody >> 20,
		"a synchronous event up to ([0-9]+) MB":         apigw.MaxInvokePayload >> 20,
		"a 5 MB binary body makes a ([0-9.]+) MB event": fmt.Sprintf("%.1f", float64(base64.StdEncoding.EncodedLen(5_000_000))/1e6),
		"body > [0-9]+ MB \\(([0-9,]+) bytes\\)":        apigw.MaxBody,
		"event < ([0-9,]+) bytes":                       apigw.MaxInvokePayload,
		"event ≥ ([0-9,]+) bytes":                       apigw.MaxInvokePayload,
		"Request must be smaller than ([0-9]+) bytes":   apigw.MaxInvokePayload,
		"\\(6 MiB \\+ ([0-9]+) bytes":                   apigw.MaxInvokePayload - 6<<20,
		"bound each DynamoDB attempt \\(([0-9]+) s\\)":  int(setup.DynamoDBAttemptTimeout / time.Second),
		"jitter capped at ([0-9]+) s":                   int(retry.DefaultMaxBackoff / time.Second),
		"([0-9]+) attempts by default":                  retry.DefaultMaxAttempts,
		"SDK version in go.mod makes ([0-9]+)":          dynamodb.New(dynamodb.Options{}).Options().Retryer.MaxAttempts(),
		"and each request \\(([0-9]+) s\\)":             int(httpapi.AnswerBound / time.Second),
		"in a pool of up to ([0-9]+) environments":      lambdapool.DefaultMax,
		"\\(up to `-wait`, ([0-9]+) s\\)":               int(defaultChatWait / time.Second),
		"one long-poll wait \\(([0-9]+) s\\)":           int(sqsevents.DefaultPollWait / time.Second),
	})
}

// TestReadmeFigures holds the figures README.md, and the documents its
// sections moved to, write by hand, outside the blocks their own tests
// write, to the code, the template and the TypeScript client's
// package.json. Its timings stay printed with the
// command that reproduces them.
func TestReadmeFigures(t *testing.T) {
	params := httpapitest.LoadSAMTemplate(t)["Parameters"].(map[string]any)
	def := func(name string) any { return params[name].(map[string]any)["Default"] }
	raw, err := os.ReadFile(filepath.Join("..", "clients", "typescript", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go ([0-9]+\.[0-9]+)`).FindSubmatch(gomod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	// Each figure is checked in the document its prose is in.
	for doc, figures := range map[string]docblock.Figures{
		"README.md": {
			"\\*\\*Needs\\*\\* Go ([0-9.]+) and":               string(goLine[1]),
			"the API on `http://127.0.0.1:([0-9]+)`":           DefaultAPIPort,
			"the memory page on `http://127.0.0.1:([0-9]+)`":   DefaultPagePort,
			"`Retry-After` within ([0-9]+) seconds":            int(httpapi.AnswerBound / time.Second),
			"needs the user's approval \\(code ([0-9]+)\\)\\]": memory.CodeApprovalRequired,
			"`funclen` \\(no function over ([0-9]+) lines\\)":  funclen.MaxLines,
		},
		"docs/testing.md": {
			"installs `moto\\[server\\]` ([0-9.]+)": motoserver.Version,
		},
		"docs/deploy.md": {
			"`PointInTimeRecoveryDays` \\(([0-9]+)\\)":         def("PointInTimeRecoveryDays"),
			"`DeadLetterRetentionSeconds` \\(([0-9]+) days\\)": toDays(t, def("DeadLetterRetentionSeconds")),
			"`TenantClaim`, default `([a-z_]+)`":               def("TenantClaim"),
		},
		"eval/README.md": {
			"`extractEveryTurns` \\(`-every`, default ([0-9]+)\\)": memory.DefaultExtractEveryTurns,
		},
		"clients/typescript/README.md": {
			"extractEveryTurns: ([0-9]+), +// the template's ExtractEveryTurns": def("ExtractEveryTurns"),
			"usermemory-client-([0-9.]+)\\.tgz":                                 pkg.Version,
		},
	} {
		docblock.CheckFigures(t, filepath.Join("..", filepath.FromSlash(doc)), figures)
	}
}

// TestBenchmarksLocalStackFigures holds the request and extraction counts
// of BENCHMARKS.md's "Local stack" table to the bench command's defaults;
// the timings there are machine-dependent and name that command.
func TestBenchmarksLocalStackFigures(t *testing.T) {
	docblock.CheckFigures(t, filepath.Join("..", "BENCHMARKS.md"), docblock.Figures{
		"through the API emulator, warm, ([0-9,]+) requests": flagDefault(t, "bench.go", "n"),
		"stand-in model, ([0-9]+) extractions":               flagDefault(t, "bench.go", "extractions"),
	})
}

// TestLocalStackTargets holds the goals docs/localtest.md's and
// BENCHMARKS.md's tables of the local stack give to the constants bench
// prints its measurements against (targetUp and the others).
func TestLocalStackTargets(t *testing.T) {
	for _, doc := range []string{filepath.Join("..", "docs", "localtest.md"), filepath.Join("..", "BENCHMARKS.md")} {
		docblock.CheckFigures(t, doc, docblock.Figures{
			"up` to ready[^|]* \\| [^|]+ \\| ≤ ([0-9.]+) s \\|": targetUp.Seconds(),
			"\\| p50 ≤ ([0-9.]+) ms":                            targetReadP50.Milliseconds(),
			"\\| p50 ≤ ([0-9.]+) s \\|":                         targetExtractionP50.Seconds(),
		})
	}
}

// flagDefault returns the default a command in file gives its flag name,
// as the source writes it: the second argument of the call that defines
// the flag (fs.Int("n", 1000, …)).
func flagDefault(t *testing.T, file, name string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	def := ""
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 2 {
			return true
		}
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Value == strconv.Quote(name) {
			if v, ok := call.Args[1].(*ast.BasicLit); ok {
				def = v.Value
			}
		}
		return true
	})
	if def == "" {
		t.Fatalf("%s defines no flag %s with a literal default", file, name)
	}
	return def
}

// toInt reads a template value, a number in YAML, as an int.
func toInt(t *testing.T, v any) int {
	t.Helper()
	n, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("%v is not a whole number: %v", v, err)
	}
	return n
}

// toDays reads a template default in seconds as whole days.
func toDays(t *testing.T, seconds any) int {
	t.Helper()
	var s int
	if _, err := fmt.Sscan(fmt.Sprint(seconds), &s); err != nil {
		t.Fatalf("%v is not a number of seconds: %v", seconds, err)
	}
	return s / 86400
}
