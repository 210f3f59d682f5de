package setup_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/functions/setup"
)

// lambdaEnv sets the environment Lambda gives a function (region and the
// role's temporary credentials) for the test, plus extra name/value pairs,
// and clears the other variables AWSConfig reads.
func lambdaEnv(t *testing.T, extra ...string) {
	t.Helper()
	env := map[string]string{
		"AWS_REGION":                          "eu-west-1",
		"AWS_ACCESS_KEY_ID":                   "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY":               "secret",
		"AWS_SESSION_TOKEN":                   "token",
		"AWS_DEFAULT_REGION":                  "",
		"AWS_MAX_ATTEMPTS":                    "",
		"AWS_RETRY_MODE":                      "",
		"AWS_SDK_UA_APP_ID":                   "",
		"AWS_ENDPOINT_URL":                    "",
		"AWS_ENDPOINT_URL_DYNAMODB":           "",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME":    "",
		"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// TestAWSConfigNeedsARegion checks that a missing region stops the start
// with an error naming AWS_REGION.
func TestAWSConfigNeedsARegion(t *testing.T) {
	lambdaEnv(t, "AWS_REGION", "")
	if cfg, err := setup.AWSConfig(); err == nil || !strings.Contains(err.Error(), "AWS_REGION ") {
		t.Errorf("AWSConfig = region %q, error %v; want an error naming AWS_REGION", cfg.Region, err)
	}
}

// TestAWSConfigRefusals checks that a start without credentials, or with
// a malformed setting, stops with an error naming the variable.
func TestAWSConfigRefusals(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"AWS_ACCESS_KEY_ID", "", "AWS_ACCESS_KEY_ID"},
		{"AWS_SECRET_ACCESS_KEY", "", "AWS_SECRET_ACCESS_KEY"},
		{"AWS_MAX_ATTEMPTS", "three", "AWS_MAX_ATTEMPTS"},
		{"AWS_MAX_ATTEMPTS", "0", "AWS_MAX_ATTEMPTS"},
		{"AWS_RETRY_MODE", "eager", "AWS_RETRY_MODE"},
		{"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "yes", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			lambdaEnv(t, c.name, c.value)
			if _, err := setup.AWSConfig(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("AWSConfig error = %v, want one naming %s", err, c.want)
			}
		})
	}
}

// TestAWSConfigDefaultRegion checks that AWS_DEFAULT_REGION stands in for
// a missing AWS_REGION, as in the SDK's loader.
func TestAWSConfigDefaultRegion(t *testing.T) {
	lambdaEnv(t, "AWS_REGION", "", "AWS_DEFAULT_REGION", "ap-south-1")
	cfg, err := setup.AWSConfig()
	if err != nil || cfg.Region != "ap-south-1" {
		t.Errorf("AWSConfig = region %q, error %v; want ap-south-1", cfg.Region, err)
	}
}

// TestEndpointOverrides checks which endpoint the clients main builds
// take: the service's own variable over AWS_ENDPOINT_URL, the global one
// alone, and none when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true.
func TestEndpointOverrides(t *testing.T) {
	for _, c := range []struct {
		name              string
		env               []string
		dynamoDB, bedrock string // "" for the service's own endpoint
	}{
		{"per service", []string{"AWS_ENDPOINT_URL", "http://all:1", "AWS_ENDPOINT_URL_DYNAMODB", "http://db:2",
			"AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://model:3"}, "http://db:2", "http://model:3"},
		{"global", []string{"AWS_ENDPOINT_URL", "http://all:1"}, "http://all:1", "http://all:1"},
		{"one service", []string{"AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://model:3"}, "", "http://model:3"},
		{"ignored", []string{"AWS_ENDPOINT_URL", "http://all:1", "AWS_ENDPOINT_URL_DYNAMODB", "http://db:2",
			"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "True"}, "", ""},
		{"none", nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			lambdaEnv(t, c.env...)
			cfg, err := setup.AWSConfig()
			if err != nil {
				t.Fatal(err)
			}
			db := aws.ToString(dynamodb.NewFromConfig(cfg).Options().BaseEndpoint)
			model := aws.ToString(bedrockruntime.NewFromConfig(cfg).Options().BaseEndpoint)
			if db != c.dynamoDB || model != c.bedrock {
				t.Errorf("endpoints: DynamoDB %q, Bedrock Runtime %q; want %q, %q", db, model, c.dynamoDB, c.bedrock)
			}
		})
	}
}

// TestAWSConfigSettings checks that the variables Lambda sets, and the
// retry settings, reach the configuration.
func TestAWSConfigSettings(t *testing.T) {
	lambdaEnv(t, "AWS_MAX_ATTEMPTS", "5", "AWS_RETRY_MODE", "adaptive")
	cfg, err := setup.AWSConfig()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "eu-west-1" || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SessionToken != "token" ||
		cfg.RetryMaxAttempts != 5 || cfg.RetryMode != "adaptive" {
		t.Errorf("got region %q, key %q, token %q, %d attempts, mode %q; want eu-west-1, AKIDEXAMPLE, token, 5, adaptive",
			cfg.Region, creds.AccessKeyID, creds.SessionToken, cfg.RetryMaxAttempts, cfg.RetryMode)
	}
}

// TestClientFromConfig sends a request with a DynamoDB client built as
// main builds it and checks that it reaches the service-specific endpoint
// (AWS_ENDPOINT_URL_DYNAMODB wins over AWS_ENDPOINT_URL, as the local
// stack relies on) signed with the region, the access key and the session
// token, with the app ID in the User-Agent.
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
	lambdaEnv(t, "AWS_ENDPOINT_URL", "http://127.0.0.1:1", "AWS_ENDPOINT_URL_DYNAMODB", srv.URL,
		"AWS_SDK_UA_APP_ID", "usermemory-test")
	cfg, err := setup.AWSConfig()
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg)
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
