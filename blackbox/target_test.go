package blackbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/producer"
)

// howToRun is the message of a skip, and of the failure under CI=true.
const howToRun = `no target for the black-box suite. Run it against
  the local stack:    USERMEMORY_BLACKBOX=local go test -count=1 ./blackbox/
  a running one:      USERMEMORY_LOCAL_STATE=DIR go test -count=1 ./blackbox/   (DIR: the -state folder of go run ./localtest up)
  a deployed stack:   AWS_PROFILE=… USERMEMORY_STACK_NAME=usermemory USERMEMORY_TOKEN_CMD='…' go test -count=1 -v ./blackbox/
(see docs/deploy.md, "Check a deployed stack")`

// target is the service under test, as its users reach it.
type target struct {
	// name says which service this is, for the log.
	name string
	// apiURL is the fact API's base URL; queueURL the extraction queue.
	apiURL, queueURL string
	// api sends the requests to the fact API.
	api *factapi.Client
	// gateway sends extraction messages as a gateway does, with sqs.
	gateway *producer.Producer
	sqs     *sqs.Client
	// tokenCmd is the shell command printing a token, with placeholders.
	tokenCmd string
	// userScope and adminScope are the scope names the routes require.
	userScope, adminScope string
	// tenant and otherTenant are the tenants the tests use.
	tenant, otherTenant string
	// cleanupAdmin is the admin of tenant who erases the test users, one
	// per run, so that its token is made once.
	cleanupAdmin string
	// modelDeadline bounds the wait for an extraction.
	modelDeadline time.Duration
	// settings are the template parameters the target runs with, by
	// name (its CloudFormation parameters, or the local stack's); nil
	// when unknown. See settings_test.go.
	settings map[string]string
	// modelURL is the local Bedrock stand-in, whose calls a test may
	// count; "" on a deployed stack.
	modelURL string
	// limitsOnce reads the API's limits into settings, once.
	limitsOnce sync.Once

	mu     sync.Mutex
	tokens map[string]string
}

var (
	tgt       *target
	targetErr error
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	raiseParallel()
	defer stopProfiles()
	if os.Getenv("USERMEMORY_BLACKBOX") == "local" && flag.Lookup("test.run").Value.String() == "" {
		// The whole suite: the stacks at the template's bounds start
		// with the stack at the defaults, not when their first test asks.
		startProfiles()
	}
	var stop func()
	tgt, stop, targetErr = newTarget(context.Background())
	if stop != nil {
		defer stop()
	}
	if tgt != nil {
		fmt.Fprintln(os.Stderr, "blackbox: testing", tgt.name)
	}
	return m.Run()
}

// suiteParallel is how many of the suite's tests run at once unless
// -parallel says otherwise: its tests mostly wait on the service (an
// extraction, an import), not on this machine's processors, which go
// test's default (GOMAXPROCS) counts.
const suiteParallel = 8

// raiseParallel sets -parallel to suiteParallel when the command line
// did not set it.
func raiseParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(suiteParallel))
	}
}

// need returns the target, skipping the test when there is none (failing
// under CI=true) and failing it when the target could not be reached.
func need(t *testing.T) *target {
	t.Helper()
	switch {
	case targetErr != nil:
		t.Fatalf("blackbox: %v", targetErr)
	case tgt == nil && os.Getenv("CI") == "true":
		t.Fatalf("blackbox: CI=true and %s", howToRun)
	case tgt == nil:
		t.Skip("blackbox: " + howToRun)
	}
	return tgt
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// The defaults of the settings the README names: the tenants the suite
// uses, and how long it waits for an extraction on a deployed stack
// (USERMEMORY_MODEL_DEADLINE) and on the local stack.
const (
	defaultTenant         = "blackbox"
	defaultOtherTenant    = "blackbox-other"
	deployedModelDeadline = 3 * time.Minute
	localModelDeadline    = time.Minute
)

// newTarget finds the target the environment names; nil and no error when
// it names none. stop, when not nil, stops what newTarget started.
func newTarget(ctx context.Context) (*target, func(), error) {
	t, err := baseTarget()
	if err != nil {
		return nil, nil, err
	}
	switch {
	case os.Getenv("USERMEMORY_STACK_NAME") != "" || os.Getenv("USERMEMORY_API_URL") != "":
		return t, nil, t.deployed(ctx)
	case os.Getenv("USERMEMORY_LOCAL_STATE") != "":
		return t, nil, t.local(ctx, os.Getenv("USERMEMORY_LOCAL_STATE"))
	case os.Getenv("USERMEMORY_BLACKBOX") == "local":
		dir, err := os.MkdirTemp("", "usermemory-blackbox")
		if err != nil {
			return nil, nil, err
		}
		stop, err := startLocal(ctx, dir)
		if err != nil {
			return nil, stop, err
		}
		return t, stop, t.local(ctx, dir)
	case os.Getenv("USERMEMORY_BLACKBOX") != "":
		return nil, nil, fmt.Errorf("USERMEMORY_BLACKBOX=%q: the only value is local", os.Getenv("USERMEMORY_BLACKBOX"))
	}
	return nil, nil, nil
}

// baseTarget returns a target with the settings of the environment, not
// connected yet.
func baseTarget() (*target, error) {
	deadline, err := time.ParseDuration(envOr("USERMEMORY_MODEL_DEADLINE", "0"))
	if err != nil {
		return nil, fmt.Errorf("USERMEMORY_MODEL_DEADLINE: %w", err)
	}
	return &target{
		userScope:     envOr("USERMEMORY_USER_SCOPE", "memory/user"),
		adminScope:    envOr("USERMEMORY_ADMIN_SCOPE", "memory/admin"),
		tenant:        envOr("USERMEMORY_TENANT", defaultTenant),
		otherTenant:   envOr("USERMEMORY_OTHER_TENANT", defaultOtherTenant),
		cleanupAdmin:  newID("cleanup"),
		modelDeadline: deadline,
		tokens:        map[string]string{},
	}, nil
}

// deployed reads the API and queue URLs from the stack's outputs (or the
// environment) and the token command from the environment.
func (t *target) deployed(ctx context.Context) error {
	t.tokenCmd = os.Getenv("USERMEMORY_TOKEN_CMD")
	if t.tokenCmd == "" {
		return errors.New("USERMEMORY_TOKEN_CMD is not set: a command that prints an access token for {tenant}, {user} and {scope}")
	}
	if t.modelDeadline == 0 {
		t.modelDeadline = deployedModelDeadline
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("AWS configuration: %w", err)
	}
	t.apiURL, t.queueURL = os.Getenv("USERMEMORY_API_URL"), os.Getenv("USERMEMORY_QUEUE_URL")
	if name := os.Getenv("USERMEMORY_STACK_NAME"); name != "" {
		out, err := awslive.StackOutputs(ctx, cfg, name)
		if err != nil {
			return err
		}
		if v, ok := out["ApiUrl"]; ok {
			t.apiURL = v
		}
		if v, ok := out["QueueUrl"]; ok {
			t.queueURL = v
		}
		if t.settings, err = awslive.StackParameters(ctx, cfg, name); err != nil {
			return err
		}
		t.name = fmt.Sprintf("stack %s in %s", name, cfg.Region)
	} else {
		t.name = "the API at " + t.apiURL
	}
	if t.apiURL == "" || t.queueURL == "" {
		return fmt.Errorf("no API URL (%q) or queue URL (%q): the stack's outputs ApiUrl and QueueUrl, or USERMEMORY_API_URL and USERMEMORY_QUEUE_URL", t.apiURL, t.queueURL)
	}
	t.api = &factapi.Client{BaseURL: t.apiURL, HTTP: httpc}
	t.sqs = sqs.NewFromConfig(cfg)
	t.gateway = producer.New(t.sqs, t.queueURL)
	return nil
}

// localInfo is the part of the local stack's state file the suite reads.
type localInfo struct {
	APIURL      string `json:"apiUrl"`
	AWSEndpoint string `json:"awsEndpoint"`
	Region      string `json:"region"`
	QueueURL    string `json:"queueUrl"`
	UserScope   string `json:"userScope"`
	AdminScope  string `json:"adminScope"`
	BedrockURL  string `json:"bedrockUrl"`
	// Parameters are the template's parameters the stack resolved.
	Parameters map[string]string `json:"parameters"`
}

// local reads the state file of the local stack running with state folder
// dir; its tokens come from `go run ./localtest token -state dir`.
func (t *target) local(_ context.Context, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "stack.json"))
	if err != nil {
		return fmt.Errorf("no local stack with state folder %s (start one with: go run ./localtest up -state %s): %w", dir, dir, err)
	}
	var info localInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return fmt.Errorf("the state file of %s: %w", dir, err)
	}
	t.name = "the local stack at " + info.APIURL
	t.apiURL, t.queueURL = info.APIURL, info.QueueURL
	t.api = &factapi.Client{BaseURL: t.apiURL, HTTP: httpc}
	t.userScope, t.adminScope = info.UserScope, info.AdminScope
	t.settings, t.modelURL = info.Parameters, info.BedrockURL
	if t.modelDeadline == 0 {
		t.modelDeadline = localModelDeadline
	}
	t.tokenCmd = "go run ./localtest token -state " + shellQuote(dir) +
		" --tenant {tenant} --user {user} --admin={admin} --audience {audience} --ttl {ttl}"
	t.sqs = sqs.New(sqs.Options{
		Region:       info.Region,
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(info.AWSEndpoint),
	})
	t.gateway = producer.New(t.sqs, info.QueueURL)
	return nil
}

// repoRoot is the module's root, where the commands run.
const repoRoot = ".."

// startLocal runs `go run ./localtest up -state dir` on free ports (the
// defaults would collide with a stack a person runs, or with a parallel
// test run; the state file names the ports) and waits for its state file.
// stop interrupts it, as Ctrl-C does, and waits for it to end. up's
// further arguments are args (-param Name=Value…).
func startLocal(ctx context.Context, dir string, args ...string) (stop func(), err error) {
	cmd := exec.Command("go", append([]string{"run", "./localtest", "up", "-state", dir, "-api-port", "0", "-page-port", "0"}, args...)...)
	cmd.Dir = repoRoot
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("go run ./localtest up: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		os.RemoveAll(dir)
	}
	// The first start builds the functions and the runtime emulator.
	limit := time.After(5 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "stack.json")); err == nil {
			return stop, nil
		}
		select {
		case err := <-done:
			done <- err
			return stop, fmt.Errorf("go run ./localtest up ended before the stack was ready (%v):\n%s", err, out.String())
		case <-limit:
			return stop, fmt.Errorf("go run ./localtest up: no state file after 5 minutes:\n%s", out.String())
		case <-ctx.Done():
			return stop, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tokenOptions are the claims of a token the suite asks for.
type tokenOptions struct {
	tenant, user string
	admin        bool
	// audience, when set, replaces the stack's audience; ttl, when not
	// zero, the lifetime (negative: already expired).
	audience string
	ttl      time.Duration
}

// token runs the token command for o and returns the token it prints.
// Tokens are cached per claims for the run. It skips the test when o needs
// a placeholder the command lacks.
func (t *target) token(tb testing.TB, o tokenOptions) string {
	tb.Helper()
	if o.audience != "" && !strings.Contains(t.tokenCmd, "{audience}") {
		tb.Skip("the token command has no {audience} placeholder: cannot ask for a token of another audience")
	}
	if o.ttl != 0 && !strings.Contains(t.tokenCmd, "{ttl}") {
		tb.Skip("the token command has no {ttl} placeholder: cannot ask for an expired token")
	}
	key := fmt.Sprintf("%+v", o)
	t.mu.Lock()
	defer t.mu.Unlock()
	if tok, ok := t.tokens[key]; ok {
		return tok
	}
	scope := t.userScope
	if o.admin {
		scope += " " + t.adminScope
	}
	ttl := "1h"
	if o.ttl != 0 {
		ttl = o.ttl.String()
	}
	// An empty {audience} asks for the stack's own (the local token
	// command reads it so).
	aud := o.audience
	cmdline := strings.NewReplacer(
		"{tenant}", shellQuote(o.tenant), "{user}", shellQuote(o.user),
		"{scope}", shellQuote(scope), "{admin}", fmt.Sprint(o.admin),
		"{audience}", shellQuote(aud), "{ttl}", shellQuote(ttl),
	).Replace(t.tokenCmd)
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("token command %q: %v\n%s", cmdline, err, stderr.String())
	}
	tok := strings.TrimSpace(string(out))
	if tok == "" || strings.ContainsAny(tok, " \n") {
		tb.Fatalf("token command %q printed %q, want one token", cmdline, out)
	}
	t.tokens[key] = tok
	return tok
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
