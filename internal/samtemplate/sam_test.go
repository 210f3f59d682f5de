package samtemplate

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var opts = Options{Region: "eu-west-1", AccountID: "111122223333", StackName: "st", Parameters: map[string]string{"Issuer": "https://issuer.example"}}

// load resolves testdata/template.yaml with o, failing the test now on
// an error.
func load(t *testing.T, o Options) *App {
	t.Helper()
	tmpl, err := Load(filepath.Join("testdata", "template.yaml"))
	return resolved(t, tmpl, err, o)
}

// resolved resolves tmpl, as Load or Parse returned it with err, with o,
// failing the test now on an error.
func resolved(t *testing.T, tmpl *Template, err error, o Options) *App {
	t.Helper()
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
	// An event without Path and Method is SAM's default path: $default.
	if implicit == nil || len(implicit.Routes) != 1 || implicit.Routes[0].Key() != "$default" {
		t.Errorf("implicit API = %+v, want one $default route", implicit)
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
	for _, expr := range []string{`!Cidr [10.0.0.0/16, 2, 8]`, `!GetAZs ""`, `!Base64 plain`, `!Or [!Equals [a, a], !Equals [b, b]]`} {
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

// TestStackIDPartAndProperties checks the construct the queue names use,
// the last part of the stack ID through Fn::Split and Fn::Select, with
// Options.StackID unset and set, and App.Properties: the evaluated
// properties of a resource the local stack does not run.
func TestStackIDPartAndProperties(t *testing.T) {
	src := `
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub
        - q-${Id}.fifo
        - Id: !Select [2, !Split ["/", !Ref AWS::StackId]]
      FifoQueue: true
      MessageRetentionPeriod: !Select [1, !Split [",", "60,120,180"]]
  Role:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyDocument:
            Statement:
              - Resource: [!GetAtt Q.Arn, !Sub "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/m"]
`
	const uuid = "0f5b7c40-3bb5-11f0-9a4b-0a1b2c3d4e5f"
	for _, tt := range []struct{ stackID, queue string }{
		{"", "q-local.fifo"},
		{"arn:aws:cloudformation:eu-west-1:123456789012:stack/s/" + uuid, "q-" + uuid + ".fifo"},
	} {
		tmpl, err := Parse([]byte(src))
		app := resolved(t, tmpl, err, Options{Region: "eu-west-1", AccountID: "123456789012", StackName: "s", StackID: tt.stackID})
		q := app.Queues["Q"]
		if q == nil || q.Name != tt.queue || q.Attributes["MessageRetentionPeriod"] != "120" {
			t.Errorf("stack ID %q: queue %+v; want the name %s and MessageRetentionPeriod 120", tt.stackID, q, tt.queue)
			continue
		}
		if n := app.Properties["Q"]["QueueName"]; n != q.Name {
			t.Errorf("Properties[Q].QueueName = %v, want the queue's name", n)
		}
		want := map[string]any{"Policies": []any{map[string]any{"PolicyDocument": map[string]any{"Statement": []any{map[string]any{"Resource": []any{
			"arn:aws:sqs:eu-west-1:123456789012:" + tt.queue,
			"arn:aws:bedrock:eu-west-1::foundation-model/m",
		}}}}}}}
		if diff := cmp.Diff(want, app.Properties["Role"]); diff != "" {
			t.Errorf("stack ID %q: the role's properties (-want +got):\n%s", tt.stackID, diff)
		}
	}
	bad := strings.Replace(src, "!Select [1,", "!Select [3,", 1)
	tmpl, err := Parse([]byte(bad))
	if err == nil {
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
	// Its constraints and Rules are ones Check knows.
	for _, p := range iss {
		params[p] = "https://issuer.example"
	}
	if err := tmpl.Check(Options{Region: "us-east-1", AccountID: "123456789012", StackName: "s", Parameters: params}); err != nil {
		t.Errorf("Check: %v", err)
	}
	guarded := 0
	for _, api := range app.APIs {
		if len(api.Authorizers) > 0 {
			guarded++
		}
	}
	if len(app.Functions) == 0 || guarded != 1 || len(app.SQSEvents) == 0 || len(app.Tables) != 1 {
		t.Fatalf("resolved %d functions, %d APIs with an authorizer, %d SQS events, %d tables; want some of each, one such API and one table",
			len(app.Functions), guarded, len(app.SQSEvents), len(app.Tables))
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

// TestCheck checks what CloudFormation refuses before it makes a
// resource: a value outside its parameter's constraints, and a rule whose
// assertion fails, named with its AssertDescription.
func TestCheck(t *testing.T) {
	src := `
Parameters:
  Count:
    Type: Number
    Default: 5
    MinValue: 1
    MaxValue: 10
  Mode:
    Type: String
    Default: "on"
    AllowedValues: ["on", "off"]
  Model:
    Type: String
    Default: ""
    AllowedPattern: "^$|[a-z]+\\.[a-z]+"
    ConstraintDescription: a model ID, or empty
  Names:
    Type: CommaDelimitedList
    Default: a,b
Rules:
  KnownRegion:
    RuleCondition: !Equals [!Ref Model, ""]
    Assertions:
      - Assert: !Contains [[eu-west-1, us-east-1], !Ref AWS::Region]
        AssertDescription: Set Model in this Region.
  NotOff:
    Assertions:
      - Assert: !Not [!Equals [!Ref Mode, "off"]]
Resources:
  Q:
    Type: AWS::SQS::Queue
`
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		region string
		params map[string]string
		want   string // "" to accept, else a part of the error
	}{
		{"eu-west-1", nil, ""},
		{"sa-east-1", nil, "rule KnownRegion: Set Model in this Region."},
		{"sa-east-1", map[string]string{"Model": "vendor.model"}, ""},
		{"us-east-1", map[string]string{"Model": "x.model-with-more"}, "Model=\"x.model-with-more\" does not match its AllowedPattern ^$|[a-z]+\\.[a-z]+: a model ID, or empty"},
		{"us-east-1", map[string]string{"Mode": "off"}, "rule NotOff: assertion 1 fails"},
		{"us-east-1", map[string]string{"Mode": "maybe"}, "Mode=\"maybe\" is not one of its AllowedValues"},
		{"us-east-1", map[string]string{"Count": "1"}, ""},
		{"us-east-1", map[string]string{"Count": "10"}, ""},
		{"us-east-1", map[string]string{"Count": "0"}, "Count=\"0\" is outside its MinValue 1"},
		{"us-east-1", map[string]string{"Count": "11"}, "Count=\"11\" is outside its MaxValue 10"},
		{"us-east-1", map[string]string{"Count": "many"}, "Count=\"many\" is not a number"},
		{"us-east-1", map[string]string{"Other": "x"}, "Other"},
	} {
		err := tmpl.Check(Options{Region: c.region, AccountID: "123456789012", StackName: "s", Parameters: c.params})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %v: %v, want %q", c.region, c.params, err, c.want)
		}
	}
}

// TestCheckFailsOnWhatItDoesNotKnow checks that a constraint, a function
// or a reference Check does not evaluate fails the check with an error
// naming it, instead of passing in silence.
func TestCheckFailsOnWhatItDoesNotKnow(t *testing.T) {
	for _, c := range []struct{ decl, want string }{
		{"Parameters:\n  P:\n    Type: String\n    Default: x\n    MaxLength: 3\n", "MaxLength is not checked"},
		{"Parameters:\n  P:\n    Type: AWS::EC2::VPC::Id\n    Default: x\n", `"AWS::EC2::VPC::Id" is not checked`},
		{"Rules:\n  R:\n    Assertions:\n      - Assert: !Or [!Equals [a, a], !Equals [b, b]]\n", "Fn::Or is not evaluated"},
		{"Rules:\n  R:\n    Assertions:\n      - Assert: !Equals [!Ref Q, x]\n", "Rules refer to parameters and pseudo parameters only"},
		{"Rules:\n  R:\n    Assertions:\n      - Assert: !Equals [!GetAtt Q.Arn, x]\n", "Rules refer to parameters and pseudo parameters only"},
		{"Rules:\n  R:\n    Assertions:\n      - Assert: !Ref AWS::Region\n", "is not true or false"},
	} {
		tmpl, err := Parse([]byte(c.decl + "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := tmpl.Check(Options{Region: "us-east-1"}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.decl, err, c.want)
		}
	}
	// Fn::Contains belongs in Rules.
	tmpl, err := Parse([]byte("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      DelaySeconds: !Contains [[a], a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Resolve(Options{Region: "us-east-1"}); err == nil || !strings.Contains(err.Error(), "Fn::Contains belongs in the assertions of Rules") {
		t.Errorf("Fn::Contains in a resource: %v, want a refusal", err)
	}
}

// TestFindInMapInBothBranches holds the evaluator to CloudFormation's
// Fn::FindInMap: a missing key fails even in the branch of Fn::If not
// taken, and a DefaultValue, with the AWS::LanguageExtensions transform
// only, stands in for it.
func TestFindInMapInBothBranches(t *testing.T) {
	const tmpl = `
Transform: %s
Parameters:
  Override: {Type: String, Default: ""}
Mappings:
  Geo:
    eu-west-1: {Prefix: eu}
Conditions:
  FromMap: !Equals [!Ref Override, ""]
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: .
      Environment:
        Variables:
          X: !If [FromMap, %s, !Ref Override]
`
	const (
		plain      = `!FindInMap [Geo, !Ref AWS::Region, Prefix]`
		withDef    = `!FindInMap [Geo, !Ref AWS::Region, Prefix, {DefaultValue: none}]`
		extensions = `[AWS::LanguageExtensions, AWS::Serverless-2016-10-31]`
		serverless = `AWS::Serverless-2016-10-31`
	)
	tests := []struct {
		name, transform, find, region, override string
		want, wantErr                           string
	}{
		{"mapped, taken", serverless, plain, "eu-west-1", "", "eu", ""},
		{"mapped, not taken", serverless, plain, "eu-west-1", "m.x", "m.x", ""},
		{"unmapped, taken", serverless, plain, "sa-east-1", "", "", "Unable to get mapping"},
		{"unmapped, not taken: CloudFormation fails too", serverless, plain, "sa-east-1", "m.x", "", "branch not taken"},
		{"default, not taken", extensions, withDef, "sa-east-1", "m.x", "m.x", ""},
		{"default, taken", extensions, withDef, "sa-east-1", "", "none", ""},
		{"default without the transform", serverless, withDef, "sa-east-1", "m.x", "", "needs the AWS::LanguageExtensions transform"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := Parse([]byte(fmt.Sprintf(tmpl, tt.transform, tt.find)))
			if err != nil {
				t.Fatal(err)
			}
			app, err := tp.Resolve(Options{Region: tt.region, AccountID: "123456789012", StackName: "s", Parameters: map[string]string{"Override": tt.override}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := app.Functions["F"].Env["X"]; got != tt.want {
				t.Errorf("X = %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkLoadAndResolve reads the repository's template.yaml and
// resolves it for one deployment, as the local stack does at start; the
// package doc compares it with goformation's intrinsic processing.
func BenchmarkLoadAndResolve(b *testing.B) {
	path := filepath.Join("..", "..", "template.yaml")
	params := map[string]string{"JwtIssuer": "http://127.0.0.1:1", "JwtAudience": "local"}
	for b.Loop() {
		tmpl, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		o := Options{Region: "us-east-1", AccountID: "123456789012", StackName: "usermemory", Parameters: params}
		if _, err := tmpl.Resolve(o); err != nil {
			b.Fatal(err)
		}
	}
}

// TestJoinAndEachMemberEquals checks Fn::Join and Fn::And in a resource,
// and Fn::EachMemberEquals in a rule, where a list parameter left empty
// is a list of no member.
func TestJoinAndEachMemberEquals(t *testing.T) {
	src := `
Parameters:
  Aud: {Type: CommaDelimitedList, Default: ""}
  Iss: {Type: String, Default: ""}
Conditions:
  Both: !And [!Equals [!Ref Iss, ""], !Equals [a, a]]
Rules:
  NeedsAud:
    RuleCondition: !Not [!Equals [!Ref Iss, ""]]
    Assertions:
      - Assert: !Not [!EachMemberEquals [!Ref Aud, ""]]
        AssertDescription: set Aud
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: .
      Environment:
        Variables:
          J: !Join ["+", [x, !Ref Iss, y]]
          B: !If [Both, "yes", "no"]
`
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Region: "us-east-1", AccountID: "123456789012", StackName: "s"}
	app, err := tmpl.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	if env := app.Functions["F"].Env; env["J"] != "x++y" || env["B"] != "yes" {
		t.Errorf("env %v, want J=x++y and B=yes", env)
	}
	for params, want := range map[string]string{"": "", "https://i": "set Aud", "https://i,a": ""} {
		iss, aud, _ := strings.Cut(params, ",")
		o.Parameters = map[string]string{"Iss": iss, "Aud": aud}
		err := tmpl.Check(o)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("Iss=%q Aud=%q: %v, want %q", iss, aud, err, want)
		}
	}
}

// TestCognitoReferences checks that a user pool's Ref and attributes read
// as Cognito's, and that a JWT issuer taken from one through Fn::If names
// only the parameter as the local stack's to override.
func TestCognitoReferences(t *testing.T) {
	src := `
Parameters:
  Iss: {Type: String, Default: ""}
  Aud: {Type: CommaDelimitedList, Default: ""}
Conditions:
  Own: !Equals [!Ref Iss, ""]
Resources:
  Pool:
    Type: AWS::Cognito::UserPool
    Condition: Own
  Client:
    Type: AWS::Cognito::UserPoolClient
    Condition: Own
  Api:
    Type: AWS::Serverless::HttpApi
    Properties:
      Auth:
        Authorizers:
          A:
            JwtConfiguration:
              issuer: !If [Own, !GetAtt Pool.ProviderURL, !Ref Iss]
              audience: !If [Own, [!Ref Client], !Ref Aud]
`
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	iss, aud := tmpl.JWTParameters()
	if fmt.Sprint(iss, aud) != "[Iss] [Aud]" {
		t.Errorf("JWT parameters %v %v, want [Iss] [Aud]", iss, aud)
	}
	app, err := tmpl.Resolve(Options{Region: "eu-west-1", AccountID: "123456789012", StackName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	a := app.APIs["Api"].Authorizers["A"]
	if a.Issuer != "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Pool" || fmt.Sprint(a.Audience) != "[clientclientid]" {
		t.Errorf("authorizer %+v: want the pool's provider URL and the client's ID", a)
	}
	if arn := app.Properties["Pool"]; arn == nil {
		t.Error("the pool's properties are not resolved")
	}
	app, err = tmpl.Resolve(Options{Region: "eu-west-1", AccountID: "123456789012", StackName: "s", Parameters: map[string]string{"Iss": "https://i", "Aud": "x,y"}})
	if err != nil {
		t.Fatal(err)
	}
	if a := app.APIs["Api"].Authorizers["A"]; a.Issuer != "https://i" || fmt.Sprint(a.Audience) != "[x y]" || app.Properties["Pool"] != nil {
		t.Errorf("with an issuer: authorizer %+v, pool %v; want the parameters and no pool", a, app.Properties["Pool"])
	}
}
