// Package awslive loads the AWS configuration of a command that calls a
// real AWS service from a person's machine (eval -live, chat --bedrock),
// and refuses at once, saying what to do, when the default credential
// chain finds no credentials or no region, instead of failing at the
// first call.
package awslive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
)

// Config loads the default AWS configuration, with region when it is not
// empty, and checks that it has a region and that its credentials can be
// retrieved. what names the flag that needs them ("-live") in the errors:
// "-live needs AWS credentials…" or "-live needs an AWS region…".
func Config(ctx context.Context, what, region string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("%s: load the AWS configuration: %w", what, err)
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("%s needs an AWS region: set AWS_REGION or pass -region", what)
	}
	noCredentials := fmt.Errorf("%s needs AWS credentials, and the default credential chain found none "+
		"(environment variables, shared config and credentials files, SSO, web identity, container or instance role): "+
		"run `aws configure` or `aws sso login`, or set AWS_PROFILE, then try again", what)
	if cfg.Credentials == nil {
		return aws.Config{}, noCredentials
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	creds, err := cfg.Credentials.Retrieve(cctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("%w: %v", noCredentials, err)
	}
	if !creds.HasKeys() {
		return aws.Config{}, noCredentials
	}
	return cfg, nil
}

// NoCredentials leaves the default credential chain of the rest of test t
// nothing to find: no environment keys, no profile, no shared files, no
// container or instance role, and no region.
func NoCredentials(t testing.TB) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_REGION", "AWS_DEFAULT_REGION"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// StackOutputs returns the outputs of the CloudFormation stack named name,
// by output key (ApiUrl, QueueUrl, DeadLetterQueueUrl, TableName…): how a
// command run against a deployed stack finds its resources.
func StackOutputs(ctx context.Context, cfg aws.Config, name string) (map[string]string, error) {
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("describe stack %s: %w", name, err)
	}
	if len(out.Stacks) != 1 {
		return nil, fmt.Errorf("describe stack %s: %d stacks, want 1", name, len(out.Stacks))
	}
	outputs := make(map[string]string, len(out.Stacks[0].Outputs))
	for _, o := range out.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return outputs, nil
}

// StackParameters returns the parameters of the CloudFormation stack
// named name, by parameter key (MaxFacts, ExtractionEnabled…), each with
// the value the stack runs with (a default included): how a test run
// against a deployed stack knows its settings.
func StackParameters(ctx context.Context, cfg aws.Config, name string) (map[string]string, error) {
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("describe stack %s: %w", name, err)
	}
	if len(out.Stacks) != 1 {
		return nil, fmt.Errorf("describe stack %s: %d stacks, want 1", name, len(out.Stacks))
	}
	params := make(map[string]string, len(out.Stacks[0].Parameters))
	for _, p := range out.Stacks[0].Parameters {
		v := aws.ToString(p.ParameterValue)
		if p.ResolvedValue != nil {
			v = aws.ToString(p.ResolvedValue)
		}
		params[aws.ToString(p.ParameterKey)] = v
	}
	return params, nil
}
