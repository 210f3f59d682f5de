// Package motoserver starts and stops moto_server, the local DynamoDB and SQS
// that the tests and the local stack run on, on a free 127.0.0.1 port.
package motoserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/usermemory/usermemory/internal/localnet"
	"github.com/usermemory/usermemory/internal/testenv"
)

// EndpointEnv names the environment variable that points tests at a
// running moto_server (for example http://127.0.0.1:5000).
// scripts/with-moto.sh starts one server and sets it for the command it
// runs.
const EndpointEnv = "USERMEMORY_AWS_ENDPOINT"

// BinEnv names the environment variable that gives the path of the
// moto_server program; when set, it comes before PATH and [VenvDir]
// (see [Find]).
const BinEnv = "USERMEMORY_MOTO_SERVER"

// Version is the moto version the project is tested with.
const Version = "5.2.1"

// InstallCommand installs moto_server into [VenvDir], as make setup does.
// It works on a stock Debian 12 or Ubuntu 24.04, whose python3 refuses a
// plain pip install (PEP 668, externally-managed-environment).
const InstallCommand = "python3 -m venv ~/.local/share/usermemory/venv && ~/.local/share/usermemory/venv/bin/pip install 'moto[server]==" + Version + "' cfn-lint"

// InstallHint tells how to get moto_server where it is missing.
const InstallHint = "moto_server is not installed (not on PATH, not in ~/.local/share/usermemory/venv/bin, and " + BinEnv + " is not set): " +
	"install it with `make setup`, or `" + InstallCommand + "` (on Debian and Ubuntu, python3 -m venv needs `sudo apt-get install python3-venv`)"

// runHint tells how to run the tests that need moto_server.
const runHint = "run the tests with `./scripts/with-moto.sh go test ./...` (make test does), which needs moto_server (`make setup` installs it)"

// VenvDir returns the virtual environment make setup installs moto_server
// and cfn-lint into: $XDG_DATA_HOME/usermemory/venv, by default
// ~/.local/share/usermemory/venv.
func VenvDir() string {
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "usermemory", "venv")
}

// Find returns the path of the moto_server program: the one [BinEnv]
// names, else the one on PATH, else the one in [VenvDir]. Its error says
// how to install it.
func Find() (string, error) {
	if p := os.Getenv(BinEnv); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BinEnv, p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("moto_server"); err == nil {
		return p, nil
	}
	if dir := VenvDir(); dir != "" {
		p := filepath.Join(dir, "bin", "moto_server")
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New(InstallHint)
}

// Server is a running moto_server process.
type Server struct {
	// Endpoint is the base URL, http://127.0.0.1:PORT.
	Endpoint string
	cmd      *exec.Cmd
	done     chan struct{}
}

// Start starts moto_server on a free 127.0.0.1 port and waits until it
// answers. Its output goes to logPath when not empty. It returns the error
// of [Find] when moto_server is not installed.
func Start(ctx context.Context, logPath string) (*Server, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	ports, err := localnet.FreePorts(1)
	if err != nil {
		return nil, err
	}
	port := ports[0]
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("moto: start: %w", err)
	}
	s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.wait(ctx, 60*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) wait(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("moto: moto_server exited at start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(s.Endpoint + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
	}
	return fmt.Errorf("moto: moto_server did not answer on %s within %s", s.Endpoint, limit)
}

// Stop ends the server and its children.
func (s *Server) Stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// Endpoint returns the moto_server endpoint named by USERMEMORY_AWS_ENDPOINT
// for a test that needs one. When the variable is not set, it skips tb
// saying how to run the test, or fails it when services are required (see
// testenv.Need).
func Endpoint(tb testenv.TB) string {
	tb.Helper()
	ep := os.Getenv(EndpointEnv)
	if ep == "" {
		testenv.Need(tb, "this test needs moto_server, and "+EndpointEnv+" is not set: "+runHint)
	}
	return ep
}

// Installed returns nil when [Find] finds moto_server, and otherwise an
// error saying how to install it. Tests that start their own server (the
// local stack's) call it, or [RequireInstalled], first.
func Installed() error {
	_, err := Find()
	return err
}

// RequireInstalled skips tb, or fails it when services are required (see
// testenv.Need), unless [Find] finds moto_server.
func RequireInstalled(tb testenv.TB) {
	tb.Helper()
	if err := Installed(); err != nil {
		testenv.Need(tb, "this test starts moto_server, and "+err.Error())
	}
}

// Reset clears every resource of the server at endpoint.
func Reset(endpoint string) error {
	resp, err := http.Post(endpoint+"/moto-api/reset", "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("moto: reset: %s", resp.Status)
	}
	return nil
}
