// Package lambdapool runs a Lambda function's bootstrap binary as Lambda
// does, under the Lambda Runtime Interface Emulator (RIE), with a pool of
// execution environments per function.
//
// One RIE process serves one invocation at a time, so a pool keeps idle
// environments, starts new ones on demand up to a limit, and replaces an
// environment that crashed or timed out. Every process it starts is in its
// own process group and dies with the pool (and, through Pdeathsig, with
// the process that made the pool).
package lambdapool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/usermemory/usermemory/internal/localnet"
)

// InvokePath is the RIE's invocation path, the same as Lambda's Invoke API
// for a function called "function".
const InvokePath = "/2015-03-31/functions/function/invocations"

// Spec describes a function.
type Spec struct {
	// Name is the function's name, given to it as AWS_LAMBDA_FUNCTION_NAME.
	Name string
	// RIE is the path of the aws-lambda-rie binary.
	RIE string
	// Bootstrap is the path of the function's bootstrap binary; it runs in
	// the binary's folder.
	Bootstrap string
	// Env is the function's environment, KEY=VALUE, without the variables
	// the pool sets (AWS_LAMBDA_FUNCTION_NAME, _TIMEOUT, _MEMORY_SIZE).
	Env []string
	// Timeout is the function's timeout; MemoryMB its memory.
	Timeout  time.Duration
	MemoryMB int
	// Max is the most environments run at once; 0 means [DefaultMax].
	Max int
	// Log receives the output of the RIE and the function; nil discards it.
	Log io.Writer
}

// FunctionError is the error a function's handler returned, or the
// runtime's (a crash, a timeout), as Lambda reports it.
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

// Error returns the type and message of the error.
func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// Result is the outcome of an invocation.
type Result struct {
	// Payload is what the function returned, or the error document when
	// Err is set.
	Payload []byte
	// Err is set when the function failed.
	Err *FunctionError
	// Duration is the invocation's wall time in the environment.
	Duration time.Duration
}

// ErrClosed is returned by [Pool.Invoke] after [Pool.Close].
var ErrClosed = errors.New("lambdapool: pool closed")

// Pool is the execution environments of one function. It is safe for
// concurrent use.
type Pool struct {
	spec        Spec
	slots       chan struct{}
	mu          sync.Mutex
	idle        []*environment
	live        map[*environment]struct{}
	closed      bool
	invocations atomic.Int64
	started     atomic.Int64
}

// DefaultMax is the most execution environments of a pool whose Spec
// sets no Max.
const DefaultMax = 4

// New returns a pool for spec. It starts no process until [Pool.Invoke]
// or [Pool.Warm].
func New(spec Spec) *Pool {
	if spec.Max <= 0 {
		spec.Max = DefaultMax
	}
	if spec.Log == nil {
		spec.Log = io.Discard
	}
	return &Pool{spec: spec, slots: make(chan struct{}, spec.Max), live: map[*environment]struct{}{}}
}

// Name returns the function's name.
func (p *Pool) Name() string { return p.spec.Name }

// Invocations returns how many invocations the pool has started.
func (p *Pool) Invocations() int64 { return p.invocations.Load() }

// EnvironmentsStarted returns how many environments the pool has started,
// replacements included.
func (p *Pool) EnvironmentsStarted() int64 { return p.started.Load() }

// Warm starts n environments (at most the limit) and waits until they
// listen, so that the first invocations find them ready. The runtime
// itself starts on an environment's first invocation, as in Lambda.
func (p *Pool) Warm(ctx context.Context, n int) error {
	n = min(n, p.spec.Max)
	envs := make([]*environment, 0, n)
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			e, err := p.start(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmpErr(firstErr, err)
				return
			}
			envs = append(envs, e)
		})
	}
	wg.Wait()
	p.mu.Lock()
	p.idle = append(p.idle, envs...)
	p.mu.Unlock()
	return firstErr
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Invoke runs the function once with payload, in an idle environment or a
// new one, waiting for one to be free when all are busy. requestID becomes
// the invocation's request ID when not empty. A function error is a
// Result with Err set, not an error; the error is for failures to invoke
// at all (ctx done, the emulator unreachable, the pool closed).
func (p *Pool) Invoke(ctx context.Context, payload []byte, requestID string) (Result, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-p.slots }()
	e, err := p.take(ctx)
	if err != nil {
		return Result{}, err
	}
	p.invocations.Add(1)
	res, healthy, err := e.invoke(ctx, payload, requestID, p.spec.Timeout)
	if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
		// The environment died before it took the request (the RIE exits
		// when a port it needs was taken after it was chosen), so the
		// function never ran: Lambda would place the invocation in
		// another environment, and so does the pool, once.
		p.discard(e)
		if e, err = p.start(ctx); err != nil {
			return Result{}, err
		}
		res, healthy, err = e.invoke(ctx, payload, requestID, p.spec.Timeout)
	}
	if healthy {
		p.put(e)
	} else {
		p.discard(e)
	}
	return res, err
}

func (p *Pool) take(ctx context.Context) (*environment, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	for len(p.idle) > 0 {
		e := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if e.alive() {
			p.mu.Unlock()
			return e, nil
		}
		delete(p.live, e)
	}
	p.mu.Unlock()
	return p.start(ctx)
}

func (p *Pool) put(e *environment) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		e.stop()
		return
	}
	p.idle = append(p.idle, e)
}

func (p *Pool) discard(e *environment) {
	p.mu.Lock()
	delete(p.live, e)
	p.mu.Unlock()
	e.stop()
}

// Close stops every environment and waits until their processes are gone.
// Invocations under way fail.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	envs := make([]*environment, 0, len(p.live))
	for e := range p.live {
		envs = append(envs, e)
	}
	p.live = map[*environment]struct{}{}
	p.idle = nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range envs {
		wg.Go(e.stop)
	}
	wg.Wait()
}

// environment is one RIE process and the runtime it starts.
type environment struct {
	cmd    *exec.Cmd
	url    string
	done   chan struct{}
	client *http.Client
}

func (p *Pool) start(ctx context.Context) (*environment, error) {
	var lastErr error
	for range 3 { // a port taken between choosing and binding: try again
		e, err := p.launch(ctx)
		if err == nil {
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				e.stop()
				return nil, ErrClosed
			}
			p.live[e] = struct{}{}
			p.mu.Unlock()
			p.started.Add(1)
			return e, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func (p *Pool) launch(ctx context.Context) (*environment, error) {
	ports, err := localnet.FreePorts(2)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	cmd := exec.Command(p.spec.RIE,
		"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(ports[1]),
		"--log-level", "error",
		"./"+filepath.Base(p.spec.Bootstrap))
	cmd.Dir = filepath.Dir(p.spec.Bootstrap)
	secs := int((p.spec.Timeout + time.Second - 1) / time.Second)
	cmd.Env = append(append([]string(nil), p.spec.Env...),
		"AWS_LAMBDA_FUNCTION_NAME="+p.spec.Name,
		"AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(max(secs, 1)),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(p.spec.MemoryMB),
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+p.spec.Name,
	)
	cmd.Stdout, cmd.Stderr = p.spec.Log, p.spec.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lambdapool: start %s: %w", p.spec.RIE, err)
	}
	e := &environment{
		cmd:  cmd,
		url:  "http://" + addr + InvokePath,
		done: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     time.Minute,
		}},
	}
	go func() { _ = cmd.Wait(); close(e.done) }()
	// Both of the RIE's addresses must accept: it binds the emulator's
	// first, and exits when the runtime API's port is taken meanwhile.
	runtimeAPI := "127.0.0.1:" + strconv.Itoa(ports[1])
	deadline := time.Now().Add(10 * time.Second)
	for {
		if listening(addr) && listening(runtimeAPI) && e.alive() {
			return e, nil
		}
		select {
		case <-e.done:
			return nil, fmt.Errorf("lambdapool: %s: the emulator exited at start", p.spec.Name)
		case <-ctx.Done():
			e.stop()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.stop()
			return nil, fmt.Errorf("lambdapool: %s: the emulator did not listen on %s", p.spec.Name, addr)
		}
	}
}

// listening reports whether addr accepts a TCP connection.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func (e *environment) alive() bool {
	select {
	case <-e.done:
		return false
	default:
		return true
	}
}

// timedOut starts the RIE's answer when an invocation ran out of time.
var timedOut = []byte("Task timed out after ")

// invoke runs one invocation. healthy is false when the environment must
// be replaced.
func (e *environment) invoke(ctx context.Context, payload []byte, requestID string, timeout time.Duration) (res Result, healthy bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(payload))
	if err != nil {
		return Result{}, true, err
	}
	if requestID != "" {
		req.Header.Set("X-Amzn-RequestId", requestID)
	}
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		return Result{}, false, fmt.Errorf("lambdapool: invoke: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	res = Result{Payload: body, Duration: time.Since(start)}
	if err != nil {
		return res, false, fmt.Errorf("lambdapool: read answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusOK && bytes.HasPrefix(body, timedOut):
		res.Err = &FunctionError{Type: "Sandbox.Timedout", Message: string(body)}
		res.Payload, _ = json.Marshal(res.Err)
		return res, false, nil
	case resp.StatusCode == http.StatusOK:
		res.Err = handlerError(body)
		return res, true, nil
	case resp.StatusCode == http.StatusBadGateway:
		// The runtime crashed or failed to start; the RIE says why.
		fe := handlerError(body)
		if fe == nil {
			fe = &FunctionError{Type: "Runtime.Unknown", Message: strings.TrimSpace(string(body))}
			res.Payload, _ = json.Marshal(fe)
		}
		res.Err = fe
		return res, false, nil
	default:
		return res, false, fmt.Errorf("lambdapool: invoke: the emulator answered %s", resp.Status)
	}
}

// handlerError returns the error document of a failed invocation, or nil
// when body is a function's result. Lambda marks a failure with a header;
// the RIE does not, so the document's shape decides: an object with an
// errorMessage or errorType and nothing else but a stackTrace.
func handlerError(body []byte) *FunctionError {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	if _, ok := m["errorType"]; !ok {
		if _, ok := m["errorMessage"]; !ok {
			return nil
		}
	}
	for k := range m {
		if k != "errorType" && k != "errorMessage" && k != "stackTrace" {
			return nil
		}
	}
	var fe FunctionError
	if json.Unmarshal(body, &fe) != nil {
		return nil
	}
	return &fe
}

// stop kills the runtime processes the RIE started (each in its own
// process group) and then the RIE's group, and waits for the RIE to exit.
func (e *environment) stop() {
	if e.cmd.Process == nil {
		return
	}
	pid := e.cmd.Process.Pid
	for _, child := range children(pid) {
		_ = syscall.Kill(-child, syscall.SIGKILL)
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-e.done:
	case <-time.After(5 * time.Second):
	}
	e.client.CloseIdleConnections()
}

// children returns the IDs of the processes whose parent is pid.
func children(pid int) []int {
	// Linux lists them in /proc/PID/task/TID/children.
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
