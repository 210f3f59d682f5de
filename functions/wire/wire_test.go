package wire_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/functions/wire"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/memory"
)

// getFacts is a fact API function that lists the caller's facts.
func getFacts(store *memory.Store, auth httpapi.RequestConfig, log *slog.Logger) (*httpapi.Handler, error) {
	return httpapi.New(auth, log, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		m, err := store.GetFactsAndPending(ctx, r.Scope)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, httpapi.NewFactsBody(store, m), nil
	}, "GET /v1/me/facts")
}

// setenv sets the variables Lambda and template.yaml give a function.
func setenv(t *testing.T, kv ...string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

// TestFactAPIRefusesABadSetting checks that a wrong setting stops the
// start with an error naming the variable, before any client is used.
func TestFactAPIRefusesABadSetting(t *testing.T) {
	setenv(t, "TABLE_NAME", "facts", "MAX_FACTS", "many")
	if _, err := wire.FactAPI(context.Background(), os.Getenv, getFacts, nil); err == nil || !strings.Contains(err.Error(), "MAX_FACTS") {
		t.Errorf("FactAPI error = %v, want one naming MAX_FACTS", err)
	}
	setenv(t, "TABLE_NAME", "")
	if _, err := wire.FactAPI(context.Background(), os.Getenv, getFacts, nil); err == nil || !strings.Contains(err.Error(), "TABLE_NAME") {
		t.Errorf("FactAPI error = %v, want one naming TABLE_NAME", err)
	}
}

// TestFactAPIOnDynamoDB builds a function as its main does, from the
// environment, and reads facts stored on moto_server through it: the
// endpoint override, the table name and the caps reach the store.
func TestFactAPIOnDynamoDB(t *testing.T) {
	client := httpapitest.DynamoClient(t)
	table := "wire-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := dynamorepo.CreateTable(context.Background(), client, table); err != nil {
		t.Fatal(err)
	}
	httpapitest.Seed(t, dynamorepo.New(client, table), httpapitest.Ana, "language", "Portuguese")
	setenv(t, "TABLE_NAME", table, "AWS_ENDPOINT_URL_DYNAMODB", motoserver.Endpoint(t), "MAX_FACTS", "7")
	h, err := wire.FactAPI(context.Background(), os.Getenv, getFacts, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := httpapitest.Invoke(t, h.Handle, httpapitest.ReadEvent(t, "getfacts-me.json"))
	want := `{"facts":[{"key":"language","value":"Portuguese","updatedAt":"2026-11-29T22:00:00Z","origin":"manual"}],"pending":[],"limits":{"maxFacts":7,"maxFactChars":200}}`
	if resp.StatusCode != http.StatusOK || resp.Body != want {
		t.Errorf("got %d %s, want 200 %s", resp.StatusCode, resp.Body, want)
	}
}

// TestFunctionsLeaveOutTheConfigLoader holds the choice setup.AWSConfig
// explains: no function links the package of config.LoadDefaultConfig,
// whose credential chain (SSO, STS and sign-in clients) is initialised at
// every start and takes the cold start past 1.15 times hello-world's (see
// "Fact API functions" in BENCHMARKS.md).
func TestFunctionsLeaveOutTheConfigLoader(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot list the functions' packages")
	}
	const mod = "github.com/usermemory/usermemory/functions/"
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}"}
	for _, f := range []string{"getfacts", "putfact", "deletefact", "clearfacts", "eraseuser", "extractor"} {
		args = append(args, mod+f)
	}
	out, err := exec.Command(goTool, args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/aws/aws-sdk-go-v2/config" || strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/service/sso") ||
			pkg == "github.com/aws/aws-sdk-go-v2/service/sts" {
			t.Errorf("a function links %s", pkg)
		}
	}
}

// TestDynamoDBAttemptTimeout points the client at a DynamoDB that never
// answers: each attempt ends at the attempt timeout and is retried, so the
// call fails with a timeout after the 4 attempts the SDK makes for DynamoDB, long
// before the caller's deadline.
func TestDynamoDBAttemptTimeout(t *testing.T) {
	var attempts atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	setenv(t, "AWS_ENDPOINT_URL_DYNAMODB", srv.URL)
	cfg, err := setup.AWSConfig()
	if err != nil {
		t.Fatal(err)
	}
	db := wire.DynamoDB(cfg, 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("facts")})
	var timeout interface{ Timeout() bool }
	if err == nil || !errors.As(err, &timeout) || !timeout.Timeout() || ctx.Err() != nil {
		t.Fatalf("got error %v (caller's context: %v), want an attempt timeout", err, ctx.Err())
	}
	if n := attempts.Load(); n != 4 {
		t.Errorf("%d attempts, want the 4 of DynamoDB's standard retryer", n)
	}
}
