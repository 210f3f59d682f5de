// Package tse2e runs the TypeScript client (clients/typescript) end to end
// on the local stack: its example gateway loop, compiled with the package's
// own TypeScript compiler and run with node, talks to the API Gateway
// emulator with tokens of the stack's issuer and sends its extraction
// messages to the stack's queue, where the real extractor reads them.
//
// It needs Node.js at a version of the package's engines and the package's dependencies installed
// from its lockfile (make typescript does both checks and the install).
// Without them a plain go test skips; make test fails, saying how to get
// them.
package tse2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/internal/testenv"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/localtest/stack/stacktest"
	"github.com/usermemory/usermemory/localtest/token"
)

// pkgDir is the TypeScript package, from this folder.
const pkgDir = "../../clients/typescript"

var st *stack.Stack

func TestMain(m *testing.M) {
	if why := missingNode(); why != "" {
		if testenv.Required() {
			fmt.Fprintf(os.Stderr, "tse2e: %s (services are required here: %s=1 or CI=true)\n", why, testenv.RequireEnv)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "tse2e: skipped: %s\n", why)
		os.Exit(0)
	}
	opts := stack.Options{PollWait: time.Second}
	os.Exit(stacktest.Main("tse2e", opts, func(s *stack.Stack) int {
		st = s
		return m.Run()
	}))
}

// missingNode says what is missing to run the package, or "".
func missingNode() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "the TypeScript client's test needs Node.js (a version its package.json's engines admit): install it (Debian: apt-get install nodejs npm; or https://nodejs.org)"
	}
	var major int
	if _, err := fmt.Sscanf(string(out), "v%d", &major); err != nil || major < 20 {
		return fmt.Sprintf("the TypeScript client needs a Node.js its package.json's engines admit, and node is %s", strings.TrimSpace(string(out)))
	}
	if _, err := os.Stat(filepath.Join(pkgDir, "node_modules", "typescript")); err != nil {
		return "the TypeScript client's dependencies are not installed: run make typescript (npm ci in clients/typescript)"
	}
	return ""
}

// sign returns a token of the stack's issuer for user of tenant with scopes.
func sign(t *testing.T, tenant, user string, scopes ...string) string {
	t.Helper()
	tok, err := st.Issuer().Sign(token.Claims{Issuer: st.Info.Issuer, Audience: st.Info.Audience, Subject: user,
		TenantClaim: st.Info.TenantClaim, Tenant: tenant, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestGatewayLoop compiles the package and runs its example gateway loop
// on the stack: thread 2's system prompt holds the fact thread 1 stated,
// learned through the queue and the extractor, and the fact names thread
// 1 and its title (sent with the message, cleaned to one line by the
// extractor) with origin conversation, and thread 1's changes say
// "Memory updated"; a fact set for an approved remember
// tool call reads back with origin remember_tool; the export holds it and
// thread 1's watermark; removeFact forgets; deleting thread 1 forgets
// what it taught and leaves the remember tool's fact; eraseUser, with an admin
// token, erases the user and dates what remains. The Go side then checks
// the erasure through the API itself.
func TestGatewayLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	compile(ctx, t)
	tenant, user := "acme", fmt.Sprintf("ts-%d", time.Now().UnixNano())
	adminToken := sign(t, tenant, "ops", st.Info.UserScope, st.Info.AdminScope)
	out := runNode(ctx, t, tenant, user, "the gateway loop", "examples/gateway.js")
	for _, want := range []string{
		"thread 1 extraction due: true",
		`facts after thread 1: [`,
		`home_city came from: ["conversation","ts-thread-1","Moving to Lisbon «Ana» <draft> ✓"]`,
		`after thread 1: "Memory updated: `, "home city → Lisbon", // threadChanges
		`pet came from: ["remember_tool",null]`,
		`"facts":[`, `"pet:remember_tool"`, `"threads":[`,
		`\"home_city\": \"Lisbon\"`, // in thread 2's system prompt
		"home city is Lisbon",       // in the chat model's answer
		"facts after forgetting home_city: [",
		"facts after deleting thread 1: [\"pet=a cat named Mia\"]",
		"erasure dates in order: true",
		"facts after the erasure: 0",
		"\nok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the loop's output lacks %q", want)
		}
	}
	api := &factapi.Client{BaseURL: st.Info.APIURL}
	if facts := api.Facts(t, "/v1/users/"+user+"/facts", adminToken); len(facts) != 0 {
		t.Errorf("facts after the erasure, read by Go = %v, want none", facts)
	}
}

// compiled says the package was compiled once for the tests of this run.
var compiled sync.Once

// compile compiles the package (its sources, example, end-to-end scripts
// and type tests) with its own TypeScript compiler, once.
func compile(ctx context.Context, t *testing.T) {
	t.Helper()
	var out []byte
	var err error
	compiled.Do(func() {
		tsc := exec.CommandContext(ctx, "node", filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", ".")
		tsc.Dir = pkgDir
		out, err = tsc.CombinedOutput()
	})
	if err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
}

// runNode runs the compiled script (a path under dist/) with args, for
// user of tenant on the stack, and returns what it printed; it fails t
// when the script fails.
func runNode(ctx context.Context, t *testing.T, tenant, user, what, script string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join("dist", filepath.FromSlash(script))}, args...)...)
	cmd.Dir = pkgDir
	cmd.Env = append(os.Environ(),
		"USERMEMORY_API_URL="+st.Info.APIURL, "USERMEMORY_QUEUE_URL="+st.Info.QueueURL,
		"USERMEMORY_SQS_ENDPOINT="+st.Info.SQSURL, "AWS_REGION="+st.Info.Region,
		"USERMEMORY_BEDROCK_URL="+st.Info.BedrockURL, "USERMEMORY_FAULT_URL="+st.Info.FaultURL,
		"USERMEMORY_TENANT="+tenant, "USERMEMORY_USER="+user,
		"USERMEMORY_USER_TOKEN="+sign(t, tenant, user, st.Info.UserScope),
		"USERMEMORY_ADMIN_TOKEN="+sign(t, tenant, "ops", st.Info.UserScope, st.Info.AdminScope))
	out, err := cmd.CombinedOutput()
	t.Logf("%s said:\n%s", what, out)
	if err != nil {
		t.Fatalf("%s failed: %v", what, err)
	}
	return string(out)
}

// TestFaults runs the client's policy against the stack's fault
// injection (e2e/faults.ts): a read during a 4 s DynamoDB stall is
// answered after the API's 503 and its Retry-After; a caller's abort ends
// a call during a stall at once; getFacts answers from its last-known
// copy, or [], within its bound while the stall lasts, and reports it;
// extract sends again after SQS throttled its sends.
func TestFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	compile(ctx, t)
	defer st.Fault("dynamodb").Clear()
	defer st.Fault("sqs").Clear()
	sqsFaulted := st.Fault("sqs").Status().Faulted
	out := runNode(ctx, t, "acme", fmt.Sprintf("ts-faults-%d", time.Now().UnixNano()), "the fault script", "e2e/faults.js")
	if n := st.Fault("sqs").Status().Faulted - sqsFaulted; n != 2 {
		t.Errorf("SQS throttled %d of the client's sends, want 2 (the client's SQS requests pass the injector)", n)
	}
	for _, want := range []string{
		`read before the faults: ["home_city"]`,
		`getMemory through a 4 s stall: {"facts":["home_city"]`,
		`aborted after 300 ms: {"name":"TimeoutError"`,
		`getFacts during a stall: {"facts":["home_city"]`,
		"getFacts during a stall, never read before: 0",
		`reported: ["getFacts:last-known","getFacts:empty"]`,
		`extract through 2 throttled sends: "queued"`,
		"\nok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the fault script's output lacks %q", want)
		}
	}
	for _, line := range []struct {
		prefix string
		max    float64
	}{{`getMemory through a 4 s stall: {"facts":["home_city"],"seconds":`, 8.5}, {`aborted after 300 ms: {"name":"TimeoutError","seconds":`, 1}, {`getFacts during a stall: {"facts":["home_city"],"seconds":`, 3.5}} {
		if s, ok := secondsAfter(out, line.prefix); !ok || s > line.max {
			t.Errorf("%s… took %v s (found %v), want at most %v", line.prefix, s, ok, line.max)
		}
	}
}

// secondsAfter reads the number printed right after prefix in out.
func secondsAfter(out, prefix string) (float64, bool) {
	i := strings.Index(out, prefix)
	if i < 0 {
		return 0, false
	}
	var s float64
	_, err := fmt.Sscanf(out[i+len(prefix):], "%g", &s)
	return s, err == nil
}

// TestExtractWithoutCounts calls extract exactly as the behaviour
// reference's updateMemory does (e2e/uncounted.ts: no turn counts, a
// system turn, the text under content, the gateway's own cheap model and
// call meta): the facts are learned; the same turns sent again, through
// extract and once more under another FIFO deduplication ID, reach the
// extractor and make no model call (the turns digest is the thread's
// watermark).
func TestExtractWithoutCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	compile(ctx, t)
	tenant, user := "acme", fmt.Sprintf("ts-uncounted-%d", time.Now().UnixNano())
	out := runNode(ctx, t, tenant, user, "extract, as updateMemory calls it", "e2e/uncounted.js", "learn")
	if !strings.Contains(out, `learned: ["home_city=Lisbon"`) {
		t.Fatalf("the facts were not learned from an extract without counts")
	}
	quiet(t)
	before, _ := st.Converse().Calls()
	_, deleted, _ := st.EventSourceStats()
	runNode(ctx, t, tenant, user, "the same turns again", "e2e/uncounted.js", "again")
	// The copy sent under another deduplication ID reaches the extractor:
	// wait until it is read and deleted.
	for end := time.Now().Add(30 * time.Second); ; {
		if _, d, _ := st.EventSourceStats(); d > deleted {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the message sent again was not read within 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a copy through extract, had SQS let one through, is read too
	if after, _ := st.Converse().Calls(); after != before {
		t.Errorf("the same turns sent again made %d model calls, want none", after-before)
	}
}

// quiet waits until the extractor has had nothing to read for 2.5 s (the
// messages of earlier tests done), so that the model calls counted next
// are those of the messages sent next.
func quiet(t *testing.T) {
	t.Helper()
	last, _, _ := st.EventSourceStats()
	since := time.Now()
	for end := time.Now().Add(time.Minute); time.Since(since) < 2500*time.Millisecond; {
		if time.Now().After(end) {
			t.Fatal("the extractor was still busy after a minute")
		}
		time.Sleep(100 * time.Millisecond)
		if b, _, _ := st.EventSourceStats(); b != last || st.Converse().Active() > 0 {
			last, since = b, time.Now()
		}
	}
}
