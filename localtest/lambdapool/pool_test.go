package lambdapool

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/localnet"
)

var (
	rie   string
	probe string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "lambdapool")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	rie = filepath.Join(dir, "aws-lambda-rie")
	probe = filepath.Join(dir, "probe", "bootstrap")
	if err := BuildRIE(ctx, ".", rie); err != nil {
		panic(err)
	}
	if err := Build(ctx, ".", "./testdata/probe", probe); err != nil {
		panic(err)
	}
	return m.Run()
}

type reply struct {
	Env map[string]string `json:"env"`
	PID int               `json:"pid"`
}

func newPool(t *testing.T, max int, timeout time.Duration) *Pool {
	t.Helper()
	p := New(Spec{
		Name: "probe-fn", RIE: rie, Bootstrap: probe,
		Env:     []string{"PROBE_VAR=from-spec", "AWS_REGION=us-east-1", "PATH=" + os.Getenv("PATH")},
		Timeout: timeout, MemoryMB: 256, Max: max,
	})
	t.Cleanup(p.Close)
	return p
}

func invoke(t *testing.T, p *Pool, payload string) Result {
	t.Helper()
	res, err := p.Invoke(context.Background(), []byte(payload), "")
	if err != nil {
		t.Fatalf("Invoke(%s): %v", payload, err)
	}
	return res
}

func TestInvokePassesEnvironment(t *testing.T) {
	p := newPool(t, 2, 3*time.Second)
	res := invoke(t, p, `{}`)
	if res.Err != nil {
		t.Fatalf("Err = %v, want none", res.Err)
	}
	var r reply
	if err := json.Unmarshal(res.Payload, &r); err != nil {
		t.Fatalf("payload %s: %v", res.Payload, err)
	}
	want := map[string]string{
		"PROBE_VAR": "from-spec", "AWS_LAMBDA_FUNCTION_NAME": "probe-fn",
		"AWS_LAMBDA_FUNCTION_TIMEOUT": "3", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_REGION": "us-east-1", "deadline_ms": "3s",
	}
	for k, v := range want {
		if r.Env[k] != v {
			t.Errorf("%s = %q, want %q", k, r.Env[k], v)
		}
	}
}

func TestHandlerErrorIsAFunctionError(t *testing.T) {
	p := newPool(t, 1, 3*time.Second)
	first := invoke(t, p, `{}`)
	res := invoke(t, p, `{"do":"fail"}`)
	if res.Err == nil || res.Err.Message != "probe failed on request" {
		t.Fatalf("Err = %v, want the handler's error", res.Err)
	}
	// A handler error keeps the environment.
	again := invoke(t, p, `{}`)
	if pid(t, again) != pid(t, first) || p.EnvironmentsStarted() != 1 {
		t.Errorf("environments started = %d, pids %d then %d; want one environment kept", p.EnvironmentsStarted(), pid(t, first), pid(t, again))
	}
}

func pid(t *testing.T, r Result) int {
	t.Helper()
	var rep reply
	if err := json.Unmarshal(r.Payload, &rep); err != nil {
		t.Fatalf("payload %s: %v", r.Payload, err)
	}
	return rep.PID
}

func TestTimeoutAndCrashReplaceTheEnvironment(t *testing.T) {
	p := newPool(t, 1, time.Second)
	invoke(t, p, `{}`)
	res := invoke(t, p, `{"do":"sleep","sleepMs":3000}`)
	if res.Err == nil || res.Err.Type != "Sandbox.Timedout" {
		t.Fatalf("Err = %v, want Sandbox.Timedout", res.Err)
	}
	if res := invoke(t, p, `{}`); res.Err != nil {
		t.Fatalf("after a timeout: Err = %v", res.Err)
	}
	res = invoke(t, p, `{"do":"exit"}`)
	if res.Err == nil || !strings.Contains(res.Err.Type, "Runtime") {
		t.Fatalf("Err = %v, want a Runtime error", res.Err)
	}
	if res := invoke(t, p, `{}`); res.Err != nil {
		t.Fatalf("after a crash: Err = %v", res.Err)
	}
	if got := p.EnvironmentsStarted(); got != 3 {
		t.Errorf("environments started = %d, want 3 (first, after the timeout, after the crash)", got)
	}
}

func TestConcurrentInvocationsGrowThePoolToItsLimit(t *testing.T) {
	p := newPool(t, 3, 5*time.Second)
	var wg sync.WaitGroup
	errs := make(chan string, 12)
	for range 12 {
		wg.Go(func() {
			res, err := p.Invoke(context.Background(), []byte(`{"do":"sleep","sleepMs":200}`), "")
			if err != nil || res.Err != nil {
				errs <- "invoke failed"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := p.EnvironmentsStarted(); got != 3 {
		t.Errorf("environments started = %d, want 3 (the limit)", got)
	}
	if got := p.Invocations(); got != 12 {
		t.Errorf("invocations = %d, want 12", got)
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	p := New(Spec{Name: "probe-fn", RIE: rie, Bootstrap: probe, Timeout: 3 * time.Second, Max: 2})
	res, err := p.Invoke(context.Background(), []byte(`{}`), "")
	if err != nil || res.Err != nil {
		t.Fatalf("Invoke: %v %v", err, res.Err)
	}
	runtimePID := pid(t, res)
	var riePIDs []int
	for e := range p.live {
		riePIDs = append(riePIDs, e.cmd.Process.Pid)
	}
	p.Close()
	time.Sleep(100 * time.Millisecond)
	for _, id := range append(riePIDs, runtimePID) {
		if alive(id) {
			t.Errorf("process %d still runs after Close", id)
		}
	}
	if _, err := p.Invoke(context.Background(), []byte(`{}`), ""); err != ErrClosed {
		t.Errorf("Invoke after Close: %v, want ErrClosed", err)
	}
}

// alive reports whether process id runs (a zombie does not count).
func alive(id int) bool {
	if syscall.Kill(id, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(id), "stat"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func TestHandlerErrorShape(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"errorMessage":"x","errorType":"y"}`, true},
		{`{"errorMessage":"x","errorType":"y","stackTrace":[]}`, true},
		{`{"errorMessage":"x","statusCode":500}`, false},
		{`{"statusCode":200,"body":"{}"}`, false},
		{`"errorMessage"`, false},
		{`null`, false},
	} {
		if got := handlerError([]byte(tc.body)) != nil; got != tc.want {
			t.Errorf("handlerError(%s) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

// TestEnvironmentGoneBeforeTheRequestIsReplaced: an idle environment whose
// emulator no longer listens (the RIE exits when a port it was given is
// taken) refuses the connection before the function runs; the pool runs
// the invocation in a new environment, as Lambda places it in another
// sandbox, instead of failing it.
func TestEnvironmentGoneBeforeTheRequestIsReplaced(t *testing.T) {
	p := newPool(t, 1, 5*time.Second)
	ports, err := localnet.FreePorts(1) // closed again: nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	gone := &environment{cmd: cmd, url: "http://127.0.0.1:" + strconv.Itoa(ports[0]) + InvokePath,
		done: make(chan struct{}), client: &http.Client{}}
	go func() { _ = cmd.Wait(); close(gone.done) }()
	p.mu.Lock()
	p.live[gone], p.idle = struct{}{}, append(p.idle, gone)
	p.mu.Unlock()

	if res := invoke(t, p, `{}`); res.Err != nil {
		t.Fatalf("Err = %v", res.Err)
	}
	if got := p.EnvironmentsStarted(); got != 1 {
		t.Errorf("environments started = %d, want 1 (the one in place of the gone one)", got)
	}
	if gone.alive() {
		t.Error("the gone environment's process was not stopped")
	}
}
