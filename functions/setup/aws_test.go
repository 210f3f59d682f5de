package setup_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/functions/setup"
)

// lambdaEnv is the environment Lambda gives a function: region and the
// role's temporary credentials.
func lambdaEnv(extra ...string) func(string) string {
	env := map[string]string{
		"AWS_REGION":            "eu-west-1",
		"AWS_ACCESS_KEY_ID":     "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN":     "token",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return func(k string) string { return env[k] }
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestAWSConfig(t *testing.T) {
	tests := []struct {
		name        string
		getenv      func(string) string
		region      string
		creds       aws.Credentials
		endpoint    string
		maxAttempts int
		retryMode   aws.RetryMode
		appID       string
	}{
		{
			name:     "lambda environment",
			getenv:   lambdaEnv(),
			region:   "eu-west-1",
			creds:    aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", SessionToken: "token"},
			endpoint: "<nil>",
		},
		{
			name:     "AWS_DEFAULT_REGION when AWS_REGION is unset",
			getenv:   lambdaEnv("AWS_REGION", "", "AWS_DEFAULT_REGION", "us-west-2"),
			region:   "us-west-2",
			creds:    aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", SessionToken: "token"},
			endpoint: "<nil>",
		},
		{
			name:     "AWS_REGION wins over AWS_DEFAULT_REGION",
			getenv:   lambdaEnv("AWS_DEFAULT_REGION", "us-west-2"),
			region:   "eu-west-1",
			creds:    aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", SessionToken: "token"},
			endpoint: "<nil>",
		},
		{
			name:     "no session token, account ID",
			getenv:   lambdaEnv("AWS_SESSION_TOKEN", "", "AWS_ACCOUNT_ID", "123456789012"),
			region:   "eu-west-1",
			creds:    aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", AccountID: "123456789012"},
			endpoint: "<nil>",
		},
		{
			name: "local stack",
			getenv: lambdaEnv("AWS_REGION", "us-east-1", "AWS_ACCESS_KEY_ID", "test", "AWS_SECRET_ACCESS_KEY", "test",
				"AWS_SESSION_TOKEN", "", "AWS_ENDPOINT_URL", "http://127.0.0.1:5000"),
			region:   "us-east-1",
			creds:    aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"},
			endpoint: "http://127.0.0.1:5000",
		},
		{
			name:     "endpoints ignored",
			getenv:   lambdaEnv("AWS_ENDPOINT_URL", "http://127.0.0.1:5000", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "TRUE"),
			region:   "eu-west-1",
			creds:    aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", SessionToken: "token"},
			endpoint: "<nil>",
		},
		{
			name:        "retry and app ID",
			getenv:      lambdaEnv("AWS_MAX_ATTEMPTS", " 5 ", "AWS_RETRY_MODE", "adaptive", "AWS_SDK_UA_APP_ID", "usermemory"),
			region:      "eu-west-1",
			creds:       aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", SessionToken: "token"},
			endpoint:    "<nil>",
			maxAttempts: 5,
			retryMode:   aws.RetryModeAdaptive,
			appID:       "usermemory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := setup.AWSConfig(tt.getenv)
			if err != nil {
				t.Fatalf("AWSConfig: %v", err)
			}
			if cfg.Region != tt.region {
				t.Errorf("Region = %q, want %q", cfg.Region, tt.region)
			}
			if _, ok := cfg.Credentials.(*aws.CredentialsCache); !ok {
				t.Errorf("Credentials is a %T, want an *aws.CredentialsCache", cfg.Credentials)
			}
			got, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil {
				t.Fatalf("Retrieve: %v", err)
			}
			if got.AccessKeyID != tt.creds.AccessKeyID || got.SecretAccessKey != tt.creds.SecretAccessKey ||
				got.SessionToken != tt.creds.SessionToken || got.AccountID != tt.creds.AccountID {
				t.Errorf("credentials = %+v, want %+v", got, tt.creds)
			}
			if got.CanExpire {
				t.Error("static credentials can expire")
			}
			if g := deref(cfg.BaseEndpoint); g != tt.endpoint {
				t.Errorf("BaseEndpoint = %s, want %s", g, tt.endpoint)
			}
			if cfg.RetryMaxAttempts != tt.maxAttempts || cfg.RetryMode != tt.retryMode {
				t.Errorf("RetryMaxAttempts, RetryMode = %d, %q, want %d, %q", cfg.RetryMaxAttempts, cfg.RetryMode, tt.maxAttempts, tt.retryMode)
			}
			if cfg.Retryer != nil || cfg.HTTPClient != nil {
				t.Error("Retryer or HTTPClient set: the clients should build the SDK's defaults")
			}
			if cfg.AppID != tt.appID {
				t.Errorf("AppID = %q, want %q", cfg.AppID, tt.appID)
			}
			if cfg.Logger == nil {
				t.Error("no Logger")
			}
		})
	}
}

func TestAWSConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		getenv func(string) string
		want   string // the variable the error must name
	}{
		{"empty environment", func(string) string { return "" }, "AWS_REGION"},
		{"no region", lambdaEnv("AWS_REGION", ""), "AWS_REGION"},
		{"no access key", lambdaEnv("AWS_ACCESS_KEY_ID", ""), "AWS_ACCESS_KEY_ID"},
		{"no secret key", lambdaEnv("AWS_SECRET_ACCESS_KEY", ""), "AWS_SECRET_ACCESS_KEY"},
		{"max attempts not a number", lambdaEnv("AWS_MAX_ATTEMPTS", "three"), "AWS_MAX_ATTEMPTS"},
		{"max attempts zero", lambdaEnv("AWS_MAX_ATTEMPTS", "0"), "AWS_MAX_ATTEMPTS"},
		{"unknown retry mode", lambdaEnv("AWS_RETRY_MODE", "eager"), "AWS_RETRY_MODE"},
		{"ignore flag not a bool", lambdaEnv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "yes"), "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"},
		{"global endpoint without scheme", lambdaEnv("AWS_ENDPOINT_URL", "127.0.0.1:5000"), "AWS_ENDPOINT_URL"},
		{"dynamodb endpoint not http", lambdaEnv("AWS_ENDPOINT_URL_DYNAMODB", "ftp://127.0.0.1"), "AWS_ENDPOINT_URL_DYNAMODB"},
		{"sqs endpoint without host", lambdaEnv("AWS_ENDPOINT_URL_SQS", "http://"), "AWS_ENDPOINT_URL_SQS"},
		{"bedrock endpoint relative", lambdaEnv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "/converse"), "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := setup.AWSConfig(tt.getenv)
			if err == nil {
				t.Fatalf("AWSConfig = region %q, nil error; want an error naming %s", cfg.Region, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want+" ") {
				t.Errorf("error %q does not name %s", err, tt.want)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	const global, dynamo, sqs, bedrock = "http://127.0.0.1:1000", "http://127.0.0.1:2000", "http://127.0.0.1:3000", "http://127.0.0.1:4000"
	all := []string{"AWS_ENDPOINT_URL", global, "AWS_ENDPOINT_URL_DYNAMODB", dynamo,
		"AWS_ENDPOINT_URL_SQS", sqs, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock}
	tests := []struct {
		name    string
		getenv  func(string) string
		service string
		want    string
	}{
		{"nothing set", lambdaEnv(), setup.ServiceDynamoDB, "<nil>"},
		{"global only", lambdaEnv("AWS_ENDPOINT_URL", global), setup.ServiceDynamoDB, global},
		{"global, service asked for none", lambdaEnv(all...), "", global},
		{"dynamodb wins over global", lambdaEnv(all...), setup.ServiceDynamoDB, dynamo},
		{"sqs wins over global", lambdaEnv(all...), setup.ServiceSQS, sqs},
		{"bedrock runtime wins over global", lambdaEnv(all...), setup.ServiceBedrockRuntime, bedrock},
		{"service-specific without global", lambdaEnv("AWS_ENDPOINT_URL_SQS", sqs), setup.ServiceSQS, sqs},
		{"another service's override is not used", lambdaEnv("AWS_ENDPOINT_URL_SQS", sqs), setup.ServiceDynamoDB, "<nil>"},
		{"ignored", lambdaEnv(append(all, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")...), setup.ServiceDynamoDB, "<nil>"},
		{"ignore flag false", lambdaEnv(append(all, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "false")...), setup.ServiceDynamoDB, dynamo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := deref(setup.Endpoint(tt.getenv, tt.service)); got != tt.want {
				t.Errorf("Endpoint(%q) = %s, want %s", tt.service, got, tt.want)
			}
		})
	}
}

// TestClientFromConfig sends a request with a DynamoDB client built as
// main builds it and checks what reaches the service-specific endpoint:
// the region and access key in the signature, the session token, the app
// ID in the User-Agent.
func TestClientFromConfig(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Clone(context.Background()))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	getenv := lambdaEnv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", "AWS_ENDPOINT_URL_DYNAMODB", srv.URL,
		"AWS_SDK_UA_APP_ID", "usermemory-test")
	cfg, err := setup.AWSConfig(getenv)
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = setup.Endpoint(getenv, setup.ServiceDynamoDB)
	})
	if _, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("the endpoint got %d requests, want 1", len(got))
	}
	r := got[0]
	if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "Credential=AKIDEXAMPLE/") || !strings.Contains(auth, "/eu-west-1/dynamodb/aws4_request") {
		t.Errorf("Authorization = %q, want the access key and the region eu-west-1", auth)
	}
	if tok := r.Header.Get("X-Amz-Security-Token"); tok != "token" {
		t.Errorf("X-Amz-Security-Token = %q, want the session token", tok)
	}
	if ua := r.Header.Get("User-Agent"); !strings.Contains(ua, "app/usermemory-test") {
		t.Errorf("User-Agent = %q, want the app ID", ua)
	}
}

// TestNoCredentialChain holds the bootstrap size down: no function links
// the SDK's config loader or the SSO, STS, sign-in and instance metadata
// clients it brings.
func TestNoCredentialChain(t *testing.T) {
	pkgs := []string{"getfacts", "putfact", "deletefact", "clearfacts", "eraseuser", "extractor"}
	args := []string{"list", "-deps", "-tags", "lambda.norpc"}
	for _, p := range pkgs {
		args = append(args, "github.com/usermemory/usermemory/functions/"+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/aws/aws-sdk-go-v2/config",
			"github.com/aws/aws-sdk-go-v2/credentials/",
			"github.com/aws/aws-sdk-go-v2/feature/ec2/imds",
			"github.com/aws/aws-sdk-go-v2/service/sso",
			"github.com/aws/aws-sdk-go-v2/service/ssooidc",
			"github.com/aws/aws-sdk-go-v2/service/sts",
			"github.com/aws/aws-sdk-go-v2/service/signin",
		} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") || (strings.HasSuffix(banned, "/") && strings.HasPrefix(dep, banned)) {
				t.Errorf("a function links %s", dep)
			}
		}
	}
}
