// Package stacktest runs the tests of a package against one local stack
// (package stack), started once from TestMain, as the end-to-end suites
// do:
//
//	func TestMain(m *testing.M) {
//		os.Exit(stacktest.Main("e2e", stack.Options{…}, func(s *stack.Stack) int {
//			st = s
//			return m.Run()
//		}))
//	}
package stacktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/internal/testenv"
	"github.com/usermemory/usermemory/localtest/stack"
)

// Main starts the local stack with opts (its StateDir a new temporary
// folder) for the tests of the package called name, calls run with it,
// stops it, and returns run's exit code for os.Exit. Without moto_server
// installed it returns 0, saying that the tests are skipped, or 1 when
// services are required (testenv.Required). The state folder, which holds
// the logs of the stack and the functions, is removed after a pass and
// kept after a failure, and Main says where.
func Main(name string, opts stack.Options, run func(st *stack.Stack) int) int {
	if err := motoserver.Installed(); err != nil {
		if testenv.Required() {
			fmt.Fprintf(os.Stderr, "%s: the local stack needs moto_server, and services are required here: %v\n", name, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "%s: skipped: the local stack needs moto_server, and %v\n", name, err)
		return 0
	}
	state, err := os.MkdirTemp("", "usermemory-"+name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := 1
	defer func() {
		if code == 0 {
			os.RemoveAll(state)
		} else {
			fmt.Fprintf(os.Stderr, "%s: the logs of the stack and the functions are kept in %s\n", name, filepath.Join(state, "logs"))
		}
	}()
	start := time.Now()
	opts.StateDir = state
	st, err := stack.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: the local stack did not start: %v\n", name, err)
		return code
	}
	defer st.Close()
	fmt.Fprintf(os.Stderr, "%s: local stack up in %s\n", name, time.Since(start).Round(100*time.Millisecond))
	code = run(st)
	return code
}
