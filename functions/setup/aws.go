package setup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"
)

// AWSConfig builds the SDK configuration from the variables Lambda sets in
// every execution environment: the region (AWS_REGION, else
// AWS_DEFAULT_REGION) and the function role's credentials
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN). It also
// honours, as config.LoadDefaultConfig does, AWS_MAX_ATTEMPTS,
// AWS_RETRY_MODE, AWS_SDK_UA_APP_ID and the endpoint overrides the local
// stack sets: AWS_ENDPOINT_URL and, per service, AWS_ENDPOINT_URL_DYNAMODB,
// AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL_BEDROCK_RUNTIME (any
// AWS_ENDPOINT_URL_<service ID>), which clients built with NewFromConfig
// follow unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true.
//
// It does not call config.LoadDefaultConfig: that loader links the
// shared-config reader and the SSO, STS and sign-in clients of its
// credential chain, which a Lambda function never uses, and initialising
// them at every start takes the functions' cold start past 1.15 times a
// hello-world function's (see "Fact API functions" in BENCHMARKS.md). The
// HTTP client and retryer are the SDK's defaults; the functions' DynamoDB
// client bounds each attempt (DynamoDBAttemptTimeout, see wire.DynamoDB).
//
// The error names the variable at fault: a missing region or credentials,
// or a malformed retry or endpoint setting.
func AWSConfig() (aws.Config, error) {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		return aws.Config{}, errors.New("setup: AWS_REGION is required (Lambda sets it)")
	}
	key, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if key == "" || secret == "" {
		return aws.Config{}, errors.New("setup: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are required (Lambda sets them)")
	}
	cfg := aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(key, secret, os.Getenv("AWS_SESSION_TOKEN"))),
		AppID:       os.Getenv("AWS_SDK_UA_APP_ID"),
		Logger:      logging.NewStandardLogger(os.Stderr),
	}
	if raw := os.Getenv("AWS_MAX_ATTEMPTS"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return aws.Config{}, fmt.Errorf("setup: AWS_MAX_ATTEMPTS must be a whole number ≥ 1, not %q", raw)
		}
		cfg.RetryMaxAttempts = n
	}
	if raw := os.Getenv("AWS_RETRY_MODE"); raw != "" {
		mode, err := aws.ParseRetryMode(raw)
		if err != nil {
			return aws.Config{}, fmt.Errorf("setup: AWS_RETRY_MODE must be standard or adaptive, not %q", raw)
		}
		cfg.RetryMode = mode
	}
	var src endpointSource
	if raw := os.Getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"); raw != "" {
		switch {
		case strings.EqualFold(raw, "true"):
			src.ignore = true
		case !strings.EqualFold(raw, "false"):
			return aws.Config{}, fmt.Errorf("setup: AWS_IGNORE_CONFIGURED_ENDPOINT_URLS must be true or false, not %q", raw)
		}
	}
	if u := os.Getenv("AWS_ENDPOINT_URL"); u != "" && !src.ignore {
		cfg.BaseEndpoint = aws.String(u)
	}
	// The clients look up their service's AWS_ENDPOINT_URL_<service ID>
	// through the configuration's sources, by the two methods below.
	cfg.ConfigSources = []any{src}
	return cfg, nil
}

// endpointSource gives the SDK's clients their service-specific endpoint
// override from the environment, as config.LoadDefaultConfig's
// environment source does.
type endpointSource struct {
	ignore bool // AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
}

// GetServiceBaseEndpoint returns AWS_ENDPOINT_URL_<sdkID>, sdkID in upper
// case with spaces turned into underscores ("Bedrock Runtime" →
// BEDROCK_RUNTIME), and whether it is set.
func (endpointSource) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	name := "AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_")
	u := os.Getenv(name)
	return u, u != "", nil
}

// GetIgnoreConfiguredEndpoints returns AWS_IGNORE_CONFIGURED_ENDPOINT_URLS.
func (s endpointSource) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	return s.ignore, true, nil
}
