package setup

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"
)

// Names of the AWS environment variables AWSConfig and Endpoint read.
// Lambda sets the region and credentials in every execution environment;
// the local stack sets the same, and the endpoint overrides.
const (
	EnvAWSRegion          = "AWS_REGION"
	EnvAWSDefaultRegion   = "AWS_DEFAULT_REGION"
	EnvAWSAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvAWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvAWSSessionToken    = "AWS_SESSION_TOKEN"
	EnvAWSAccountID       = "AWS_ACCOUNT_ID"
	EnvAWSMaxAttempts     = "AWS_MAX_ATTEMPTS"
	EnvAWSRetryMode       = "AWS_RETRY_MODE"
	EnvAWSAppID           = "AWS_SDK_UA_APP_ID"
	EnvAWSEndpointURL     = "AWS_ENDPOINT_URL"
	EnvAWSIgnoreEndpoints = "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"
)

// Services whose endpoint Endpoint resolves: the suffix of their
// AWS_ENDPOINT_URL_<SERVICE> variable, as the SDK names it (the service ID
// in upper case, spaces turned into underscores).
const (
	ServiceDynamoDB       = "DYNAMODB"
	ServiceSQS            = "SQS"
	ServiceBedrockRuntime = "BEDROCK_RUNTIME"
)

// services are the services whose endpoint variable AWSConfig checks.
var services = []string{ServiceDynamoDB, ServiceSQS, ServiceBedrockRuntime}

// AWSConfig builds the SDK configuration from the environment read through
// getenv (os.Getenv in main), the variables Lambda sets in every execution
// environment: the region (AWS_REGION, else AWS_DEFAULT_REGION) and the
// function role's credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN), held in a credentials cache. It also reads the
// optional AWS_ACCOUNT_ID, AWS_MAX_ATTEMPTS, AWS_RETRY_MODE,
// AWS_SDK_UA_APP_ID and the global endpoint override AWS_ENDPOINT_URL
// (unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true); the
// service-specific overrides come from Endpoint, in the client's options.
//
// Unlike config.LoadDefaultConfig it reads no shared config or credentials
// file and asks no SSO, STS or instance metadata service: that keeps those
// clients out of the bootstrap binaries. Everything else is the SDK's
// default: the clients build their own HTTP client and standard retryer,
// and the logger writes to stderr as LoadDefaultConfig's does.
//
// The error names the variable at fault: a missing region or credentials,
// a value that does not parse, an endpoint that is not an absolute http or
// https URL.
func AWSConfig(getenv func(string) string) (aws.Config, error) {
	cfg := aws.Config{
		Region: or(getenv(EnvAWSRegion), getenv(EnvAWSDefaultRegion)),
		Logger: logging.NewStandardLogger(os.Stderr),
		AppID:  getenv(EnvAWSAppID),
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("setup: %s is required (Lambda sets it)", EnvAWSRegion)
	}
	creds := aws.Credentials{
		AccessKeyID:     getenv(EnvAWSAccessKeyID),
		SecretAccessKey: getenv(EnvAWSSecretAccessKey),
		SessionToken:    getenv(EnvAWSSessionToken),
		AccountID:       getenv(EnvAWSAccountID),
	}
	for _, v := range []struct{ name, value string }{
		{EnvAWSAccessKeyID, creds.AccessKeyID},
		{EnvAWSSecretAccessKey, creds.SecretAccessKey},
	} {
		if v.value == "" {
			return aws.Config{}, fmt.Errorf("setup: %s is required (Lambda sets it from the function's role)", v.name)
		}
	}
	cfg.Credentials = aws.NewCredentialsCache(credentials.StaticCredentialsProvider{
		Value:  creds,
		Source: []aws.CredentialSource{aws.CredentialSourceEnvVars},
	})
	if raw := strings.TrimSpace(getenv(EnvAWSMaxAttempts)); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return aws.Config{}, fmt.Errorf("setup: %s must be a whole number ≥ 1, not %q", EnvAWSMaxAttempts, raw)
		}
		cfg.RetryMaxAttempts = n
	}
	if raw := strings.TrimSpace(getenv(EnvAWSRetryMode)); raw != "" {
		mode, err := aws.ParseRetryMode(raw)
		if err != nil {
			return aws.Config{}, fmt.Errorf("setup: %s must be standard or adaptive, not %q", EnvAWSRetryMode, raw)
		}
		cfg.RetryMode = mode
	}
	if _, err := ignoreEndpoints(getenv); err != nil {
		return aws.Config{}, err
	}
	for _, name := range append([]string{EnvAWSEndpointURL}, serviceVars()...) {
		if raw := getenv(name); raw != "" {
			if err := checkEndpoint(raw); err != nil {
				return aws.Config{}, fmt.Errorf("setup: %s %w", name, err)
			}
		}
	}
	cfg.BaseEndpoint = Endpoint(getenv, "")
	return cfg, nil
}

// Endpoint returns the endpoint override of service (ServiceDynamoDB,
// ServiceSQS, ServiceBedrockRuntime…) read through getenv:
// AWS_ENDPOINT_URL_<service> when set, else AWS_ENDPOINT_URL, else nil (the
// SDK resolves the AWS endpoint of the region). With service "" it returns
// the global override only. It returns nil when
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true, as the SDK does. Main sets
// it as the client's BaseEndpoint:
//
//	dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
//		o.BaseEndpoint = setup.Endpoint(os.Getenv, setup.ServiceDynamoDB)
//	})
//
// AWSConfig has checked the values of the services it knows.
func Endpoint(getenv func(string) string, service string) *string {
	if ignore, _ := ignoreEndpoints(getenv); ignore {
		return nil
	}
	if service != "" {
		if v := getenv(EnvAWSEndpointURL + "_" + service); v != "" {
			return &v
		}
	}
	if v := getenv(EnvAWSEndpointURL); v != "" {
		return &v
	}
	return nil
}

// serviceVars returns the names of the service-specific endpoint variables.
func serviceVars() []string {
	out := make([]string, len(services))
	for i, s := range services {
		out[i] = EnvAWSEndpointURL + "_" + s
	}
	return out
}

// ignoreEndpoints reports whether AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is
// true.
func ignoreEndpoints(getenv func(string) string) (bool, error) {
	switch raw := strings.ToLower(strings.TrimSpace(getenv(EnvAWSIgnoreEndpoints))); raw {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("setup: %s must be true or false, not %q", EnvAWSIgnoreEndpoints, raw)
	}
}

// checkEndpoint returns an error when raw is not an absolute http or https
// URL with a host.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an absolute http or https URL, not %q", raw)
	}
	return nil
}
