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

// readmeDocs are the documents whose sh blocks TestREADME runs: the
// README, and the documents its long sections moved to, whose commands
// are run from the repository's root as the README's are.
var readmeDocs = []string{
	"README.md",
	filepath.Join("eval", "README.md"),
	filepath.Join("web", "README.md"),
	filepath.Join("docs", "deploy.md"),
	filepath.Join("docs", "testing.md"),
}

// readmeSkips are the commands of readmeDocs this test does not run, and why.
var readmeSkips = map[string]string{
	"go run ./deploy":          "runs against the reader's AWS account",
	"go run ./localtest up":    "the test starts it, with the README's flags",
	"make test":                "the whole suite, which runs this test",
	"make setup":               "installs moto_server into the home folder where it is missing; this test already needs it",
	"go run ./localtest bench": "starts a stack of its own and measures it for minutes",
	"go test":                  "test suites, run by make test",
	"go run ./scripts/skips":   "go test ./..., run by make test",
	"sam build":                "deploys to an AWS account",
	"go run ./eval -live":      "calls Bedrock in the reader's AWS account",
}

// TestREADME runs the commands of the sh blocks of README.md and of the
// documents its sections moved to (readmeDocs) as a person pastes them,
// from the repository's root, on a stack started with the README's up
// command: each
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
	blocks := shBlocks(t, readmeDocs...)
	if len(blocks) == 0 || blocks[0].doc != "README.md" {
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
		for _, line := range commands(b.text) {
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
		for _, line := range commands(b.text) {
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
		t.Logf("%s sh block %d:\n%s", b.doc, i+1, out)
		if err != nil {
			t.Errorf("%s sh block %d failed: %v\n--- block\n%s--- output\n%s", b.doc, i+1, err, b.text, out)
		}
	}
	if ran < 5 {
		t.Errorf("ran %d README commands, want every one of the quick ones (at least 5)", ran)
	}
}

// shBlock is one sh block of a document.
type shBlock struct {
	doc  string // the document, relative to the repository's root
	text string // the block's lines, without its fences
}

// shFence matches a sh block, indented as in a list item or not.
var shFence = regexp.MustCompile("(?s)```sh\n(.*?)```")

// shBlocks returns the sh blocks of the documents (relative to the
// repository's root), in order.
func shBlocks(t *testing.T, docs ...string) []shBlock {
	t.Helper()
	var out []shBlock
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join("..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range shFence.FindAllStringSubmatch(string(b), -1) {
			out = append(out, shBlock{doc: doc, text: m[1]})
		}
	}
	return out
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

// readmeMaxLines and readmeFirstScreen bound the README: a newcomer reads
// it to the end, and finds the flow diagram and the two commands without
// scrolling far.
const readmeMaxLines, readmeFirstScreen = 180, 60

// TestREADMEShape holds the README's structure, not its wording: at most
// readmeMaxLines lines, and within its first readmeFirstScreen lines a
// Mermaid block and sh blocks with the command that runs the service
// locally and the command that runs the tests, the one CI's .ci/run runs.
func TestREADMEShape(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move a long section to where its reader is", len(lines), readmeMaxLines)
	}
	head := strings.Join(lines[:min(len(lines), readmeFirstScreen)], "\n") + "\n"
	if !regexp.MustCompile("(?m)^```mermaid\n").MatchString(head) {
		t.Errorf("README.md has no ```mermaid block in its first %d lines", readmeFirstScreen)
	}
	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	ciCommands := commands(string(ci))
	testCommand := ciCommands[len(ciCommands)-1]
	found := map[string]bool{}
	for _, m := range shFence.FindAllStringSubmatch(head, -1) {
		for _, line := range commands(m[1]) {
			found[line] = true
		}
	}
	for _, want := range []string{"go run ./localtest up", testCommand} {
		if !found[want] {
			t.Errorf("README.md's first %d lines have no sh block with the command %q", readmeFirstScreen, want)
		}
	}
}
