package awslive

import (
	"context"
	"strings"
	"testing"
)

// TestConfigRefuses: without credentials, or without a region, Config
// refuses at once, naming the flag and what to do.
func TestConfigRefuses(t *testing.T) {
	NoCredentials(t)
	if _, err := Config(context.Background(), "-bedrock", "us-east-1"); err == nil || !strings.HasPrefix(err.Error(), "-bedrock needs AWS credentials") {
		t.Errorf("without credentials: %v, want -bedrock needs AWS credentials…", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	if _, err := Config(context.Background(), "-live", ""); err == nil || !strings.HasPrefix(err.Error(), "-live needs an AWS region") {
		t.Errorf("without a region: %v, want -live needs an AWS region…", err)
	}
	cfg, err := Config(context.Background(), "-live", "eu-west-1")
	if err != nil || cfg.Region != "eu-west-1" {
		t.Errorf("with both: region %q, %v; want eu-west-1 and no error", cfg.Region, err)
	}
}
