// Command deploy takes usermemory to an AWS account and gives it its first
// user, from the repository's root:
//
//	go run ./deploy preflight   # checks the account and Region, one line a check
//	go run ./deploy             # preflight, sam build, sam deploy, the URLs, then the check
//	go run ./deploy check       # the page answers, a pool token reads the facts, a chat turn lands a fact
//	go run ./deploy user --tenant acme --email ana@example.org [--admin]
//	go run ./deploy token --tenant acme --user bb-1 [--admin]   # for scripts and the black-box suite
//	go run ./deploy send --email ana@example.org --text "I live in Lisbon."
//	go run ./deploy teardown    # prints what deleting the stack leaves and how to delete it
//
// Every subcommand reads samconfig.toml (the stack name, the Region, the
// parameter overrides) and template.yaml where it needs them, and takes
// -region, -stack and -parameter-overrides to change them. docs/deploy.md
// walks through it from zero to the first learned fact.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func main() {
	cmd, args := "deploy", os.Args[1:]
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	run, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(os.Stderr, "deploy: unknown command %q\n%s", cmd, usage)
		os.Exit(2)
	}
	switch err := run(context.Background(), args); {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "deploy:", err)
		os.Exit(1)
	}
}

const usage = `usage: go run ./deploy [COMMAND] [flags]   (from the repository's root)

commands:
  deploy     (the default) preflight, sam build, sam deploy, the API and page URLs, then check
  preflight  check the account and Region; exits 1 when anything blocks
  check      check a deployed stack as its first users would: the page answers, a token of the
             pool reads the facts, one chat turn becomes a fact; then erase them; exits 1 on a failure
  user       create a user of a tenant in the stack's user pool; prints the sign-in link
  token      print an access token of a test user, for scripts and USERMEMORY_TOKEN_CMD
  send       send one chat turn of a pool user to the stack's queue, as a gateway does
  teardown   print the resources deleting the stack keeps, and the commands that delete them
`

var commands = map[string]func(context.Context, []string) error{
	"deploy":    deployCmd,
	"preflight": preflightCmd,
	"check":     checkCmd,
	"user":      userCmd,
	"token":     tokenCmd,
	"send":      sendCmd,
	"teardown":  teardownCmd,
	"help": func(context.Context, []string) error {
		fmt.Print(usage)
		return nil
	},
}

// common are the flags every subcommand takes: where the repository is
// and which stack, Region and parameters it deploys.
type common struct {
	fs        *flag.FlagSet
	root      *string
	region    *string
	stack     *string
	overrides *string
}

// newFlags returns the flag set of subcommand name with the common flags.
func newFlags(name string) *common {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &common{
		fs:        fs,
		root:      fs.String("root", ".", "the repository's root: template.yaml and samconfig.toml"),
		region:    fs.String("region", "", "the AWS Region (default: samconfig.toml's, then the AWS configuration's)"),
		stack:     fs.String("stack", "", "the stack name (default: samconfig.toml's)"),
		overrides: fs.String("parameter-overrides", "", "parameters on top of samconfig.toml's, as sam takes them: \"AlarmEmail=a@b.c ReadReservedConcurrency=0\""),
	}
}

// parse parses args; -h prints the flags.
func (c *common) parse(args []string) error {
	err := c.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.fs.SetOutput(os.Stderr)
		fmt.Fprintf(os.Stderr, "usage: go run ./deploy %s [flags]\n", c.fs.Name())
		c.fs.PrintDefaults()
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.fs.Name(), err)
	}
	if c.fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q: this command takes flags only", c.fs.Name(), c.fs.Arg(0))
	}
	return nil
}

// start parses args and reads the settings and the AWS configuration of
// their Region: the first steps of every subcommand that calls AWS.
func (c *common) start(ctx context.Context, args []string) (samSettings, aws.Config, error) {
	if err := c.parse(args); err != nil {
		return samSettings{}, aws.Config{}, err
	}
	s, err := c.settings()
	if err != nil {
		return samSettings{}, aws.Config{}, err
	}
	cfg, err := loadAWS(ctx, s.Region)
	return s, cfg, err
}

// settings reads samconfig.toml under the flags: the stack, the Region
// ("" leaves it to the AWS configuration) and the parameters.
func (c *common) settings() (samSettings, error) {
	s, err := readSamconfig(*c.root)
	if err != nil {
		return samSettings{}, err
	}
	if *c.stack != "" {
		s.StackName = *c.stack
	}
	if *c.region != "" {
		s.Region = *c.region
	}
	extra, err := parseOverrides(*c.overrides)
	if err != nil {
		return samSettings{}, fmt.Errorf("-parameter-overrides: %w", err)
	}
	for k, v := range extra {
		s.Parameters[k] = v
	}
	if s.StackName == "" {
		return samSettings{}, errors.New("no stack name: set stack_name in samconfig.toml or pass -stack")
	}
	return s, nil
}
