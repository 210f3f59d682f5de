package setup_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/functions/setup"
)

// lambdaEnv sets the environment Lambda gives a function (region and the
// role's temporary credentials) for the test, plus extra name/value pairs,
// and keeps the shared config files of the machine out of it.
func lambdaEnv(t *testing.T, extra ...string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{
		"AWS_REGION":                  "eu-west-1",
		"AWS_ACCESS_KEY_ID":           "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY":       "secret",
		"AWS_SESSION_TOKEN":           "token",
		"AWS_CONFIG_FILE":             dir + "/config",
		"AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials",
		"AWS_PROFILE":                 "",
		"AWS_DEFAULT_REGION":          "",
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_DYNAMODB":   "",
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
	if cfg, err := setup.AWSConfig(context.Background()); err == nil || !strings.Contains(err.Error(), "AWS_REGION ") {
		t.Errorf("AWSConfig = region %q, error %v; want an error naming AWS_REGION", cfg.Region, err)
	}
}

// TestAWSConfigSettings checks that the variables Lambda sets, and the
// retry settings, reach the configuration.
func TestAWSConfigSettings(t *testing.T) {
	lambdaEnv(t, "AWS_MAX_ATTEMPTS", "5", "AWS_RETRY_MODE", "adaptive")
	cfg, err := setup.AWSConfig(context.Background())
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
	cfg, err := setup.AWSConfig(context.Background())
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
