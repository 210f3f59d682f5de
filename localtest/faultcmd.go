package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/usermemory/usermemory/localtest/fault"
	"github.com/usermemory/usermemory/localtest/stack"
)

// faultHelp follows the flags in fault's help.
const faultHelp = `
  SERVICE  dynamodb, sqs or bedrock (the functions' and gateways' endpoints)
  KIND     stall (hold requests, serve them when the fault ends), throttle
           (the service's throttling error), error (its HTTP 500), slow
           (serve each request after -delay)
  AMOUNT   a duration (10s) and/or a number of requests (5); a stall needs a
           duration

  go run ./localtest fault dynamodb stall 10s
  go run ./localtest fault dynamodb throttle 20
  go run ./localtest fault sqs error 30s
  go run ./localtest fault bedrock slow 1m -delay 3s
  go run ./localtest fault dynamodb clear     (or: fault clear, for every service)
  go run ./localtest fault                    (what each service is doing)
`

// faultCmd sets, ends or shows the faults of the running stack.
func faultCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("fault", "[-state DIR] [SERVICE] [KIND AMOUNT... | clear | status] [-delay 1s]")
	fs.more = faultHelp
	state := fs.stateDir()
	delay := fs.Duration("delay", time.Second, "the delay of slow")
	if err := fs.parse(args, true); err != nil {
		return err
	}
	// Flags may also follow the words.
	var words []string
	rest := fs.Args()
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		words, rest = append(words, rest[0]), rest[1:]
	}
	if err := fs.parse(rest, false); err != nil {
		return err
	}
	info, err := stack.ReadInfo(*state)
	if err != nil {
		return err
	}
	c := fault.Client{URL: info.FaultURL}
	switch {
	case len(words) == 0 || (len(words) == 1 && words[0] == "status"):
	case len(words) == 1 && words[0] == "clear":
		err = c.Clear(ctx, "")
	case len(words) == 2 && words[1] == "clear":
		err = c.Clear(ctx, words[0])
	case len(words) >= 3 && len(words) <= 4:
		var s fault.Spec
		if s, err = parseFault(words[1], words[2:], *delay); err == nil {
			_, err = c.Set(ctx, words[0], s)
		}
	default:
		err = fs.errorf("cannot read %q", strings.Join(words, " "))
	}
	if err != nil {
		return err
	}
	all, err := c.Status(ctx)
	if err != nil {
		return err
	}
	for _, st := range all {
		fmt.Fprintln(out, describeFault(st))
	}
	return nil
}

// parseFault reads KIND and its amounts: a duration, a count, or both.
func parseFault(kind string, amounts []string, delay time.Duration) (fault.Spec, error) {
	s := fault.Spec{Kind: fault.Kind(kind)}
	if s.Kind == fault.Slow {
		s.Delay = delay
	}
	for _, a := range amounts {
		if n, err := strconv.Atoi(a); err == nil {
			s.Requests = n
			continue
		}
		d, err := time.ParseDuration(a)
		if err != nil {
			return fault.Spec{}, fmt.Errorf("fault: %q is neither a duration (10s) nor a number of requests (5)", a)
		}
		s.For = d
	}
	return s, s.Validate()
}

// describeFault is one line saying what a service's injector does.
func describeFault(st fault.Status) string {
	what := "no fault"
	if f := st.Fault; f != nil {
		what = string(f.Kind)
		if f.Delay != "" {
			what += " by " + f.Delay
		}
		if st.Left != "" {
			what += ", " + st.Left + " left"
		}
		if f.Requests > 0 {
			what += fmt.Sprintf(", %d of %d requests left", st.RequestsLeft, f.Requests)
		}
	}
	return fmt.Sprintf("%-8s %s (requests so far: %d passed, %d faulted)", st.Service, what, st.Passed, st.Faulted)
}
