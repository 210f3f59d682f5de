// Package tse2e runs the TypeScript client (clients/typescript) end to end
// on the local stack: its example gateway loop, compiled with the package's
// own TypeScript compiler and run with node, talks to the API Gateway
// emulator with tokens of the stack's issuer and sends its extraction
// messages to the stack's queue, where the real extractor reads them.
//
// It needs Node.js 20 or later and the package's dependencies installed
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
		return "the TypeScript client's test needs Node.js 20 or later: install it (Debian: apt-get install nodejs npm; or https://nodejs.org)"
	}
	var major int
	if _, err := fmt.Sscanf(string(out), "v%d", &major); err != nil || major < 20 {
		return fmt.Sprintf("the TypeScript client needs Node.js 20 or later, and node is %s", strings.TrimSpace(string(out)))
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
// extractor) with origin conversation; a fact set for an approved remember
// tool call reads back with origin remember_tool; the export holds it and
// thread 1's watermark; removeFact forgets; eraseUser, with an admin
// token, erases the user and dates what remains. The Go side then checks
// the erasure through the API itself.
func TestGatewayLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tsc := exec.CommandContext(ctx, "node", filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", ".")
	tsc.Dir = pkgDir
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	tenant, user := "acme", fmt.Sprintf("ts-%d", time.Now().UnixNano())
	userToken := sign(t, tenant, user, st.Info.UserScope)
	adminToken := sign(t, tenant, "ops", st.Info.UserScope, st.Info.AdminScope)
	loop := exec.CommandContext(ctx, "node", filepath.Join("dist", "examples", "gateway.js"))
	loop.Dir = pkgDir
	loop.Env = append(os.Environ(),
		"USERMEMORY_API_URL="+st.Info.APIURL, "USERMEMORY_QUEUE_URL="+st.Info.QueueURL,
		"USERMEMORY_SQS_ENDPOINT="+st.Info.SQSURL, "AWS_REGION="+st.Info.Region,
		"USERMEMORY_BEDROCK_URL="+st.Info.BedrockURL, "USERMEMORY_TENANT="+tenant, "USERMEMORY_USER="+user,
		"USERMEMORY_USER_TOKEN="+userToken, "USERMEMORY_ADMIN_TOKEN="+adminToken)
	out, err := loop.CombinedOutput()
	t.Logf("the gateway loop said:\n%s", out)
	if err != nil {
		t.Fatalf("the gateway loop failed: %v", err)
	}
	for _, want := range []string{
		"thread 1 extraction due: true",
		`facts after thread 1: [`,
		`home_city came from: ["conversation","ts-thread-1","Moving to Lisbon «Ana» <draft> ✓"]`,
		`pet came from: ["remember_tool",null]`,
		`"facts":[`, `"pet:remember_tool"`, `"threads":[`,
		`\"home_city\": \"Lisbon\"`, // in thread 2's system prompt
		"home city is Lisbon",       // in the chat model's answer
		"facts after forgetting home_city: [",
		"erasure dates in order: true",
		"facts after the erasure: 0",
		"\nok\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the loop's output lacks %q", want)
		}
	}
	api := &factapi.Client{BaseURL: st.Info.APIURL}
	if facts := api.Facts(t, "/v1/users/"+user+"/facts", adminToken); len(facts) != 0 {
		t.Errorf("facts after the erasure, read by Go = %v, want none", facts)
	}
}
