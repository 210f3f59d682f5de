package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/internal/motoserver"
)

// What the tests stand on:
//   - STS GetCallerIdentity and CloudFormation DescribeStacks: moto_server
//     (USERMEMORY_AWS_ENDPOINT), through the real clients;
//   - Bedrock's GetFoundationModel, GetInferenceProfile and Converse: the
//     Bedrock stand-in (internal/fakebedrock), moto 5.2.1 implements none;
//   - Lambda GetAccountSettings: an httptest server answering the wire
//     format the lambda client reads (GET /2016-08-19/account-settings,
//     the body of the SDK's response snapshot), moto 5.2.1 does not
//     implement it;
//   - the issuer: an httptest TLS server with a discovery document and a
//     JWKS; sam: a fake runner.

var static = credentials.NewStaticCredentialsProvider("test", "test", "")

// fakeRunner answers `sam --version` with version (or err) and records
// the other commands.
type fakeRunner struct {
	version string
	err     error
	ran     [][]string
	fail    string // a subcommand (build, deploy) that fails
}

func (r *fakeRunner) Output(_ context.Context, _, name string, args ...string) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	return []byte("SAM CLI, version " + r.version + "\n"), nil
}

func (r *fakeRunner) Run(_ context.Context, _, name string, args ...string) error {
	r.ran = append(r.ran, append([]string{name}, args...))
	if len(args) > 0 && args[0] == r.fail {
		return errors.New("exit status 1")
	}
	return nil
}

// lambdaSettings serves GetAccountSettings with the account's quota and
// unreserved concurrency.
func lambdaSettings(t *testing.T, limit, unreserved int) *lambda.Client {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/2016-08-19/account-settings" {
			http.Error(w, `{"message":"no such route"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"AccountLimit":{"CodeSizeUnzipped":262144000,"CodeSizeZipped":52428800,"ConcurrentExecutions":%d,"TotalCodeSize":80530636800,"UnreservedConcurrentExecutions":%d},"AccountUsage":{"FunctionCount":0,"TotalCodeSize":0}}`, limit, unreserved)
	}))
	t.Cleanup(s.Close)
	return lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.URL), Credentials: static, Retryer: aws.NopRetryer{}})
}

// issuerServer serves a discovery document naming issuer iss (its own
// URL when iss is "") and a JWKS of keys keys.
func issuerServer(t *testing.T, iss string, keys int) *httptest.Server {
	t.Helper()
	var s *httptest.Server
	s = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			name := iss
			if name == "" {
				name = s.URL
			}
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, name, s.URL+"/jwks.json")
		case "/jwks.json":
			fmt.Fprintf(w, `{"keys":[%s]}`, strings.TrimSuffix(strings.Repeat(`{"kty":"RSA","kid":"k","n":"AQAB","e":"AQAB"},`, keys), ","))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// passing returns a preflight on which every check passes, in us-east-1
// with the repository's template and an external issuer.
func passing(t *testing.T) (*preflight, *fakebedrock.Server) {
	t.Helper()
	endpoint := motoserver.Endpoint(t)
	fb, err := fakebedrock.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fb.Close() })
	fb.AddModel("amazon.nova-micro-v1:0", "Amazon")
	fb.AddProfile("us.amazon.nova-micro-v1:0", "amazon.nova-micro-v1:0")
	iss := issuerServer(t, "", 2)
	region := "us-east-1"
	p := &preflight{
		sts:     sts.New(sts.Options{Region: region, BaseEndpoint: aws.String(endpoint), Credentials: static}),
		stacks:  cloudformation.New(cloudformation.Options{Region: region, BaseEndpoint: aws.String(endpoint), Credentials: static, Retryer: aws.NopRetryer{}}),
		lambda:  lambdaSettings(t, 1000, 1000),
		bedrock: bedrock.New(bedrock.Options{Region: region, BaseEndpoint: aws.String(fb.URL()), Credentials: static, Retryer: aws.NopRetryer{}}),
		runner:  &fakeRunner{version: "1.161.1"},
		http:    iss.Client(),
		in:      strings.NewReader(""), out: &bytes.Buffer{},
		root: "..", region: region,
		setting: samSettings{StackName: "usermemory-preflight", Parameters: map[string]string{
			"JwtIssuer": iss.URL, "JwtAudience": "usermemory-api", "AlarmEmail": "ops@acme.test",
		}},
	}
	return p, fb
}

// statuses returns each check's status.
func statuses(results []Result) map[string]Status {
	m := map[string]Status{}
	for _, r := range results {
		m[r.Check] = r.Status
	}
	return m
}

func TestPreflightPasses(t *testing.T) {
	p, _ := passing(t)
	results := p.run(context.Background())
	var out bytes.Buffer
	if err := report(&out, results); err != nil {
		t.Errorf("report: %v, want nil\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
	want := []string{"credentials", "samconfig", "sam", "parameters", "concurrency", "model", "profile", "issuer", "alarms"}
	got := statuses(results)
	for _, c := range want {
		if got[c] != Pass {
			t.Errorf("%s: %v, want PASS\n%s", c, got[c], out.String())
		}
	}
	if len(results) != len(want) {
		t.Errorf("%d results, want %d:\n%s", len(results), len(want), out.String())
	}
}

// TestPreflightBlockers makes each blocker happen alone and checks that
// its line blocks, with a fix, and that report returns errBlocked.
func TestPreflightBlockers(t *testing.T) {
	tests := []struct {
		name, check string
		change      func(t *testing.T, p *preflight, fb *fakebedrock.Server)
	}{
		{"no region", "credentials", func(_ *testing.T, p *preflight, _ *fakebedrock.Server) { p.region = "" }},
		{"credentials refused", "credentials", func(_ *testing.T, p *preflight, _ *fakebedrock.Server) {
			p.sts = sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"), Credentials: static, Retryer: aws.NopRetryer{}})
		}},
		{"placeholder issuer", "samconfig", func(_ *testing.T, p *preflight, _ *fakebedrock.Server) {
			p.setting.Parameters["JwtAudience"] = "https://api.example.com"
		}},
		{"sam absent", "sam", func(_ *testing.T, p *preflight, _ *fakebedrock.Server) { p.runner = &fakeRunner{err: exec.ErrNotFound} }},
		{"sam too old", "sam", func(_ *testing.T, p *preflight, _ *fakebedrock.Server) { p.runner = &fakeRunner{version: "1.160.1"} }},
		{"unmapped region", "parameters", func(_ *testing.T, p *preflight, _ *fakebedrock.Server) { p.region = "af-south-1" }},
		{"quota too small", "concurrency", func(t *testing.T, p *preflight, _ *fakebedrock.Server) {
			p.lambda = lambdaSettings(t, 50, 50)
			p.setting.Parameters["ReadReservedConcurrency"] = "20"
		}},
		{"model not served", "model", func(_ *testing.T, p *preflight, _ *fakebedrock.Server) {
			p.setting.Parameters["CheapModelId"] = "amazon.nova-lite-v1:0"
			p.setting.Parameters["CheapFoundationModelId"] = "amazon.nova-lite-v1:0"
		}},
		{"no inference profile", "profile", func(_ *testing.T, p *preflight, fb *fakebedrock.Server) {
			fb.Reset()
			fb.AddModel("amazon.nova-micro-v1:0", "Amazon")
		}},
		{"issuer names another", "issuer", func(t *testing.T, p *preflight, _ *fakebedrock.Server) {
			s := issuerServer(t, "https://someone-else.test", 1)
			p.http, p.setting.Parameters["JwtIssuer"] = s.Client(), s.URL
		}},
		{"issuer without keys", "issuer", func(t *testing.T, p *preflight, _ *fakebedrock.Server) {
			s := issuerServer(t, "", 0)
			p.http, p.setting.Parameters["JwtIssuer"] = s.Client(), s.URL
		}},
		{"model call refused", "model call", func(_ *testing.T, p *preflight, fb *fakebedrock.Server) {
			fb.Script(fakebedrock.AccessDenied())
			p.model = bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(fb.URL()), Credentials: static, Retryer: aws.NopRetryer{}})
			p.in = strings.NewReader("y\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, fb := passing(t)
			tt.change(t, p, fb)
			results := p.run(context.Background())
			var out bytes.Buffer
			err := report(&out, results)
			var blocked errBlocked
			if !errors.As(err, &blocked) {
				t.Errorf("report: %v, want errBlocked\n%s", err, out.String())
			}
			found := false
			for _, r := range results {
				if r.Check == tt.check {
					found = true
					if r.Status != Block || r.Fix == "" {
						t.Errorf("%s: %v with fix %q, want BLOCK with a fix\n%s", r.Check, r.Status, r.Fix, out.String())
					}
				}
			}
			if !found {
				t.Errorf("no %s line\n%s", tt.check, out.String())
			}
		})
	}
}

// TestPreflightWarnings: no alarm address, a small new-account quota
// that still fits, and an Anthropic model warn without blocking.
func TestPreflightWarnings(t *testing.T) {
	p, fb := passing(t)
	delete(p.setting.Parameters, "AlarmEmail")
	p.lambda = lambdaSettings(t, 400, 400)
	fb.AddModel("anthropic.claude-haiku-4-5-20251001-v1:0", "Anthropic")
	fb.AddProfile("us.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic.claude-haiku-4-5-20251001-v1:0")
	p.setting.Parameters["CheapFoundationModelId"] = "anthropic.claude-haiku-4-5-20251001-v1:0"
	results := p.run(context.Background())
	var out bytes.Buffer
	if err := report(&out, results); err != nil {
		t.Errorf("report: %v, want nil: warnings do not block\n%s", err, out.String())
	}
	got := statuses(results)
	for _, c := range []string{"alarms", "concurrency", "model"} {
		if got[c] != Warn {
			t.Errorf("%s: %v, want WARN\n%s", c, got[c], out.String())
		}
	}
}

// TestReservedSumsTheTemplate: the reservations are the template's,
// evaluated at the parameters (ReservedConcurrentExecutions of every
// function), not a figure kept here.
func TestReservedSumsTheTemplate(t *testing.T) {
	p, _ := passing(t)
	p.setting.Parameters["ReadReservedConcurrency"] = "7"
	p.setting.Parameters["EditReservedConcurrency"] = "3"
	app, _, res := p.resolve("123456789012")
	if app == nil {
		t.Fatalf("resolve: %v", res)
	}
	n, who := reserved(app)
	edits := 0
	for _, w := range who {
		if strings.HasSuffix(w, " 3") {
			edits++
		}
	}
	if n != 7+3*edits || edits == 0 {
		t.Errorf("reserved %d (%v), want 7 + 3 × %d editing functions", n, who, edits)
	}
	p.setting.Parameters["ReadReservedConcurrency"] = "0"
	p.setting.Parameters["EditReservedConcurrency"] = "0"
	app, _, _ = p.resolve("123456789012")
	if n, who := reserved(app); n != 0 {
		t.Errorf("with both 0: reserved %d (%v), want 0", n, who)
	}
}

// TestConcurrencyOfNewAccounts runs the concurrency check on a stubbed
// GetAccountSettings at the quotas new accounts have been given (10, 50)
// and the usual 1,000: it blocks where the extractor's two queue sources
// at ExtractorMaxConcurrency can take more than half the unreserved
// concurrency, and its fix names the value that fits.
func TestConcurrencyOfNewAccounts(t *testing.T) {
	for _, c := range []struct {
		quota           int
		extractor, read string
		want            Status
		fixSays         string
	}{
		{10, "", "", Block, "ExtractorMaxConcurrency=2"},
		{10, "2", "", Warn, "Service Quotas"},
		{10, "2", "1", Block, "ReadReservedConcurrency=0"},
		{50, "", "", Warn, "Service Quotas"},
		{50, "13", "", Block, "ExtractorMaxConcurrency=12"},
		{1000, "", "", Pass, ""},
		{1000, "250", "", Pass, ""},
		{1000, "251", "", Block, "ExtractorMaxConcurrency=250"},
		{1000, "220", "150", Block, "ExtractorMaxConcurrency=212"},
	} {
		name := fmt.Sprintf("quota %d, ExtractorMaxConcurrency %q, ReadReservedConcurrency %q", c.quota, c.extractor, c.read)
		p, _ := passing(t)
		p.lambda = lambdaSettings(t, c.quota, c.quota)
		for k, v := range map[string]string{"ExtractorMaxConcurrency": c.extractor, "ReadReservedConcurrency": c.read} {
			if v != "" {
				p.setting.Parameters[k] = v
			}
		}
		app, _, res := p.resolve("123456789012")
		if app == nil {
			t.Fatalf("%s: resolve: %v", name, res)
		}
		got := p.concurrency(context.Background(), app)
		if got.Status != c.want || !strings.Contains(got.Fix, c.fixSays) {
			t.Errorf("%s: %v\nwant %v with a fix saying %q", name, got, c.want, c.fixSays)
		}
	}
}
