package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/usermemory/usermemory/localtest/lambdapool"
	"github.com/usermemory/usermemory/localtest/stack"
)

// Default ports of up. The API listens where `sam local start-api` does,
// so that a frontend set up for SAM's local API works unchanged; the page
// listens next to it. Both stay the same from one day to the next, so that
// the README's commands and a bookmarked page keep working.
const (
	DefaultAPIPort  = 3000
	DefaultPagePort = 3001
)

func up(ctx context.Context, args []string) error {
	fs := newFlags("up", "[-state DIR] [-api-port 3000] [-page-port 3001] [-param Name=Value]...")
	state := fs.String("state", stack.DefaultStateDir(), "folder for binaries, logs, the signing key and the state file")
	params := paramFlag{}
	fs.Var(params, "param", "override a template parameter, Name=Value (repeatable)")
	maxEnv := fs.Int("max-environments", 0, fmt.Sprintf("execution environments per function (0: %d, or the SQS event source's maximum concurrency)", lambdapool.DefaultMax))
	visibility := fs.Duration("visibility-timeout", 0, "replace the queues' visibility timeout (0: the template's)")
	apiPort := fs.Int("api-port", DefaultAPIPort, "port of the HTTP API on 127.0.0.1 (0: a free port)")
	pagePort := fs.Int("page-port", DefaultPagePort, "port of the memory page on 127.0.0.1 (0: a free port)")
	if err := fs.parse(args, false); err != nil {
		return err
	}
	// The hints repeat -state when it was given, so that they talk to
	// this stack.
	stateFlag := ""
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "state" {
			stateFlag = " -state " + shellQuote(*state)
		}
	})
	if running, err := stack.ReadInfo(*state); err == nil {
		return fmt.Errorf("a stack already runs with state folder %s (process %d, API %s): stop it, or pass another -state", *state, running.PID, running.APIURL)
	}
	start := time.Now()
	fmt.Fprintln(os.Stderr, "starting the local stack from template.yaml…")
	s, err := stack.Start(ctx, stack.Options{StateDir: *state, Parameters: params, MaxEnvironments: *maxEnv,
		VisibilityTimeout: *visibility, APIPort: *apiPort, PagePort: *pagePort, Progress: os.Stderr})
	if taken := stack.TakenPorts(err); len(taken) > 0 {
		return portsTaken(taken)
	}
	if err != nil {
		return err
	}
	path, err := s.WriteInfo()
	if err != nil {
		s.Close()
		return err
	}
	i := s.Info
	fmt.Printf(`usermemory local stack ready in %.1fs
  API (HTTP API emulator)   %s
  memory page               %s   (open %s/#token=$TOKEN)
  memory page, signing in   %s   (as deployed: any user name, no password)
  AWS endpoint (moto)       %s   region %s
  table                     %s
  queue                     %s
  dead-letter queue         %s
  Bedrock stand-in          %s
  Lambda Invoke API         %s
  faults (control API)      %s   (go run ./localtest fault%s dynamodb stall 10s)
  JWKS                      %s
  issuer / audience         %s / %s
  logs                      %s
  state file                %s

Try it (in another terminal):
  go run ./localtest chat%s --tenant acme --user ana
  TOKEN=$(go run ./localtest token%s --tenant acme --user ana)
  curl -s -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"value":"Lisbon"}' %s/v1/me/facts/home_city
  curl -s -H "Authorization: Bearer $TOKEN" %s/v1/me/facts
  xdg-open "%s/#token=$TOKEN"

Ctrl-C stops everything; the table's items are kept in %s for the next up with this state folder (queued messages are not).
`, time.Since(start).Seconds(), i.APIURL, i.PageURL, i.PageURL, i.AppURL, i.AWSEndpoint, i.Region, i.TableName, i.QueueURL, i.DLQURL,
		i.BedrockURL, i.LambdaURL, i.FaultURL, stateFlag, i.JWKSURL, i.Issuer, i.Audience, i.LogDir, path, stateFlag, stateFlag, i.APIURL, i.APIURL, i.PageURL,
		filepath.Join(i.StateDir, stack.TableFile))
	<-ctx.Done()
	return stop(s)
}

// stop saves the table's items into the state folder, stops every process
// of the stack and says what it kept.
func stop(s *stack.Stack) error {
	fmt.Fprintln(os.Stderr, "\nstopping…")
	defer s.RemoveInfo()
	// Ctrl-C ended up's context: the save gets one of its own.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, path, err := s.SaveTable(ctx)
	s.Close()
	if err != nil {
		return fmt.Errorf("stopped, but the table's items were not saved: %w", err)
	}
	fmt.Fprintf(os.Stderr, "stopped; kept the table's %d items in %s (queued messages are not kept)\n", n, path)
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// portsTaken says, in one message, every port that is taken and the flag
// that changes it.
func portsTaken(taken []*stack.PortError) error {
	var parts, flags []string
	for _, pe := range taken {
		name := map[string]string{"api": "-api-port", "page": "-page-port"}[pe.Part]
		parts = append(parts, fmt.Sprintf("port %d of the %s (%s)", pe.Port, pe.PartName(), name))
		flags = append(flags, name+" N")
	}
	return fmt.Errorf("%s %s taken: stop what listens there (another `up`?), or choose other ports with %s (0 picks a free one)",
		strings.Join(parts, " and "), map[bool]string{false: "is", true: "are"}[len(taken) > 1], strings.Join(flags, " and "))
}
