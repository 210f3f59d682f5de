package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/stack"
)

// readmeSkips are the README commands this test does not run, and why.
var readmeSkips = map[string]string{
	"go run ./localtest up":    "the test starts it, with the README's flags",
	"make test":                "the whole suite, which runs this test",
	"make setup":               "installs moto_server into the home folder where it is missing; this test already needs it",
	"go run ./localtest bench": "starts a stack of its own and measures it for minutes",
	"go test":                  "test suites, run by make test",
	"go run ./scripts/skips":   "go test ./..., run by make test",
	"sam build":                "deploys to an AWS account",
	"go run ./eval -live":      "calls Bedrock in the reader's AWS account",
}

// TestREADME runs the commands of README.md's sh blocks as a person
// pastes them, on a stack started with the README's up command: each
// block in one bash, `go run ./localtest` being the command built once,
// curl failing on an HTTP error, xdg-open fetching the page. The only
// change is the ports: the stack listens on free ones, so that the test
// never collides with a stack a person runs or a parallel test, and the
// README's 127.0.0.1:3000 and :3001 are rewritten to them.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the local stack")
	}
	motoserver.RequireInstalled(t)
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README.md has no sh block")
	}
	dir := t.TempDir()
	bin := buildCommand(t, dir)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+tmp, "LOCALTEST="+bin)

	// Up, as the README says, on free ports, with its state in TMPDIR.
	var upArgs []string
	for _, b := range blocks {
		for _, line := range commands(b[1]) {
			if rest, ok := strings.CutPrefix(line, "go run ./localtest up"); ok && upArgs == nil {
				upArgs = append(strings.Fields(rest), "-api-port", "0", "-page-port", "0")
			}
		}
	}
	if upArgs == nil {
		t.Fatal("README.md does not say go run ./localtest up")
	}
	up := startUp(t, bin, env, upArgs...)
	info, err := stack.ReadInfo(filepath.Join(tmp, "usermemory-localtest"))
	if err != nil {
		t.Fatalf("%v\nup printed:\n%s\n%s", err, up.printed, up.stderr.String())
	}
	ports := strings.NewReplacer(
		fmt.Sprintf("127.0.0.1:%d", DefaultAPIPort), strings.TrimPrefix(info.APIURL, "http://"),
		fmt.Sprintf("127.0.0.1:%d", DefaultPagePort), strings.TrimPrefix(info.PageURL, "http://"))

	const preamble = `set -eo pipefail
go() { if [ "$1" = run ] && [ "$2" = ./localtest ]; then shift 2; "$LOCALTEST" "$@"; else command go "$@"; fi; }
curl() { command curl --fail-with-body "$@"; }
xdg-open() { command curl -sf -o /dev/null "${1%%#*}" && echo "opened ${1%%#*}"; }
`
	// Commands that write a file (go run ./eval -json standin.json) write
	// it where a person would, in the repository's folder: remove what
	// the blocks added there.
	before := rootEntries(t)
	t.Cleanup(func() {
		for name := range rootEntries(t) {
			if !before[name] {
				os.RemoveAll(filepath.Join("..", name))
			}
		}
	})
	ran := 0
	for i, b := range blocks {
		var script strings.Builder
		script.WriteString(preamble)
		for _, line := range commands(b[1]) {
			if why := skipped(line); why != "" {
				fmt.Fprintf(&script, "# skipped (%s): %s\n", why, line)
				continue
			}
			ran++
			script.WriteString(ports.Replace(line) + "\n")
		}
		cmd := exec.Command("bash", "-c", script.String())
		cmd.Dir = ".."
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		t.Logf("README.md sh block %d:\n%s", i+1, out)
		if err != nil {
			t.Errorf("README.md sh block %d failed: %v\n--- block\n%s--- output\n%s", i+1, err, b[1], out)
		}
	}
	if ran < 5 {
		t.Errorf("ran %d README commands, want every one of the quick ones (at least 5)", ran)
	}
}

// rootEntries returns the names in the repository's folder.
func rootEntries(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]bool, len(entries))
	for _, e := range entries {
		out[e.Name()] = true
	}
	return out
}

// commands returns the command lines of a sh block, continuation lines
// joined, without blank lines.
func commands(block string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.SplitSeq(block, "\n") {
		if rest, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(rest)
			continue
		}
		cur.WriteString(line)
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	return out
}

// skipped returns why a command is not run, "" when it is. Variables set
// before a command (NAME=value go test …) do not hide it.
func skipped(line string) string {
	for {
		name, rest, ok := strings.Cut(line, " ")
		if !ok || !strings.Contains(name, "=") || strings.ContainsAny(name, "$(\"'") {
			break
		}
		line = strings.TrimSpace(rest)
	}
	for prefix, why := range readmeSkips {
		if line == prefix || strings.HasPrefix(line, prefix+" ") {
			return why
		}
	}
	return ""
}
