package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestAccount: go test -json's events become the packages' result lines
// and an account of the skips, by package and reason, a TestMain's skip
// of a whole package included.
func TestAccount(t *testing.T) {
	events := `{"Action":"start","Package":"x/a"}
{"Action":"run","Package":"x/a","Test":"TestOne"}
{"Action":"output","Package":"x/a","Test":"TestOne","Output":"=== RUN   TestOne\n"}
{"Action":"output","Package":"x/a","Test":"TestOne","Output":"    a_test.go:12: needs moto_server: run make test\n"}
{"Action":"output","Package":"x/a","Test":"TestOne","Output":"--- SKIP: TestOne (0.00s)\n"}
{"Action":"skip","Package":"x/a","Test":"TestOne"}
{"Action":"run","Package":"x/a","Test":"TestTwo"}
{"Action":"output","Package":"x/a","Test":"TestTwo","Output":"    a_test.go:30: needs moto_server: run make test\n"}
{"Action":"skip","Package":"x/a","Test":"TestTwo"}
{"Action":"run","Package":"x/a","Test":"TestRuns"}
{"Action":"pass","Package":"x/a","Test":"TestRuns"}
{"Action":"output","Package":"x/a","Output":"ok  \tx/a\t0.1s\n"}
{"Action":"pass","Package":"x/a"}
{"Action":"output","Package":"x/e2e","Output":"e2e: skipped: the local stack needs moto_server\n"}
{"Action":"output","Package":"x/e2e","Output":"ok  \tx/e2e\t0.2s\n"}
not json
`
	var out bytes.Buffer
	skips := account(strings.NewReader(events), &out)
	if want := "ok  \tx/a\t0.1s\nok  \tx/e2e\t0.2s\n"; out.String() != want {
		t.Errorf("result lines %q, want %q", out.String(), want)
	}
	report(&out, skips, "")
	for _, want := range []string{
		"3 tests skipped, not run:",
		"  x/a: 2 (TestOne, TestTwo)\n    why: needs moto_server: run make test\n",
		"  x/e2e: 1 ((the whole package))\n    why: the local stack needs moto_server\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report:\n%s\nwant %q", out.String(), want)
		}
	}
	if strings.Contains(out.String(), "TestRuns") {
		t.Errorf("report names a test that ran:\n%s", out.String())
	}
	var none bytes.Buffer
	report(&none, nil, "")
	if !strings.Contains(none.String(), "no test skipped") {
		t.Errorf("report of no skip: %q", none.String())
	}
}

// TestInstalledMotoIsNotToBeInstalled: with moto_server installed, a test
// that skipped for want of it is said to need it started, with the
// command that starts it, and never to need it installed; without, the
// test's own reason stays.
func TestInstalledMotoIsNotToBeInstalled(t *testing.T) {
	skips := []skip{
		{pkg: "x/a", reason: "this test needs moto_server, and USERMEMORY_AWS_ENDPOINT is not set: run the tests with `./scripts/with-moto.sh go test ./...` (make test does), which needs moto_server (`make setup` installs it)", tests: []string{"TestOne"}},
		{pkg: "x/b", reason: "needs Chromium", tests: []string{"TestPage"}},
	}
	var with bytes.Buffer
	report(&with, skips, "/opt/venv/bin/moto_server")
	got := with.String()
	if !strings.Contains(got, "moto_server is installed (/opt/venv/bin/moto_server") || !strings.Contains(got, "./scripts/with-moto.sh go run ./scripts/skips") {
		t.Errorf("report with moto_server installed:\n%s\nwant where it is and the command that runs the tests with it", got)
	}
	if strings.Contains(got, "install it") || strings.Contains(got, "installs it") {
		t.Errorf("report tells to install moto_server, which is installed:\n%s", got)
	}
	if !strings.Contains(got, "why: needs Chromium") {
		t.Errorf("another reason changed:\n%s", got)
	}
	var without bytes.Buffer
	report(&without, skips, "")
	if !strings.Contains(without.String(), "(`make setup` installs it)") {
		t.Errorf("report without moto_server lost the test's reason:\n%s", without.String())
	}
}
