// Package testenv says whether the tests must have every service and tool
// they use (moto_server, cfn-lint, the local stack) or may skip the tests
// that need one that is missing.
//
// A plain go test ./... runs anywhere: a test whose service or tool is
// missing skips, saying how to run it. make test and CI set
// USERMEMORY_REQUIRE_SERVICES=1 (CI=true does the same), and then a
// missing service fails the run instead, so that nothing is skipped
// unseen.
package testenv

import "os"

// RequireEnv names the environment variable that makes a missing service
// or tool fail the tests instead of skipping them; make test sets it to 1.
const RequireEnv = "USERMEMORY_REQUIRE_SERVICES"

// Required reports whether the environment asks for every test to run,
// services included: USERMEMORY_REQUIRE_SERVICES=1 or CI=true.
func Required() bool {
	return os.Getenv(RequireEnv) == "1" || os.Getenv("CI") == "true"
}

// TB is the part of testing.TB that [Need] uses.
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// Need skips tb with why, or fails it with why when [Required]. why says
// what is missing and how to get it.
func Need(tb TB, why string) {
	tb.Helper()
	if Required() {
		tb.Fatal(why + " (services are required here: " + RequireEnv + "=1 or CI=true)")
	}
	tb.Skip(why)
}
