package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/localtest/stack"
)

// TestTokenRefusesBadInput: token refuses a stray argument, an empty ID
// and a flag without its value at once, each with one error that carries
// the usage line, before it looks for a running stack.
func TestTokenRefusesBadInput(t *testing.T) {
	state := t.TempDir() // no stack runs here
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bob"}, `unexpected argument "bob"`},
		{[]string{"--user", "ana", "extra"}, `unexpected argument "extra"`},
		{[]string{"--tenant", ""}, "--tenant and --user"},
		{[]string{"--user", ""}, "--tenant and --user"},
		{[]string{"--user", "a b"}, "--tenant and --user"},
		{[]string{"--tenant"}, "flag needs an argument: -tenant"},
	}
	for _, tt := range tests {
		err := tokenCmd(append([]string{"-state", state}, tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Count(err.Error(), tt.want) != 1 ||
			!strings.Contains(err.Error(), "usage: go run ./localtest token ") {
			t.Errorf("token %q: %v, want one error with %q and the usage line", tt.args, err, tt.want)
		}
	}
}

// TestUsageLines: every command writes its usage line one way, and -h
// comes back as flag.ErrHelp.
func TestUsageLines(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cmds := map[string]func([]string) error{
		"up":     func(a []string) error { return up(ctx, a) },
		"token":  tokenCmd,
		"invoke": func(a []string) error { return invoke(ctx, a) },
		"send":   func(a []string) error { return send(ctx, a) },
		"chat":   func(a []string) error { return chat(ctx, a, strings.NewReader(""), io.Discard) },
		"bench":  func(a []string) error { return bench(ctx, a) },
		"fault":  func(a []string) error { return faultCmd(ctx, a, io.Discard) },
	}
	for name, run := range cmds {
		err := run([]string{"-no-such-flag"})
		if err == nil || !strings.HasPrefix(err.Error(), name+": flag provided but not defined") || !strings.Contains(err.Error(), "\nusage: go run ./localtest "+name+" ") {
			t.Errorf("%s -no-such-flag: %v, want %q then its usage line", name, err, name+": flag provided but not defined")
		}
		if err := run([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s -h: %v, want flag.ErrHelp", name, err)
		}
	}
}

// TestPortsTakenMessage: the ports taken are told in one message, with
// the flag that changes each.
func TestPortsTakenMessage(t *testing.T) {
	err := portsTaken([]*stack.PortError{{Part: "page", Port: 3001}, {Part: "api", Port: 3000}})
	want := "port 3001 of the memory page (-page-port) and port 3000 of the HTTP API (-api-port) are taken: " +
		"stop what listens there (another `up`?), or choose other ports with -page-port N and -api-port N (0 picks a free one)"
	if err == nil || err.Error() != want {
		t.Errorf("portsTaken = %v\nwant %s", err, want)
	}
}

// TestChatBedrockChecksCredentials: chat --bedrock without credentials
// refuses before the chat starts (and before it looks for a stack).
func TestChatBedrockChecksCredentials(t *testing.T) {
	awslive.NoCredentials(t)
	err := chat(context.Background(), []string{"-state", t.TempDir(), "--bedrock", "--region", "us-east-1", "--model-id", exampleChatModel}, strings.NewReader(""), io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "-bedrock needs AWS credentials") {
		t.Errorf("chat --bedrock without credentials: %v, want -bedrock needs AWS credentials…", err)
	}
}

// TestUpWithoutMotoServer: up without moto_server anywhere refuses before
// it builds anything, naming the command that installs it.
func TestUpWithoutMotoServer(t *testing.T) {
	dir := t.TempDir()
	bin := buildCommand(t, dir)
	cmd := exec.Command(bin, "up", "-state", filepath.Join(dir, "state"), "-api-port", "0", "-page-port", "0")
	cmd.Env = []string{"PATH=" + filepath.Join(dir, "empty"), "HOME=" + dir, "TMPDIR=" + dir}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "install it with `make setup`") || strings.Contains(string(out), "building") {
		t.Errorf("up without moto_server: %v\n%s\nwant a refusal naming make setup, before any build", err, out)
	}
}
