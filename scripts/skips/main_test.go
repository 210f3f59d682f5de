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
	report(&out, skips)
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
	report(&none, nil)
	if !strings.Contains(none.String(), "no test skipped") {
		t.Errorf("report of no skip: %q", none.String())
	}
}
