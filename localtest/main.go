// Command localtest runs usermemory on one machine, without Docker, from
// template.yaml: moto_server for DynamoDB and SQS, every function under the
// Lambda Runtime Interface Emulator, the HTTP API with its JWT authorizer,
// the extractor's SQS event source, the Bedrock Converse stand-in and a
// local token issuer.
//
// Usage (every command also takes -h, and -state DIR for a stack started
// with one):
//
//	go run ./localtest up [-state DIR] [-api-port 3000] [-page-port 3001] [-param Name=Value]...
//	go run ./localtest chat --tenant acme --user ana [--bedrock --model-id ID [--region R]]
//	go run ./localtest token --tenant acme --user ana [--admin] [--ttl 1h] [--audience AUD]
//	go run ./localtest invoke [-e events/X.json] FunctionLogicalId
//	go run ./localtest send [-f message.json | --tenant acme --user ana --thread th-1 --turns 2 --text "I'm Ana"]
//	go run ./localtest bench [-n 1000] [-extractions 50]
//	go run ./localtest fault [SERVICE] [KIND AMOUNT... | clear | status] [-delay 1s]
//
// up prints where everything is, writes the same as JSON to a state file,
// and runs until Ctrl-C, which stops every process it started and keeps
// the table's items in the state folder for the next up. The other
// commands work against the running stack through that state file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/usermemory/usermemory/localtest/stack"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	args := os.Args[2:]
	switch os.Args[1] {
	case "up":
		err = up(ctx, args)
	case "token":
		err = tokenCmd(args)
	case "invoke":
		err = invoke(ctx, args)
	case "send":
		err = send(ctx, args)
	case "chat":
		err = chat(ctx, args, os.Stdin, os.Stdout)
	case "bench":
		err = bench(ctx, args)
	case "fault":
		err = faultCmd(ctx, args, os.Stdout)
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localtest:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, strings.TrimLeft(`
usage: go run ./localtest COMMAND [flags]

  up      start the stack from template.yaml; Ctrl-C stops it
  chat    chat as a user, with the example gateway wired to the running stack
  token   print a token for the running stack's API
  invoke  invoke one function with an event file, like sam local invoke -e
  send    send one extraction message to the running stack's queue
  bench   start a stack and measure it (start time, API latency, extraction)
  fault   make DynamoDB, SQS or Bedrock stall, throttle, fail or slow down

Run a command with -h for its flags.
`, "\n"))
}

// paramFlag collects repeated -param Name=Value flags.
type paramFlag map[string]string

func (p paramFlag) String() string { return fmt.Sprint(map[string]string(p)) }

func (p paramFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want Name=Value, not %q", v)
	}
	p[k] = val
	return nil
}

// cmdFlags is a command's flag set and its usage line, which every command
// writes the same way: "usage: go run ./localtest NAME SYNOPSIS".
type cmdFlags struct {
	*flag.FlagSet
	synopsis string
	// more, when not empty, follows the flags in the help.
	more string
}

// newFlags returns the flag set of the command name, whose arguments
// synopsis shows.
func newFlags(name, synopsis string) *cmdFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Parse errors come back as one error, printed once by main.
	fs.SetOutput(io.Discard)
	return &cmdFlags{FlagSet: fs, synopsis: synopsis}
}

// stateDir defines the -state flag of a command that talks to a running
// stack: the folder whose state file (stack.ReadInfo) says where it is.
func (f *cmdFlags) stateDir() *string {
	return f.String("state", stack.DefaultStateDir(), "state folder of the running stack")
}

// usage returns the command's usage line.
func (f *cmdFlags) usage() string {
	return "usage: go run ./localtest " + f.Name() + " " + f.synopsis
}

// parse parses args. -h prints the usage line and the flags to standard
// error and returns flag.ErrHelp; a wrong flag, or an argument that is not
// a flag when positional is false, comes back as one error with the usage
// line.
func (f *cmdFlags) parse(args []string, positional bool) error {
	err := f.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, f.usage())
		f.SetOutput(os.Stderr)
		f.PrintDefaults()
		fmt.Fprint(os.Stderr, f.more)
		return err
	}
	if err != nil {
		return f.errorf("%v", err)
	}
	if !positional && f.NArg() > 0 {
		return f.errorf("unexpected argument %q: this command takes flags only", f.Arg(0))
	}
	return nil
}

// errorf returns an error of the command, followed by its usage line.
func (f *cmdFlags) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s\n%s (-h lists the flags)", f.Name(), fmt.Sprintf(format, args...), f.usage())
}
