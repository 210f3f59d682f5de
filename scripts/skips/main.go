// Command skips runs go test on packages (./... by default) and ends with
// an account of what it did not run: each skipped test, grouped by
// package and reason, with the reason the test gave, which says how to
// run it. A plain go test ./... says ok for a package whose tests all
// skipped; this says which and why.
//
// Usage:
//
//	go run ./scripts/skips [go test flags] [packages]
//
// It exits with go test's status.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/usermemory/usermemory/internal/motoserver"
)

// event is one line of go test -json (see go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skip is the tests of one package that skipped for one reason.
type skip struct {
	pkg, reason string
	tests       []string
}

func main() {
	args := append([]string{"test", "-json"}, os.Args[1:]...)
	if len(os.Args) == 1 {
		args = append(args, "./...")
	}
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "skips:", err)
		os.Exit(2)
	}
	skips := account(out, os.Stdout)
	err = cmd.Wait()
	moto, _ := motoserver.Find()
	report(os.Stdout, skips, moto)
	if err != nil {
		os.Exit(1)
	}
}

// account reads go test -json events from r, prints each package's
// result line to w as go test does, and returns the skips.
func account(r io.Reader, w io.Writer) []skip {
	output := map[[2]string][]string{} // the output of a test, or of a package (Test "")
	var skips []skip
	add := func(pkg, reason, test string) {
		for i := range skips {
			if skips[i].pkg == pkg && skips[i].reason == reason {
				skips[i].tests = append(skips[i].tests, test)
				return
			}
		}
		skips = append(skips, skip{pkg: pkg, reason: reason, tests: []string{test}})
	}
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		var e event
		if json.Unmarshal(lines.Bytes(), &e) != nil {
			continue
		}
		key := [2]string{e.Package, e.Test}
		switch {
		case e.Action == "output":
			output[key] = append(output[key], e.Output)
			if e.Test == "" && (strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?")) {
				fmt.Fprint(w, e.Output)
			}
			// A suite's TestMain that skips the whole package says so.
			if _, why, ok := strings.Cut(e.Output, ": skipped: "); ok && e.Test == "" {
				add(e.Package, strings.TrimSpace(why), "(the whole package)")
			}
		case e.Action == "skip" && e.Test != "":
			add(e.Package, reason(output[key]), e.Test)
		}
	}
	return skips
}

// reason returns what a skipped test said: its log lines, without the
// file:line prefix and go test's own lines.
func reason(out []string) string {
	var said []string
	for _, l := range out {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if _, msg, ok := strings.Cut(l, ".go:"); ok {
			if _, msg, ok = strings.Cut(msg, ": "); ok {
				l = msg
			}
		}
		said = append(said, l)
	}
	if len(said) == 0 {
		return "(no reason given)"
	}
	return strings.Join(said, " ")
}

// report prints the skips, or that nothing was skipped. moto is the path
// of the installed moto_server ("" for none): a test that skipped for want
// of moto_server is then said to need it started, with the command that
// does, never to need it installed.
func report(w io.Writer, skips []skip, moto string) {
	if len(skips) == 0 {
		fmt.Fprintln(w, "\nno test skipped")
		return
	}
	n := 0
	for _, s := range skips {
		n += len(s.tests)
	}
	slices.SortStableFunc(skips, func(a, b skip) int { return strings.Compare(a.pkg, b.pkg) })
	fmt.Fprintf(w, "\n%d tests skipped, not run:\n", n)
	for _, s := range skips {
		names := s.tests
		if len(names) > 3 {
			names = append(slices.Clone(names[:3]), fmt.Sprintf("and %d more", len(s.tests)-3))
		}
		fmt.Fprintf(w, "  %s: %d (%s)\n    why: %s\n", s.pkg, len(s.tests), strings.Join(names, ", "), withMoto(s.reason, moto))
	}
}

// withMoto returns the reason of a skip, or, when it is moto_server's and
// moto_server is installed at moto, how to run the tests with it.
func withMoto(reason, moto string) string {
	if moto == "" || !strings.Contains(reason, "moto_server") {
		return reason
	}
	where := moto
	if v := motoVersion(moto); v != "" {
		where += ", moto " + v
	}
	return "this test needs a running moto_server; moto_server is installed (" + where + "), but none was started for this run: " +
		"run `./scripts/with-moto.sh go run ./scripts/skips` (or `make test`), which starts it"
}

// motoVersion returns the version of the moto package of the moto_server
// program at path, asked of the Python its first line names; "" when it
// cannot tell.
func motoVersion(path string) string {
	if p, err := exec.LookPath(path); err == nil {
		path = p
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	first, _ := bufio.NewReader(f).ReadString('\n')
	python, ok := strings.CutPrefix(strings.TrimSpace(first), "#!")
	if !ok || strings.ContainsAny(python, " \t") {
		return ""
	}
	out, err := exec.Command(python, "-c", "import moto; print(moto.__version__)").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
