package setup

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// AWSConfig loads the SDK configuration with config.LoadDefaultConfig, as
// every AWS SDK does: the region (AWS_REGION), the credentials (in Lambda,
// the function role's, from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN), the retry settings (AWS_MAX_ATTEMPTS,
// AWS_RETRY_MODE) and the endpoint overrides: AWS_ENDPOINT_URL and, per
// service, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS and
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME, which the local stack sets and
// clients built with NewFromConfig follow (unless
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true).
//
// It returns the loader's error, and an error naming AWS_REGION when no
// region is set: a function without one could not sign a request.
// Credentials are resolved at the first request, not here.
func AWSConfig(ctx context.Context) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("setup: the AWS SDK configuration: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("setup: AWS_REGION is required (Lambda sets it)")
	}
	return cfg, nil
}
