package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
)

// minSAM is the oldest SAM CLI that deploys the template. SAM CLI 1.160.0
// expanded AWS::LanguageExtensions locally and broke templates that
// declare it (aws/aws-sam-cli issues 9004, 9005, 9027 and 9029; pull
// request 9033 made the local expansion opt-in). In the aws-sam-cli
// repository (https://github.com/aws/aws-sam-cli, read 2026-12-03) the
// fixes of 9004 (#9010) and 9029 (#9031) and the opt-in (#9033) are in
// the tag v1.161.0, and the fix of 9027 (#9030) first in v1.161.1.
var minSAM = [3]int{1, 161, 1}

// runner runs programs: Output for a short answer, Run for a long step
// whose output goes to the person.
type runner interface {
	Output(ctx context.Context, dir, name string, args ...string) ([]byte, error)
	Run(ctx context.Context, dir, name string, args ...string) error
}

// execRunner runs programs on this machine, with the person's terminal.
type execRunner struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (r execRunner) Output(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	return cmd.Output()
}

func (r execRunner) Run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, r.stdin, r.stdout, r.stderr
	return cmd.Run()
}

var samVersionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// samVersion returns the installed SAM CLI's version, from `sam --version`
// ("SAM CLI, version 1.161.1").
func samVersion(ctx context.Context, r runner, dir string) ([3]int, error) {
	out, err := r.Output(ctx, dir, "sam", "--version")
	if err != nil {
		return [3]int{}, err
	}
	m := samVersionRE.FindStringSubmatch(string(out))
	if m == nil {
		return [3]int{}, fmt.Errorf("`sam --version` printed %q, not a version", out)
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, nil
}

func older(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func version(v [3]int) string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// installSAM is how to get a SAM CLI that deploys the template.
var installSAM = "install SAM CLI " + version(minSAM) + " or later: https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html"

// samCLI checks that the SAM CLI is installed and recent enough.
func (p *preflight) samCLI(ctx context.Context) Result {
	v, err := samVersion(ctx, p.runner, p.root)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return Result{Block, "sam", "the SAM CLI is not installed (no sam on PATH)", installSAM}
	case err != nil:
		return Result{Block, "sam", err.Error(), installSAM}
	case older(v, minSAM):
		return Result{Block, "sam", fmt.Sprintf("SAM CLI %s mishandles AWS::LanguageExtensions (fixed in %s)", version(v), version(minSAM)), installSAM}
	}
	return Result{Pass, "sam", "SAM CLI " + version(v), ""}
}

// samDeploy builds and deploys the stack with the repository's samconfig:
// sam build, then sam deploy with the stack, the Region and the
// parameters (samconfig.toml's, with the command's overrides on top).
func samDeploy(ctx context.Context, r runner, root string, s samSettings) error {
	if err := r.Run(ctx, root, "sam", "build"); err != nil {
		return fmt.Errorf("sam build: %w", err)
	}
	args := []string{"deploy", "--stack-name", s.StackName}
	if s.Region != "" {
		args = append(args, "--region", s.Region)
	}
	if len(s.Parameters) > 0 {
		args = append(args, "--parameter-overrides", overridesArg(s.Parameters))
	}
	if err := r.Run(ctx, root, "sam", args...); err != nil {
		return fmt.Errorf("sam deploy: %w", err)
	}
	return nil
}
