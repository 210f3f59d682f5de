package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/stack"
)

// TestCommands runs the command as a person does: up, then token, send
// and invoke against it, then Ctrl-C, after which no process it started
// is left and the state file is gone.
func TestCommands(t *testing.T) {
	motoserver.RequireInstalled(t)
	dir := t.TempDir()
	bin := buildCommand(t, dir)
	state := filepath.Join(dir, "state")
	// Free ports: the defaults (3000, 3001) would collide with a stack a
	// person runs, or with a parallel test run.
	up := startUp(t, bin, nil, "-state", state, "-api-port", "0", "-page-port", "0", "-param", "ExtractEveryTurns=2")
	info, err := stack.ReadInfo(state)
	if err != nil {
		t.Fatalf("%v\nup printed:\n%s\n%s", err, up.printed, up.stderr.String())
	}
	for _, want := range []string{info.APIURL, info.AWSEndpoint, info.TableName, info.QueueURL, info.DLQURL, info.BedrockURL, info.JWKSURL, filepath.Join(state, stack.InfoFile), "curl",
		// The hints talk to this stack: they carry its -state.
		"localtest token -state " + state + " ", "localtest chat -state " + state + " "} {
		if want == "" || !strings.Contains(up.printed, want) {
			t.Errorf("up printed no %q:\n%s", want, up.printed)
		}
	}
	// up says what it is doing while it starts. Its stderr reaches the
	// buffer through a pipe that exec copies on its own goroutine, which
	// may still lag behind stdout's last line on a busy machine.
	for _, want := range []string{"moto_server", "functions", "table and the queues", "Runtime Interface Emulator"} {
		for end := time.Now().Add(10 * time.Second); !strings.Contains(up.stderr.String(), want) && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(up.stderr.String(), want) {
			t.Errorf("up's progress names no %q:\n%s", want, up.stderr.String())
		}
	}

	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{args[0], "-state", state}, args[1:]...)...).Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	// A second stack on the first one's ports is refused with both ports
	// and the flags to change, in one message.
	apiPort := info.APIURL[strings.LastIndex(info.APIURL, ":")+1:]
	pagePort := info.PageURL[strings.LastIndex(info.PageURL, ":")+1:]
	second := exec.Command(bin, "up", "-state", filepath.Join(dir, "second"), "-api-port", apiPort, "-page-port", pagePort)
	want := "port " + pagePort + " of the memory page (-page-port) and port " + apiPort + " of the HTTP API (-api-port) are taken"
	if out, err := second.CombinedOutput(); err == nil || !strings.Contains(string(out), want) || strings.Count(string(out), "taken") != 1 {
		t.Errorf("up on taken ports: %v\n%s\nwant one error: %s", err, out, want)
	}

	tok := run("token", "--tenant", "acme", "--user", "cmd-user")
	run("send", "--tenant", "acme", "--user", "cmd-user", "--turns", "2", "--text", "I'm Ana and I live in Lisbon.")
	var body string
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodGet, info.APIURL+"/v1/me/facts", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if body = string(b); strings.Contains(body, "Lisbon") {
			break
		}
	}
	if !strings.Contains(body, `"value":"Lisbon"`) {
		t.Errorf("facts after send = %s, want Lisbon", body)
	}
	// The fault command sets, shows and ends a fault of the running stack.
	if out := run("fault", "dynamodb", "throttle", "30s", "3"); !strings.Contains(out, "dynamodb throttle") || !strings.Contains(out, "3 of 3 requests left") {
		t.Errorf("fault dynamodb throttle 30s 3 printed:\n%s", out)
	}
	if out := run("fault", "clear"); strings.Contains(out, "throttle") || !strings.Contains(out, "sqs") || !strings.Contains(out, "bedrock") {
		t.Errorf("fault clear printed:\n%s", out)
	}
	var res struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
	}
	if err := json.Unmarshal([]byte(run("invoke", "-e", filepath.Join("..", "events", "getfacts-me.json"), "GetFactsFunction")), &res); err != nil || res.StatusCode != 200 {
		t.Errorf("invoke answered %+v (%v), want a 200 response", res, err)
	}

	// An unknown function is refused with the names that exist.
	if out, err := exec.Command(bin, "invoke", "-state", state, "GetFacts").CombinedOutput(); err == nil || !strings.Contains(string(out), "no function GetFacts; the functions are ClearFactsFunction, ") {
		t.Errorf("invoke GetFacts: %v\n%s\nwant the names of the functions", err, out)
	}

	// Ctrl-C reaches the whole foreground process group.
	pids := descendants(up.cmd.Process.Pid)
	if len(pids) < 3 {
		t.Fatalf("processes under up: %v, want moto_server and the emulators", pids)
	}
	_ = syscall.Kill(-up.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-up.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("up did not stop within 30 s of Ctrl-C")
	}
	// The children end on their own signals: give them until a deadline.
	left := pids
	for end := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		left = slices.DeleteFunc(left, func(p int) bool { return !running(p) })
	}
	for _, p := range left {
		t.Errorf("process %d still runs 5 s after up stopped", p)
	}
	if _, err := os.Stat(filepath.Join(state, stack.InfoFile)); err == nil {
		t.Error("the state file is still there after Ctrl-C")
	}
	// It says that it stopped, and what it kept.
	if last := strings.TrimSpace(up.stderr.String()); !strings.Contains(last[strings.LastIndex(last, "\n")+1:], "stopped; kept the table's") {
		t.Errorf("up's last line after Ctrl-C is not the one saying it stopped:\n%s", last)
	}

	// -state keeps the facts: a new up with the same folder has them.
	again := startUp(t, bin, nil, "-state", state, "-api-port", "0", "-page-port", "0")
	info, err = stack.ReadInfo(state)
	if err != nil {
		t.Fatalf("%v\nup printed:\n%s\n%s", err, again.printed, again.stderr.String())
	}
	req, _ := http.NewRequest(http.MethodGet, info.APIURL+"/v1/me/facts", nil)
	req.Header.Set("Authorization", "Bearer "+run("token", "--tenant", "acme", "--user", "cmd-user"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"value":"Lisbon"`) {
		t.Errorf("facts after a restart with the same -state = %s %s, want Lisbon kept", resp.Status, b)
	}
	if !strings.Contains(again.stderr.String(), "loaded") {
		t.Errorf("up's progress does not say it loaded the kept items:\n%s", again.stderr.String())
	}
}

// buildCommand builds this command into dir and returns its path.
func buildCommand(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "localtest")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// upProcess is `localtest up`, started by a test as a person starts it.
type upProcess struct {
	cmd *exec.Cmd
	// printed is what up printed up to its line "Ctrl-C …", which says
	// the stack is ready; stderr its progress and errors.
	printed string
	stderr  *lockedBuffer
	// exited is closed when up has ended.
	exited chan struct{}
}

// startUp runs bin up with args (and env, when not nil) in a process
// group of its own, and reads what it prints until the line that says
// the stack is ready, or until it ends. When the test ends, up is
// interrupted as Ctrl-C does, and killed if it has not stopped within
// 30 s.
func startUp(t *testing.T, bin string, env []string, args ...string) *upProcess {
	t.Helper()
	p := &upProcess{cmd: exec.Command(bin, append([]string{"up"}, args...)...), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	lines := bufio.NewScanner(stdout)
	var printed strings.Builder
	for lines.Scan() {
		printed.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "Ctrl-C") {
			break
		}
	}
	p.printed = printed.String()
	go func() { _, _ = io.Copy(io.Discard, stdout); _ = p.cmd.Wait(); close(p.exited) }()
	return p
}

// lockedBuffer is a bytes.Buffer that a process may write while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// descendants returns the processes below pid, transitively.
func descendants(pid int) []int {
	var out []int
	kids, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, k := range kids {
		b, _ := os.ReadFile(k)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
				out = append(out, descendants(n)...)
			}
		}
	}
	return out
}

// running reports whether pid runs and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}
