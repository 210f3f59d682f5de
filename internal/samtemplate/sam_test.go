package samtemplate

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var opts = Options{Region: "eu-west-1", AccountID: "111122223333", StackName: "st", Parameters: map[string]string{"Issuer": "https://issuer.example"}}

func load(t *testing.T, o Options) *App {
	t.Helper()
	tmpl, err := Load(filepath.Join("testdata", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := tmpl.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestFunctionsGetGlobalsAndResolvedEnvironment(t *testing.T) {
	app := load(t, opts)
	read := app.Functions["ReadFunction"]
	if read == nil {
		t.Fatalf("functions = %v, want ReadFunction", app.Functions)
	}
	want := map[string]string{
		"TABLE":      "st-things-dev",
		"SHARED":     "global",
		"OVERRIDDEN": "dev-value",
		"QUEUE":      "http://sqs.local/111122223333/st-Work.fifo",
		"QUEUE_ARN":  "arn:aws:sqs:eu-west-1:111122223333:st-Work.fifo",
		"JOINED":     "y-st-Work.fifo",
		"LITERAL":    "${NotAVariable}",
		"BOTH":       "yes",
	}
	if diff := cmp.Diff(want, read.Env); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
	if read.Timeout != 3*time.Second || read.MemoryMB != 512 || read.CodeDir != "functions/read" || read.Name != "st-ReadFunction" {
		t.Errorf("ReadFunction = %+v; want timeout 3s, memory 512 from the mapping, code functions/read, name st-ReadFunction", read)
	}
	work := app.Functions["WorkFunction"]
	if work.Timeout != 7*time.Second || work.Name != "worker" {
		t.Errorf("WorkFunction timeout %s name %q, want the global 7s and worker", work.Timeout, work.Name)
	}
}

func TestParameterOverridesAndConditions(t *testing.T) {
	o := opts
	o.Parameters = map[string]string{"Issuer": "https://i", "Stage": "prod"}
	app := load(t, o)
	env := app.Functions["ReadFunction"].Env
	if env["OVERRIDDEN"] != "prod-value" || env["DROPPED"] != "here" || env["BOTH"] != "no" {
		t.Errorf("env = %v; want the prod branches", env)
	}
	if app.Functions["ReadFunction"].MemoryMB != 1024 {
		t.Errorf("memory = %d, want 1024", app.Functions["ReadFunction"].MemoryMB)
	}
	if _, ok := app.Queues["ProdOnly"]; !ok {
		t.Error("the queue of condition IsProd is missing in prod")
	}
	if _, ok := load(t, opts).Queues["ProdOnly"]; ok {
		t.Error("the queue of condition IsProd exists in dev")
	}
	if _, ok := load(t, opts).Functions["ReadFunction"].Env["DROPPED"]; ok {
		t.Error("AWS::NoValue left the variable in place")
	}
}

func TestResolveTwiceWithOtherConditions(t *testing.T) {
	tmpl, err := Load(filepath.Join("testdata", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prod := opts
	prod.Parameters = map[string]string{"Issuer": "x", "Stage": "prod"}
	for i, o := range []Options{opts, prod, opts} {
		app, err := tmpl.Resolve(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := app.Queues["ProdOnly"]; ok != (i == 1) {
			t.Errorf("resolve %d: queue ProdOnly present %v, want %v", i, ok, i == 1)
		}
	}
}

func TestParameterErrors(t *testing.T) {
	tmpl, err := Load(filepath.Join("testdata", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Resolve(Options{Region: "r", AccountID: "a", StackName: "s"}); err == nil || !strings.Contains(err.Error(), "Issuer") {
		t.Errorf("without the Issuer parameter: %v, want an error naming it", err)
	}
	if _, err := tmpl.Resolve(Options{Parameters: map[string]string{"Issuer": "x", "Nope": "y"}}); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("with an undeclared parameter: %v, want an error naming it", err)
	}
}

func TestHTTPAPI(t *testing.T) {
	app := load(t, opts)
	api := app.APIs["Api"]
	if api == nil {
		t.Fatalf("APIs = %v, want Api", app.APIs)
	}
	wantRoutes := []Route{
		{Method: "GET", Path: "/health", Function: "ReadFunction", Authorizer: "NONE"},
		{Method: "GET", Path: "/things/{id}", Function: "ReadFunction", Scopes: []string{"things/read"}},
	}
	if diff := cmp.Diff(wantRoutes, api.Routes); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	wantAuth := &Authorizer{Name: "Jwt", Issuer: "https://issuer.example", Audience: []string{"a", "b"}, IdentitySource: "$request.header.Authorization"}
	if diff := cmp.Diff(wantAuth, api.Authorizers["Jwt"]); diff != "" || api.DefaultAuthorizer != "Jwt" {
		t.Errorf("authorizer (-want +got):\n%s default %q", diff, api.DefaultAuthorizer)
	}
	wantCORS := &CORS{AllowOrigins: []string{"https://one.example", "https://two.example"}, AllowMethods: []string{"GET"}, MaxAge: 60}
	if diff := cmp.Diff(wantCORS, api.CORS); diff != "" {
		t.Errorf("CORS (-want +got):\n%s", diff)
	}
	implicit := app.APIs[ImplicitHTTPAPI]
	if implicit == nil || len(implicit.Routes) != 1 || implicit.Routes[0].Key() != "ANY /" {
		t.Errorf("implicit API = %+v, want one ANY / route", implicit)
	}
}

func TestTablesQueuesAndEventSources(t *testing.T) {
	app := load(t, opts)
	wantTable := &Table{LogicalID: "Things", Name: "st-things-dev", HashKey: "id", HashKeyType: "S", RangeKey: "at", RangeKeyType: "N", BillingMode: "PAY_PER_REQUEST", TTLAttribute: "ttl"}
	if diff := cmp.Diff(wantTable, app.Tables["Things"]); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	work := app.Queues["Work"]
	wantWork := &Queue{LogicalID: "Work", Name: "st-Work.fifo", FIFO: true, VisibilityTimeout: 90 * time.Second,
		DeadLetterQueue: "Dead", MaxReceiveCount: 3, Attributes: map[string]string{
			"FifoQueue": "true", "VisibilityTimeout": "90",
			"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:111122223333:dead.fifo","maxReceiveCount":3}`,
		}}
	if diff := cmp.Diff(wantWork, work); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	if d := app.Queues["Dead"]; d.Name != "dead.fifo" || d.Attributes["MessageRetentionPeriod"] != "1209600" || d.VisibilityTimeout != 30*time.Second {
		t.Errorf("dead-letter queue = %+v", d)
	}
	want := []SQSEvent{{Function: "WorkFunction", Queue: "Work", BatchSize: 5, BatchingWindow: 2 * time.Second,
		ReportBatchItemFailures: true, MaxConcurrency: 3, Enabled: true}}
	if diff := cmp.Diff(want, app.SQSEvents); diff != "" {
		t.Errorf("SQS events (-want +got):\n%s", diff)
	}
}

func TestJWTParameters(t *testing.T) {
	tmpl, err := Load(filepath.Join("testdata", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	iss, aud := tmpl.JWTParameters()
	if !cmp.Equal(iss, []string{"Issuer"}) || !cmp.Equal(aud, []string{"Audiences"}) {
		t.Errorf("JWTParameters = %v, %v; want [Issuer], [Audiences]", iss, aud)
	}
}

func TestShortFormTags(t *testing.T) {
	src := `
Resources:
  R:
    Type: Custom::X
    Properties:
      A: !Ref P
      B: !GetAtt Q.Arn
      C: !Sub "x-${P}"
      D: !!str 42
      E: !Base64 plain
      F: |
        two
        lines
`
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := tmpl.base["R"].props
	want := map[string]any{
		"A": map[string]any{"Ref": "P"},
		"B": map[string]any{"Fn::GetAtt": []any{"Q", "Arn"}},
		"C": map[string]any{"Fn::Sub": "x-${P}"},
		"D": "42",
		"E": map[string]any{"Fn::Base64": "plain"},
		"F": "two\nlines\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
}

// TestUnknownIntrinsicFails checks that an intrinsic function the reader
// does not evaluate fails the resolution with an error naming it, instead
// of a wrong value.
func TestUnknownIntrinsicFails(t *testing.T) {
	for _, expr := range []string{`!Join ["-", [a, b]]`, `!GetAZs ""`, `!Base64 plain`, `!And [!Equals [a, a], !Equals [b, b]]`} {
		src := `
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: .
      Environment:
        Variables:
          X: ` + expr + "\n"
		tmpl, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		name := "Fn::" + strings.Fields(strings.TrimPrefix(expr, "!"))[0]
		if _, err := tmpl.Resolve(Options{Region: "us-east-1", AccountID: "123456789012", StackName: "s"}); err == nil || !strings.Contains(err.Error(), name+" is not evaluated") {
			t.Errorf("%s: error %v, want one naming %s", expr, err, name)
		}
	}
}

// TestStackIDPart checks the construct the queue names use: the last part
// of the stack ID, through Fn::Split and Fn::Select.
func TestStackIDPart(t *testing.T) {
	src := `
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub
        - usermemory-${Id}.fifo
        - Id: !Select [2, !Split ["/", !Ref AWS::StackId]]
      FifoQueue: true
      MessageRetentionPeriod: !Select [1, !Split [",", "60,120,180"]]
`
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	app, err := tmpl.Resolve(Options{Region: "us-east-1", AccountID: "123456789012", StackName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	q := app.Queues["Q"]
	if q == nil || q.Name != "usermemory-local.fifo" || q.Attributes["MessageRetentionPeriod"] != "120" {
		t.Errorf("queue %+v; want the name usermemory-local.fifo and MessageRetentionPeriod 120", q)
	}
	bad := strings.Replace(src, "!Select [1,", "!Select [3,", 1)
	if tmpl, err = Parse([]byte(bad)); err == nil {
		_, err = tmpl.Resolve(Options{Region: "us-east-1", AccountID: "123456789012", StackName: "s"})
	}
	if err == nil || !strings.Contains(err.Error(), "Fn::Select") {
		t.Errorf("an index past the list: error %v, want one naming Fn::Select", err)
	}
}

// TestTheRepositoryTemplate resolves the project's own template.yaml as
// the local stack does, so that a construct this reader does not know
// fails here first.
func TestTheRepositoryTemplate(t *testing.T) {
	tmpl, err := Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	iss, aud := tmpl.JWTParameters()
	params := map[string]string{}
	for _, p := range iss {
		params[p] = "http://127.0.0.1:1"
	}
	for _, p := range aud {
		params[p] = "local"
	}
	app, err := tmpl.Resolve(Options{Region: "us-east-1", AccountID: "123456789012", StackName: "s", Parameters: params})
	if err != nil {
		t.Fatal(err)
	}
	if len(app.Functions) == 0 || len(app.APIs) != 1 || len(app.SQSEvents) == 0 || len(app.Tables) != 1 {
		t.Fatalf("resolved %d functions, %d APIs, %d SQS events, %d tables; want some of each, one API and one table",
			len(app.Functions), len(app.APIs), len(app.SQSEvents), len(app.Tables))
	}
	for _, api := range app.APIs {
		for _, r := range api.Routes {
			if app.Functions[r.Function] == nil {
				t.Errorf("route %s names function %s, which is not resolved", r.Key(), r.Function)
			}
		}
		for name, a := range api.Authorizers {
			if a.Issuer != "http://127.0.0.1:1" || !cmp.Equal(a.Audience, []string{"local"}) {
				t.Errorf("authorizer %s = %+v; the overrides did not reach it", name, a)
			}
		}
	}
	for _, ev := range app.SQSEvents {
		if app.Queues[ev.Queue] == nil {
			t.Errorf("SQS event of %s reads %s, which is not a queue", ev.Function, ev.Queue)
		}
	}
}
