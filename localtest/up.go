package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/usermemory/usermemory/localtest/stack"
)

func up(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	state := fs.String("state", stack.DefaultStateDir(), "folder for binaries, logs, the signing key and the state file")
	params := paramFlag{}
	fs.Var(params, "param", "override a template parameter, Name=Value (repeatable)")
	maxEnv := fs.Int("max-environments", 0, "execution environments per function (0: 4, or the SQS event source's maximum concurrency)")
	visibility := fs.Duration("visibility-timeout", 0, "replace the queues' visibility timeout (0: the template's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if running, err := stack.ReadInfo(*state); err == nil {
		return fmt.Errorf("a stack already runs with state folder %s (process %d, API %s): stop it, or pass another -state", *state, running.PID, running.APIURL)
	}
	start := time.Now()
	fmt.Fprintln(os.Stderr, "starting the local stack from template.yaml…")
	s, err := stack.Start(ctx, stack.Options{StateDir: *state, Parameters: params, MaxEnvironments: *maxEnv, VisibilityTimeout: *visibility})
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
  JWKS                      %s
  issuer / audience         %s / %s
  logs                      %s
  state file                %s

Try it:
  TOKEN=$(go run ./localtest token --tenant acme --user ana)
  curl -s -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"value":"Lisbon"}' %s/v1/me/facts/city
  curl -s -H "Authorization: Bearer $TOKEN" %s/v1/me/facts

Ctrl-C stops everything.
`, time.Since(start).Seconds(), i.APIURL, i.PageURL, i.PageURL, i.AWSEndpoint, i.Region, i.TableName, i.QueueURL, i.DLQURL,
		i.BedrockURL, i.LambdaURL, i.JWKSURL, i.Issuer, i.Audience, i.LogDir, path, i.APIURL, i.APIURL)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "\nstopping…")
	return nil
}
