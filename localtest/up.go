package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

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
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	state := fs.String("state", stack.DefaultStateDir(), "folder for binaries, logs, the signing key and the state file")
	params := paramFlag{}
	fs.Var(params, "param", "override a template parameter, Name=Value (repeatable)")
	maxEnv := fs.Int("max-environments", 0, "execution environments per function (0: 4, or the SQS event source's maximum concurrency)")
	visibility := fs.Duration("visibility-timeout", 0, "replace the queues' visibility timeout (0: the template's)")
	apiPort := fs.Int("api-port", DefaultAPIPort, "port of the HTTP API on 127.0.0.1 (0: a free port)")
	pagePort := fs.Int("page-port", DefaultPagePort, "port of the memory page on 127.0.0.1 (0: a free port)")
	if err := fs.Parse(args); err != nil {
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
	if pe := (*stack.PortError)(nil); errors.As(err, &pe) {
		flagName := map[string]string{"api": "-api-port", "page": "-page-port"}[pe.Part]
		return fmt.Errorf("port %d of the %s is taken: stop what listens there (another `up`?), or choose another port with %s N (%s 0 picks a free one)",
			pe.Port, map[string]string{"api": "HTTP API", "page": "memory page"}[pe.Part], flagName, flagName)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	defer s.RemoveInfo()
	path, err := s.WriteInfo()
	if err != nil {
		return err
	}
	i := s.Info
	fmt.Printf(`usermemory local stack ready in %.1fs
  API (HTTP API emulator)   %s
  memory page               %s   (open %s/#token=$TOKEN)
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

Ctrl-C stops everything.
`, time.Since(start).Seconds(), i.APIURL, i.PageURL, i.PageURL, i.AWSEndpoint, i.Region, i.TableName, i.QueueURL, i.DLQURL,
		i.BedrockURL, i.LambdaURL, i.FaultURL, stateFlag, i.JWKSURL, i.Issuer, i.Audience, i.LogDir, path, stateFlag, stateFlag, i.APIURL, i.APIURL, i.PageURL)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "\nstopping…")
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
