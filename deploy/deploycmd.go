package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// loadAWS loads the default AWS configuration in region ("" for the
// configuration's own).
func loadAWS(ctx context.Context, region string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load the AWS configuration: %w", err)
	}
	return cfg, nil
}

// newPreflight builds the preflight's clients from cfg.
func newPreflight(cfg aws.Config, root string, s samSettings, callModel bool) *preflight {
	p := &preflight{
		sts: sts.NewFromConfig(cfg), lambda: lambda.NewFromConfig(cfg), bedrock: bedrock.NewFromConfig(cfg),
		stacks: cloudformation.NewFromConfig(cfg), domains: cip.NewFromConfig(cfg),
		runner: execRunner{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr},
		http:   &http.Client{Timeout: 20 * time.Second},
		in:     os.Stdin, out: os.Stdout, root: root, region: cfg.Region, setting: s,
	}
	if callModel {
		p.model = bedrockruntime.NewFromConfig(cfg)
	}
	return p
}

func preflightCmd(ctx context.Context, args []string) error {
	c := newFlags("preflight")
	call := c.fs.Bool("call-model", false, "also call the cheap model once, with one token of answer, after asking")
	s, cfg, err := c.start(ctx, args)
	if err != nil {
		return err
	}
	return report(os.Stdout, newPreflight(cfg, *c.root, s, *call).run(ctx))
}

// deployCmd runs the preflight (a blocking check stops it; warnings are
// printed and the deploy goes on), sam build and sam deploy, prints what
// the stack's outputs say to do next, then runs the check (runCheck).
func deployCmd(ctx context.Context, args []string) error {
	c := newFlags("deploy")
	s, cfg, err := c.start(ctx, args)
	if err != nil {
		return err
	}
	p := newPreflight(cfg, *c.root, s, false)
	results := p.run(ctx)
	if err := report(os.Stdout, results); err != nil {
		return err
	}
	s.Region = cfg.Region
	if err := samDeploy(ctx, p.runner, *c.root, s); err != nil {
		return err
	}
	outputs, err := stackOutputs(ctx, cfg, s.StackName)
	if err != nil {
		return err
	}
	printNext(os.Stdout, s.StackName, cfg.Region, outputs)
	if err := runCheck(ctx, os.Stdout, cfg, outputs, defaultCheckWait); err != nil {
		return fmt.Errorf("the stack is deployed, but %w: `go run ./deploy check` runs the check again", err)
	}
	return nil
}

// printNext prints the stack's URLs and how to add its first user.
func printNext(w io.Writer, stack, region string, out map[string]string) {
	fmt.Fprintf(w, "\nStack %s in %s is deployed.\n\n", stack, region)
	fmt.Fprintf(w, "  API:   %s\n", out["ApiUrl"])
	if out["PageUrl"] != "" {
		fmt.Fprintf(w, "  Page:  %s\n", out["PageUrl"])
	}
	fmt.Fprintf(w, "  Queue: %s (the gateway sends chat turns here)\n\n", out["QueueUrl"])
	if out["UserPoolId"] == "" {
		fmt.Fprintf(w, "Tokens come from your issuer (JwtIssuer): give a user a token carrying the tenant claim and the memory scopes (docs/api.md).\n")
		return
	}
	fmt.Fprintf(w, "Add the first user (an e-mail with a temporary password goes to the address):\n\n")
	fmt.Fprintf(w, "  go run ./deploy user -stack %s --tenant YOUR_TENANT --email you@your.domain --admin\n\n", stack)
	fmt.Fprintf(w, "then sign in at the page. docs/deploy.md goes on from there.\n")
}
