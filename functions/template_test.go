// Package functions_test holds template.yaml to the code: least privilege,
// one function per main package, the routes of api/openapi.yaml, the table
// of dynamorepo, the environment of setup, the queue's redrive rules, the
// Makefile's build targets, and cfn-lint.
package functions_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/internal/sourcetest"
	"github.com/usermemory/usermemory/internal/testenv"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/web"
)

// libraries are the folders of functions/ that are not functions.
var libraries = map[string]bool{"httpapi": true, "logref": true, "setup": true, "wire": true}

// tableActions are the only DynamoDB actions each function's role has.
var tableActions = map[string][]string{
	"GetFactsFunction":      {"dynamodb:GetItem"},
	"PutFactFunction":       {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
	"DeleteFactFunction":    {"dynamodb:PutItem", "dynamodb:UpdateItem"},
	"PendingFactFunction":   {"dynamodb:GetItem", "dynamodb:PutItem"},
	"ImportsFunction":       {"dynamodb:GetItem", "dynamodb:PutItem"},
	"ClearFactsFunction":    {"dynamodb:UpdateItem"},
	"ForgetThreadFunction":  {"dynamodb:GetItem", "dynamodb:PutItem"},
	"ThreadChangesFunction": {"dynamodb:GetItem", "dynamodb:PutItem"},
	"EraseUserFunction":     {"dynamodb:PutItem"},
	"ExportFunction":        {"dynamodb:GetItem"},
	"ExtractorFunction":     {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
	"PreTokenFunction":      nil,
	"PageFunction":          nil,
}

func ref(name string) map[string]any         { return map[string]any{"Ref": name} }
func getAtt(res, attr string) map[string]any { return map[string]any{"Fn::GetAtt": []any{res, attr}} }
func props(r map[string]any) map[string]any  { m, _ := r["Properties"].(map[string]any); return m }
func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}
func get(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	return v
}

func number(t *testing.T, v any) int {
	t.Helper()
	n, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("%v is not a number", v)
	}
	return n
}

// statements returns the IAM statements of the role of function id.
func statements(t *testing.T, tpl httpapitest.SAMTemplate, id string) []map[string]any {
	t.Helper()
	res := tpl.Resources()
	fn := res[id]
	roleRef, _ := props(fn)["Role"].(map[string]any)
	att, _ := roleRef["Fn::GetAtt"].([]any)
	if len(att) != 2 || att[1] != "Arn" {
		t.Fatalf("%s: Role is %v, want !GetAtt <its own role>.Arn", id, props(fn)["Role"])
	}
	if _, ok := props(fn)["Policies"]; ok {
		t.Errorf("%s: Policies next to Role: every permission belongs in its role", id)
	}
	role := res[att[0].(string)]
	var out []map[string]any
	for _, p := range asList(props(role)["Policies"]) {
		for _, s := range asList(get(p.(map[string]any), "PolicyDocument", "Statement")) {
			out = append(out, s.(map[string]any))
		}
	}
	if _, ok := props(role)["ManagedPolicyArns"]; ok {
		t.Errorf("%s: managed policies are not least privilege", id)
	}
	return out
}

func TestLeastPrivilege(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	roles := map[string]string{}
	for _, id := range tpl.Functions() {
		roles[fmt.Sprint(asList(get(props(tpl.Resources()[id]), "Role", "Fn::GetAtt"))[0])] = id
		var table []string
		for _, s := range statements(t, tpl, id) {
			if s["Effect"] != "Allow" {
				t.Errorf("%s: statement %v is not Allow", id, s)
			}
			for _, a := range asList(s["Action"]) {
				action := fmt.Sprint(a)
				service, _, _ := strings.Cut(action, ":")
				switch {
				case strings.Contains(action, "*"):
					t.Errorf("%s: action %q has a wildcard", id, action)
				case service == "dynamodb":
					table = append(table, action)
					if !slices.ContainsFunc(asList(s["Resource"]), func(r any) bool { return fmt.Sprint(r) == fmt.Sprint(getAtt("Table", "Arn")) }) ||
						len(asList(s["Resource"])) != 1 {
						t.Errorf("%s: %s on %v, want the table only", id, action, s["Resource"])
					}
				case service == "sqs" && id == "ImportsFunction":
					// The import route sends import messages to the extraction queue, and nothing else.
					if action != "sqs:SendMessage" || fmt.Sprint(s["Resource"]) != fmt.Sprint(getAtt("ExtractionQueue", "Arn")) {
						t.Errorf("%s: %s on %v, want sqs:SendMessage on the extraction queue only", id, action, s["Resource"])
					}
					continue
				case service == "bedrock" || service == "sqs":
					if id != "ExtractorFunction" {
						t.Errorf("%s: %s is the extractor's alone", id, action)
					}
				case service == "logs" || service == "xray":
				default:
					t.Errorf("%s: unexpected action %q", id, action)
				}
				if service == "sqs" && fmt.Sprint(s["Resource"]) != fmt.Sprint(sqsResource(action)) {
					t.Errorf("%s: %s on %v, want %v", id, action, s["Resource"], sqsResource(action))
				}
				if service == "bedrock" && action != "bedrock:InvokeModel" {
					t.Errorf("%s: %s, want bedrock:InvokeModel only", id, action)
				}
				if service == "logs" && fmt.Sprint(s["Resource"]) == "*" {
					t.Errorf("%s: logs on every log group", id)
				}
			}
		}
		sort.Strings(table)
		if want, ok := tableActions[id]; !ok || !slices.Equal(table, want) {
			t.Errorf("%s: table actions %q, want %q", id, table, want)
		}
	}
	// No other role, and no action wildcard anywhere in the template.
	for id, r := range tpl.Resources() {
		if r["Type"] == "AWS::IAM::Role" && roles[id] == "" {
			t.Errorf("role %s belongs to no function", id)
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "Action" || k == "NotAction" {
					for _, a := range asList(x) {
						if strings.Contains(fmt.Sprint(a), "*") || k == "NotAction" {
							t.Errorf("%s: %s %v", path, k, a)
						}
					}
				}
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("template", map[string]any(tpl))
	// The model resources, evaluated: the configured model's profile and
	// foundation model only.
	app := resolve(t, loadStackTemplate(t), deployment("eu-west-1", nil))
	model := extractorEnv(t, app)["CHEAP_MODEL_ID"]
	for _, r := range modelResources(t, tpl, app) {
		if !strings.HasSuffix(r, "/"+model) && !strings.HasSuffix(r, "::foundation-model/"+app.Parameters["CheapFoundationModelId"]) {
			t.Errorf("ExtractorFunction: model resource %s is not the configured model %s", r, model)
		}
	}
	if !strings.Contains(fmt.Sprint(tableActions["EraseUserFunction"]), "PutItem") {
		t.Fatal("the eraser replaces the record with PutItem")
	}
	for id, acts := range tableActions {
		if slices.Contains(acts, "dynamodb:DeleteItem") {
			t.Errorf("%s may delete items", id)
		}
	}
}

func TestFunctionsAreMainPackages(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	root := httpapitest.Root(t)
	var folders []string
	dirs, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !libraries[d.Name()] {
			folders = append(folders, d.Name())
			files := sourcetest.Files(t, filepath.Join(root, "functions", d.Name()), parser.PackageClauseOnly)
			for name, f := range files {
				if f.Name.Name != "main" {
					t.Errorf("%s: package %s, want main", name, f.Name.Name)
				}
			}
			if len(files) == 0 {
				t.Errorf("functions/%s has no main package", d.Name())
			}
		}
	}
	var fromTemplate []string
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range tpl.Functions() {
		folder := strings.ToLower(strings.TrimSuffix(id, "Function"))
		fromTemplate = append(fromTemplate, folder)
		fn := tpl.Resources()[id]
		if get(fn, "Metadata", "BuildMethod") != "makefile" || get(props(fn), "CodeUri") != "." {
			t.Errorf("%s: want Metadata.BuildMethod makefile and CodeUri . (the root Makefile builds it)", id)
		}
		target := fmt.Sprintf("build-%s:\n\t$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/%s\n", id, folder)
		if !strings.Contains(string(makefile), target) {
			t.Errorf("Makefile lacks\n%s", target)
		}
	}
	sort.Strings(folders)
	sort.Strings(fromTemplate)
	if !slices.Equal(folders, fromTemplate) {
		t.Errorf("functions/ has %q, template.yaml %q", folders, fromTemplate)
	}
	globals := get(tpl, "Globals", "Function").(map[string]any)
	for k, want := range map[string]any{"Runtime": "provided.al2023", "Handler": "bootstrap", "Tracing": "Active"} {
		if globals[k] != want {
			t.Errorf("Globals.Function.%s = %v, want %v", k, globals[k], want)
		}
	}
	if fmt.Sprint(globals["Architectures"]) != "[arm64]" {
		t.Errorf("Architectures %v, want [arm64]", globals["Architectures"])
	}
}

func TestRoutesAreTheDocument(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	var keys []string
	for _, r := range tpl.Routes() {
		if r.Function == "PageFunction" {
			continue // The page, not the fact API: TestPageRoutesArePublic.
		}
		keys = append(keys, r.Key)
		scope := "UserScope"
		if strings.HasPrefix(r.Key[strings.Index(r.Key, " ")+1:], "/v1/users/") {
			scope = "AdminScope"
		}
		if fmt.Sprint(r.Scopes) != fmt.Sprint([]any{ref(scope)}) || r.Authorizer != "JwtAuthorizer" {
			t.Errorf("%s: scopes %v authorizer %q, want [!Ref %s] and JwtAuthorizer", r.Key, r.Scopes, r.Authorizer, scope)
		}
	}
	if doc := httpapitest.LoadSpec(t).Routes(); !slices.Equal(keys, doc) {
		t.Errorf("template routes %q\napi/openapi.yaml routes %q", keys, doc)
	}
	// An external issuer's tokens: the authorizer takes the parameters.
	tmpl := loadStackTemplate(t)
	app := resolve(t, tmpl, deployment("us-east-1", externalIssuer))
	a := app.APIs["HttpApi"].Authorizers["JwtAuthorizer"]
	if a == nil || a.Issuer != externalIssuer["JwtIssuer"] || strings.Join(a.Audience, ",") != externalIssuer["JwtAudience"] {
		t.Errorf("with JwtIssuer set, the authorizer is %+v; want the parameters' issuer and audience", a)
	}
	// CORS: the parameter's origins and the memory page's.
	origins := app.APIs["HttpApi"].CORS.AllowOrigins
	page := strings.TrimSuffix(fmt.Sprint(app.Outputs["PageUrl"]), "/app/")
	if want, _ := tmpl.ParameterDefault("CorsAllowOrigins"); !slices.Contains(origins, want) || !slices.Contains(origins, page) || len(origins) != 2 {
		t.Errorf("CORS origins %q, want the parameter's %s and the page's %s", origins, want, page)
	}
}

func TestTableIsDynamorepos(t *testing.T) {
	table := props(httpapitest.LoadSAMTemplate(t).Resources()["Table"])
	key := asList(table["KeySchema"])
	attrs := asList(table["AttributeDefinitions"])
	if len(key) != 1 || get(key[0].(map[string]any), "AttributeName") != dynamorepo.KeyAttribute ||
		len(attrs) != 1 || get(attrs[0].(map[string]any), "AttributeType") != dynamorepo.KeyAttributeType {
		t.Errorf("key schema %v %v, want %s of type %s only", key, attrs, dynamorepo.KeyAttribute, dynamorepo.KeyAttributeType)
	}
	if get(table, "TimeToLiveSpecification", "AttributeName") != dynamorepo.TTLAttribute ||
		get(table, "TimeToLiveSpecification", "Enabled") != true {
		t.Errorf("TTL %v, want %s enabled", table["TimeToLiveSpecification"], dynamorepo.TTLAttribute)
	}
	if table["BillingMode"] != dynamorepo.BillingMode ||
		get(table, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled") != true ||
		get(table, "SSESpecification", "SSEEnabled") != true {
		t.Errorf("table %v: want on demand, point-in-time recovery and encryption", table)
	}
}

func TestQueues(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	res := tpl.Resources()
	q, dlq := props(res["ExtractionQueue"]), props(res["ExtractionDeadLetterQueue"])
	extractor := props(res["ExtractorFunction"])
	if q["FifoQueue"] != true || dlq["FifoQueue"] != true || q["ContentBasedDeduplication"] != false {
		t.Error("both queues are FIFO, without content-based deduplication (the producer sets the IDs)")
	}
	if v, to := number(t, q["VisibilityTimeout"]), number(t, extractor["Timeout"]); v < 6*to {
		t.Errorf("visibility timeout %d < 6 × the extractor's timeout %d", v, to)
	}
	if n := number(t, get(q, "RedrivePolicy", "maxReceiveCount")); n < 5 {
		t.Errorf("maxReceiveCount %d < 5", n)
	}
	if fmt.Sprint(get(q, "RedrivePolicy", "deadLetterTargetArn")) != fmt.Sprint(getAtt("ExtractionDeadLetterQueue", "Arn")) {
		t.Error("the queue's dead letters go to ExtractionDeadLetterQueue")
	}
	if fmt.Sprint(dlq["MessageRetentionPeriod"]) != fmt.Sprint(ref("DeadLetterRetentionSeconds")) {
		t.Errorf("the DLQ's retention %v, want the parameter DeadLetterRetentionSeconds", dlq["MessageRetentionPeriod"])
	}
	ev := get(extractor, "Events", "Queue", "Properties").(map[string]any)
	if fmt.Sprint(ev["FunctionResponseTypes"]) != "[ReportBatchItemFailures]" || number(t, ev["BatchSize"]) > 10 ||
		get(ev, "ScalingConfig", "MaximumConcurrency") == nil || ev["MaximumBatchingWindowInSeconds"] != nil {
		t.Errorf("extractor event %v: want ReportBatchItemFailures, BatchSize ≤ 10, a maximum concurrency, no batching window (FIFO)", ev)
	}
	alarmed := map[string]bool{}
	for _, r := range res {
		if r["Type"] == "AWS::CloudWatch::Alarm" {
			p := props(r)
			for _, d := range asList(p["Dimensions"]) {
				alarmed[fmt.Sprint(p["MetricName"], " ", asMap(d)["Value"])] = true
			}
		}
	}
	for _, id := range tpl.Functions() {
		for _, m := range []string{"Errors", "Throttles"} {
			if !alarmed[fmt.Sprint(m, " ", ref(id))] {
				t.Errorf("no %s alarm on %s", m, id)
			}
		}
	}
	if !alarmed[fmt.Sprint("ApproximateNumberOfMessagesVisible ", getAtt("ExtractionDeadLetterQueue", "QueueName"))] {
		t.Error("no alarm on the DLQ depth")
	}
	for _, o := range []string{"ApiUrl", "QueueUrl", "DeadLetterQueueUrl", "TableName"} {
		if get(tpl, "Outputs", o) == nil {
			t.Errorf("no output %s", o)
		}
	}
}

// sqsResource returns the resource the extractor's role may use action
// on: sending to the idle queue only (its delayed copies), receiving from
// the extraction queue and the idle queue.
func sqsResource(action string) any {
	if action == "sqs:SendMessage" {
		return getAtt("IdleQueue", "Arn")
	}
	return []any{getAtt("ExtractionQueue", "Arn"), getAtt("IdleQueue", "Arn")}
}

// setupEnv returns the values of setup's Env* constants, read from its
// source so that a new variable counts without a change here.
func setupEnv(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, name := range []string{"setup.go", "retention.go", "page.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(httpapitest.Root(t), "functions", "setup", name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		envConstants(f, out)
	}
	if len(out) == 0 {
		t.Fatal("found no Env constant in functions/setup")
	}
	return out
}

// envConstants adds to out the values of f's Env* constants.
func envConstants(f *ast.File, out map[string]bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, name := range vs.Names {
				if strings.HasPrefix(name.Name, "Env") && i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						out[v] = true
					}
				}
			}
		}
		return true
	})
}

func TestEnvironmentIsSetups(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	known := setupEnv(t)
	check := func(where string, vars any) {
		m, _ := vars.(map[string]any)
		for name := range m {
			if !known[name] {
				t.Errorf("%s sets %s, which functions/setup does not read", where, name)
			}
		}
	}
	check("Globals", get(tpl, "Globals", "Function", "Environment", "Variables"))
	// The extractor's own settings (the idle read) and the import route's
	// (its queue) are read by their packages, not by setup.
	ownFile := map[string]string{"ExtractorFunction": filepath.Join("extractor", "idle.go"), "ImportsFunction": filepath.Join("imports", "main.go")}
	for _, id := range tpl.Functions() {
		if file := ownFile[id]; file != "" {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(httpapitest.Root(t), "functions", file), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			own := maps.Clone(known)
			envConstants(f, own)
			for name := range get(props(tpl.Resources()[id]), "Environment", "Variables").(map[string]any) {
				if !own[name] {
					t.Errorf("%s sets %s, which neither functions/setup nor functions/%s reads", id, name, filepath.Dir(file))
				}
			}
			continue
		}
		check(id, get(props(tpl.Resources()[id]), "Environment", "Variables"))
	}
	if get(tpl, "Globals", "Function", "Environment", "Variables", "TABLE_NAME") == nil {
		t.Error("TABLE_NAME is not set")
	}
}

func TestCfnLint(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		testenv.Need(t, "cfn-lint is not on PATH: make setup installs it")
	}
	// With the informational checks: I3011 wants every stateful resource
	// to say what happens to it on delete and replace.
	out, err := exec.Command(bin, "--include-checks", "I", "--", filepath.Join(httpapitest.Root(t), "template.yaml")).CombinedOutput()
	if err != nil {
		t.Errorf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}

// ---- The template, deployed on paper ------------------------------------
//
// The tests below resolve template.yaml with internal/samtemplate, the
// reader the local stack runs, for one set of parameter values and one
// Region; Template.Check says whether CloudFormation would accept them
// (the parameters' constraints and the Rules). An intrinsic function the
// reader does not evaluate fails them, naming it.

const testAccount = "123456789012"

// requiredParams are values of the parameters without a default: none,
// the template deploys with its defaults (the stack's own identity).
var requiredParams = map[string]string{}

// externalIssuer are the parameters of a stack that takes an existing
// issuer's tokens instead of making its own identity.
var externalIssuer = map[string]string{
	"JwtIssuer":   "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_EXAMPLE",
	"JwtAudience": "usermemory-api,gateway",
}

// stackUUID is the last part of the test stack's ID, a UUID as in a real
// stack ID.
const stackUUID = "0f5b7c40-3bb5-11f0-9a4b-0a1b2c3d4e5f"

// deployment returns the deployment of template.yaml as the stack
// usermemory in region, with the parameters' defaults overridden by
// requiredParams and params.
func deployment(region string, params map[string]string) samtemplate.Options {
	p := maps.Clone(requiredParams)
	maps.Copy(p, params)
	return samtemplate.Options{Region: region, AccountID: testAccount, StackName: "usermemory",
		StackID: "arn:aws:cloudformation:" + region + ":" + testAccount + ":stack/usermemory/" + stackUUID, Parameters: p}
}

// loadStackTemplate reads template.yaml with internal/samtemplate.
func loadStackTemplate(t *testing.T) *samtemplate.Template {
	t.Helper()
	tmpl, err := samtemplate.Load(filepath.Join(httpapitest.Root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// resolve evaluates tmpl for o.
func resolve(t *testing.T, tmpl *samtemplate.Template, o samtemplate.Options) *samtemplate.App {
	t.Helper()
	app, err := tmpl.Resolve(o)
	if err != nil {
		t.Fatalf("template.yaml in %s with %v: %v", o.Region, o.Parameters, err)
	}
	return app
}

// extractorEnv returns the extractor's environment, Globals merged,
// evaluated.
func extractorEnv(t *testing.T, app *samtemplate.App) map[string]string {
	t.Helper()
	f := app.Functions["ExtractorFunction"]
	if f == nil {
		t.Fatal("no ExtractorFunction")
	}
	return f.Env
}

// startAll returns nil when every function of app starts with its
// environment (setup.FromEnv), or the first refusal.
func startAll(app *samtemplate.App) error {
	for _, id := range slices.Sorted(maps.Keys(app.Functions)) {
		env := app.Functions[id].Env
		if _, err := setup.FromEnv(func(k string) string { return env[k] }); err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
	}
	return nil
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func toFloat(v any) float64 { f, _ := strconv.ParseFloat(fmt.Sprint(v), 64); return f }

// TestCapsTheTemplateAcceptsStartTheFunctions holds the template's bounds
// to memory.Config.Validate: for every combination of the Number
// parameters that feed the functions' environment, at and around their
// bounds and well past them, a combination the template accepts (its
// MinValue, MaxValue, AllowedValues and Rules) must start the functions
// (setup.FromEnv, which runs Validate on the evaluated environment).
// Before, MaxFacts 500 and MaxFactChars 2000 passed the template and every
// function exited at cold start.
func TestCapsTheTemplateAcceptsStartTheFunctions(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	tmpl := loadStackTemplate(t)
	params := asMap(tpl["Parameters"])
	var names []string
	for _, v := range asMap(get(tpl, "Globals", "Function", "Environment", "Variables")) {
		if r, ok := asMap(v)["Ref"].(string); ok && asMap(params[r])["Type"] == "Number" {
			names = append(names, r)
		}
	}
	sort.Strings(names)
	if !slices.Contains(names, "MaxFacts") || !slices.Contains(names, "MaxFactChars") {
		t.Fatalf("the Number parameters of the environment are %q: MaxFacts and MaxFactChars are missing", names)
	}
	probes := map[string][]int{}
	for _, n := range names {
		p := asMap(params[n])
		def := int(toFloat(p["Default"]))
		set := map[int]bool{def: true, 10 * max(def, 1): true}
		for _, k := range []string{"MinValue", "MaxValue"} {
			if v, ok := p[k]; ok {
				b := int(toFloat(v))
				set[b], set[b-1], set[b+1], set[2*b] = true, true, true, true
			}
		}
		probes[n] = slices.Sorted(maps.Keys(set))
	}
	accepted, refused, combos, failed := 0, 0, 0, 0
	var walk func(i int, vals map[string]string)
	walk = func(i int, vals map[string]string) {
		if i < len(names) {
			for _, v := range probes[names[i]] {
				vals[names[i]] = strconv.Itoa(v)
				walk(i+1, vals)
			}
			return
		}
		combos++
		o := deployment("us-east-1", vals)
		if err := tmpl.Check(o); err != nil {
			refused++
			return
		}
		accepted++
		if err := startAll(resolve(t, tmpl, o)); err != nil {
			if failed++; failed <= 5 {
				t.Errorf("the template accepts %v but the functions refuse to start: %v", vals, err)
			}
		}
	}
	walk(0, map[string]string{})
	if failed > 5 {
		t.Errorf("… and %d more combinations the template accepts and the functions refuse", failed-5)
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("%d combinations accepted, %d refused: the probes test nothing", accepted, refused)
	}
	t.Logf("%d combinations of %q: %d accepted (all start the functions), %d refused", combos, names, accepted, refused)

	// The corner of the issue: refused by both.
	bad := map[string]string{"MaxFacts": "500", "MaxFactChars": "2000"}
	if tmpl.Check(deployment("us-east-1", bad)) == nil {
		t.Errorf("the template accepts %v", bad)
	}
	if startAll(resolve(t, tmpl, deployment("us-east-1", bad))) == nil {
		t.Errorf("setup.FromEnv accepts %v: the corner of the test is gone", bad)
	}
	// The margin of the largest record the template allows.
	c := memory.Config{MaxFacts: int(toFloat(asMap(params["MaxFacts"])["MaxValue"])), MaxFactChars: int(toFloat(asMap(params["MaxFactChars"])["MaxValue"]))}.WithDefaults()
	t.Logf("largest never-trimmed part of a record the template allows (MaxRecordBytes): %d bytes of a budget of %d (%.0f%%)", c.MaxRecordBytes(), memory.ItemBudget, 100*float64(c.MaxRecordBytes())/memory.ItemBudget)
}

// iamMatch reports whether an IAM resource pattern (with * and ?) matches
// arn.
func iamMatch(pattern, arn string) bool {
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	return regexp.MustCompile(re).MatchString(arn)
}

// modelResources returns the bedrock:InvokeModel resources of the
// extractor's role, evaluated.
func modelResources(t *testing.T, tpl httpapitest.SAMTemplate, app *samtemplate.App) []string {
	t.Helper()
	role := fmt.Sprint(asList(get(props(tpl.Resources()["ExtractorFunction"]), "Role", "Fn::GetAtt"))[0])
	var out []string
	for _, p := range asList(app.Properties[role]["Policies"]) {
		for _, st := range asList(get(asMap(p), "PolicyDocument", "Statement")) {
			st := asMap(st)
			if !slices.ContainsFunc(asList(st["Action"]), func(a any) bool { return a == "bedrock:InvokeModel" }) {
				continue
			}
			for _, x := range asList(st["Resource"]) {
				out = append(out, fmt.Sprint(x))
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("the extractor's role %s allows bedrock:InvokeModel on nothing", role)
	}
	return out
}

// TestModelOfTheRegion deploys the template, on paper, in every Region
// the template knows and in some it does not: the default model is the
// cross-Region profile of the Region's geography, the IAM policy covers it
// and the foundation model in every Region it routes to, and a Region
// without a profile is refused at deploy time unless CheapModelId is set.
func TestModelOfTheRegion(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	tmpl := loadStackTemplate(t)
	geo := asMap(asMap(tpl["Mappings"])["InferenceGeography"])
	if len(geo) == 0 {
		t.Fatal("no InferenceGeography mapping")
	}
	prefixOf := map[string]string{"us": "us", "eu": "eu", "ap": "apac"}
	foundation := fmt.Sprint(asMap(asMap(tpl["Parameters"])["CheapFoundationModelId"])["Default"])
	destinations := []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1", "ap-southeast-2", ""}
	for _, region := range slices.Sorted(maps.Keys(geo)) {
		o := deployment(region, nil)
		if err := tmpl.Check(o); err != nil {
			t.Errorf("%s: the template refuses the defaults: %v", region, err)
			continue
		}
		app := resolve(t, tmpl, o)
		model := extractorEnv(t, app)["CHEAP_MODEL_ID"]
		label, _, _ := strings.Cut(region, "-")
		if want := prefixOf[label] + "." + foundation; model != want {
			t.Errorf("%s: CHEAP_MODEL_ID %q, want %q", region, model, want)
		}
		resources := modelResources(t, tpl, app)
		profile := fmt.Sprintf("arn:aws:bedrock:%s:%s:inference-profile/%s", region, testAccount, model)
		if !slices.ContainsFunc(resources, func(p string) bool { return iamMatch(p, profile) }) {
			t.Errorf("%s: IAM %q does not cover %s", region, resources, profile)
		}
		for _, d := range destinations {
			arn := fmt.Sprintf("arn:aws:bedrock:%s::foundation-model/%s", d, foundation)
			if !slices.ContainsFunc(resources, func(p string) bool { return iamMatch(p, arn) }) {
				t.Errorf("%s: IAM %q does not cover %s", region, resources, arn)
			}
		}
		if slices.ContainsFunc(resources, func(p string) bool {
			return iamMatch(p, "arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-text-express-v1")
		}) {
			t.Errorf("%s: IAM %q covers models other than the configured one", region, resources)
		}
	}

	for _, region := range []string{"sa-east-1", "ca-central-1", "me-central-1", "af-south-1"} {
		if _, known := geo[region]; known {
			continue
		}
		err := tmpl.Check(deployment(region, nil))
		if err == nil || !strings.Contains(err.Error(), "CheapModelId") {
			t.Errorf("%s: defaults accepted (%v), want a refusal that says to set CheapModelId", region, err)
		}
		// A global profile, set by hand: accepted, called, and allowed.
		o := deployment(region, map[string]string{"CheapModelId": "global.amazon.nova-2-lite-v1:0", "CheapFoundationModelId": "amazon.nova-2-lite-v1:0"})
		if err := tmpl.Check(o); err != nil {
			t.Errorf("%s with a global profile: %v", region, err)
			continue
		}
		app := resolve(t, tmpl, o)
		if m := extractorEnv(t, app)["CHEAP_MODEL_ID"]; m != "global.amazon.nova-2-lite-v1:0" {
			t.Errorf("%s: CHEAP_MODEL_ID %q, want the one set", region, m)
		}
		resources := modelResources(t, tpl, app)
		for _, arn := range []string{
			fmt.Sprintf("arn:aws:bedrock:%s:%s:inference-profile/global.amazon.nova-2-lite-v1:0", region, testAccount),
			"arn:aws:bedrock:::foundation-model/amazon.nova-2-lite-v1:0",
			"arn:aws:bedrock:eu-west-1::foundation-model/amazon.nova-2-lite-v1:0",
		} {
			if !slices.ContainsFunc(resources, func(p string) bool { return iamMatch(p, arn) }) {
				t.Errorf("%s: IAM %q does not cover %s", region, resources, arn)
			}
		}
	}

	// The rule's Regions are the mapping's.
	var ruleRegions []string
	for _, r := range asMap(tpl["Rules"]) {
		for _, a := range asList(asMap(r)["Assertions"]) {
			if c, ok := asMap(asMap(a)["Assert"])["Fn::Contains"].([]any); ok && fmt.Sprint(c[1]) == fmt.Sprint(ref("AWS::Region")) {
				for _, x := range asList(c[0]) {
					ruleRegions = append(ruleRegions, fmt.Sprint(x))
				}
			}
		}
	}
	if sort.Strings(ruleRegions); !slices.Equal(ruleRegions, slices.Sorted(maps.Keys(geo))) {
		t.Errorf("the rule's Regions %q are not the mapping's %q", ruleRegions, slices.Sorted(maps.Keys(geo)))
	}
	for _, id := range []string{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-micro-v1:0", "us amazon"} {
		if tmpl.Check(deployment("us-east-1", map[string]string{"CheapModelId": id})) == nil {
			t.Errorf("CheapModelId %q accepted: the IAM policy is built from an ID", id)
		}
	}
}

// TestAlarmTopicTakesCloudWatch checks that CloudWatch can publish to the
// alarm topic: no AWS managed key (alias/aws/sns), or a customer managed
// key of this template whose policy lets cloudwatch.amazonaws.com use it.
func TestAlarmTopicTakesCloudWatch(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	res := tpl.Resources()
	topic := props(res["AlarmTopic"])
	if key, ok := topic["KmsMasterKeyId"]; ok {
		id := ""
		if r, ok := asMap(key)["Ref"].(string); ok {
			id = r
		} else if att, ok := asMap(key)["Fn::GetAtt"].([]any); ok {
			id = fmt.Sprint(att[0])
		}
		if res[id]["Type"] != "AWS::KMS::Key" {
			t.Fatalf("AlarmTopic's key %v is not a customer managed key of the template: CloudWatch cannot use an AWS managed key", key)
		}
		ok := false
		for _, st := range asList(get(props(res[id]), "KeyPolicy", "Statement")) {
			st := asMap(st)
			acts := fmt.Sprint(st["Action"])
			if fmt.Sprint(get(st, "Principal", "Service")) == "cloudwatch.amazonaws.com" && strings.Contains(acts, "kms:Decrypt") && strings.Contains(acts, "kms:GenerateDataKey") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("the key %s does not let cloudwatch.amazonaws.com use it", id)
		}
	}
	for id, r := range res {
		if r["Type"] == "AWS::CloudWatch::Alarm" && fmt.Sprint(props(r)["AlarmActions"]) != fmt.Sprint([]any{ref("AlarmTopic")}) {
			t.Errorf("%s: alarm actions %v, want the AlarmTopic", id, props(r)["AlarmActions"])
		}
	}
}

// extractorMetrics reads, from the extractor's source, its CloudWatch
// namespace (DefaultNamespace), the metric names and the dimension sets
// of its EMF lines, and the outcomes it reports.
func extractorMetrics(t *testing.T) (namespace string, metrics map[string]bool, dimensionSets [][]string, outcomes map[string]bool) {
	t.Helper()
	dir := filepath.Join(httpapitest.Root(t), "functions", "extractor")
	metrics, outcomes = map[string]bool{}, map[string]bool{}
	for v := range sourcetest.StringConsts(t, dir, func(_ *ast.ValueSpec, name string) bool { return name == "DefaultNamespace" }) {
		namespace = v
	}
	for v := range sourcetest.Outcomes(t, httpapitest.Root(t)) {
		outcomes[v] = true
	}
	for _, f := range sourcetest.Files(t, dir, 0) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit: // []metric{{"Records", "Count", …}, …}
				if at, ok := n.Type.(*ast.ArrayType); ok && fmt.Sprint(at.Elt) == "metric" {
					for _, e := range n.Elts {
						if row, ok := e.(*ast.CompositeLit); ok && len(row.Elts) > 0 {
							if v, ok := row.Elts[0].(*ast.BasicLit); ok {
								name, _ := strconv.Unquote(v.Value)
								metrics[name] = true
							}
						}
					}
				}
			case *ast.CallExpr: // h.directive(line, "outcome", …): one dimension
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "directive" && len(n.Args) > 1 {
					if v, ok := n.Args[1].(*ast.BasicLit); ok {
						dim, _ := strconv.Unquote(v.Value)
						dimensionSets = append(dimensionSets, []string{dim})
					}
				}
			case *ast.KeyValueExpr:
				key, _ := n.Key.(*ast.BasicLit)
				if key == nil {
					return true
				}
				k, _ := strconv.Unquote(key.Value)
				switch k {
				case "Name":
					if v, ok := n.Value.(*ast.BasicLit); ok {
						name, _ := strconv.Unquote(v.Value)
						metrics[name] = true
					}
				case "Dimensions":
					if outer, ok := n.Value.(*ast.CompositeLit); ok {
						for _, e := range outer.Elts {
							var set []string
							for _, d := range e.(*ast.CompositeLit).Elts {
								if lit, ok := d.(*ast.BasicLit); ok {
									s, _ := strconv.Unquote(lit.Value)
									set = append(set, s)
								}
							}
							if len(set) == 0 {
								continue // a dimension named by a variable: read at the call
							}
							sort.Strings(set)
							dimensionSets = append(dimensionSets, set)
						}
					}
				}
			}
			return true
		})
	}
	if namespace == "" || !metrics["Records"] || len(dimensionSets) == 0 {
		t.Fatalf("read namespace %q, metrics %v, dimension sets %v from functions/extractor: the reader is out of date", namespace, metrics, dimensionSets)
	}
	return namespace, metrics, dimensionSets, outcomes
}

// TestOutcomeAlarmsWatchRealMetrics checks that the permanent failures the
// extractor acknowledges (model_failed, bad_answer) and malformed messages
// each have an alarm, on a metric, a dimension set and an outcome the
// extractor really writes, and that docs/extractor.md names them.
func TestOutcomeAlarmsWatchRealMetrics(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	namespace, metrics, sets, outcomes := extractorMetrics(t)
	if !slices.ContainsFunc(sets, func(s []string) bool { return slices.Equal(s, []string{"outcome"}) }) {
		t.Fatalf("functions/extractor writes the dimension sets %q, none of them [outcome], the alarms' set", sets)
	}
	doc, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", "extractor.md"))
	if err != nil {
		t.Fatal(err)
	}
	watched := map[string]bool{}
	for id, r := range tpl.Resources() {
		if r["Type"] != "AWS::CloudWatch::Alarm" {
			continue
		}
		for _, p := range alarmMetrics(props(r)) {
			if p["Namespace"] != namespace {
				continue
			}
			if !metrics[fmt.Sprint(p["MetricName"])] {
				t.Errorf("%s: metric %v is not one the extractor writes (%v)", id, p["MetricName"], slices.Sorted(maps.Keys(metrics)))
			}
			var names []string
			for _, d := range asList(p["Dimensions"]) {
				d := asMap(d)
				names = append(names, fmt.Sprint(d["Name"]))
				if d["Name"] == "outcome" {
					if !outcomes[fmt.Sprint(d["Value"])] {
						t.Errorf("%s: outcome %v is not one the extractor reports", id, d["Value"])
					}
					watched[fmt.Sprint(d["Value"])] = true
				}
			}
			if sort.Strings(names); !slices.ContainsFunc(sets, func(s []string) bool { return slices.Equal(s, names) }) {
				t.Errorf("%s: dimensions %q are not a set the extractor writes (%q): the alarm would watch nothing", id, names, sets)
			}
			if !strings.Contains(string(doc), id) {
				t.Errorf("docs/extractor.md does not name the alarm %s", id)
			}
		}
	}
	for _, o := range []string{string(memory.OutcomeModelFailed), string(memory.OutcomeBadAnswer), "malformed"} {
		if !watched[o] {
			t.Errorf("no alarm watches Records{outcome=%s}", o)
		}
	}
}

// TestStatefulResourcesAreKept checks that the table and both queues
// outlive the stack and a replacement (cfn-lint I3011), and that the FIFO
// queues' names stay valid (at most 80 characters with .fifo) for the
// longest stack name CloudFormation allows (128 characters).
func TestStatefulResourcesAreKept(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	res := tpl.Resources()
	for _, id := range []string{"Table", "ExtractionQueue", "ExtractionDeadLetterQueue"} {
		if res[id]["DeletionPolicy"] != "Retain" || res[id]["UpdateReplacePolicy"] != "Retain" {
			t.Errorf("%s: DeletionPolicy %v, UpdateReplacePolicy %v; want Retain for both", id, res[id]["DeletionPolicy"], res[id]["UpdateReplacePolicy"])
		}
	}
	o := deployment("ap-southeast-2", nil)
	o.StackName = strings.Repeat("a-long-stack-name-", 8)[:128]
	o.StackID = "arn:aws:cloudformation:ap-southeast-2:" + testAccount + ":stack/" + o.StackName + "/" + stackUUID
	app := resolve(t, loadStackTemplate(t), o)
	names := map[string]bool{}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,75}\.fifo$`)
	// A standard queue (the idle read's) has no .fifo: up to 80 characters.
	standard := regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	for id, r := range res {
		if r["Type"] != "AWS::SQS::Queue" {
			continue
		}
		if props(r)["QueueName"] == nil {
			t.Errorf("%s: no QueueName: CloudFormation's generated FIFO name can pass 80 characters for a long stack name", id)
			continue
		}
		name := app.Queues[id].Name
		if props(r)["FifoQueue"] != true {
			if !standard.MatchString(name) || names[name] {
				t.Errorf("%s: name %q (%d characters): want a unique name of at most 80", id, name, len(name))
			}
			names[name] = true
			continue
		}
		if !valid.MatchString(name) || names[name] {
			t.Errorf("%s: name %q (%d characters) for a %d-character stack name: want a unique name of at most 80 with .fifo", id, name, len(name), len(o.StackName))
		}
		names[name] = true
	}
}

// TestFencesOutliveEveryMessage checks that an erasure fence
// (ERASURE_FENCE_DAYS) and a removal's tombstone
// (memory.DeletionFenceLifetime) last longer than a message can live: its
// retention in the extraction queue plus its retention in the dead-letter
// queue, which for a FIFO queue starts again when the message moves there
// (Amazon SQS Developer Guide, "Setting-up dead-letter queue retention").
// The dead-letter queue's retention is a parameter: the fence must outlive
// its largest value.
func TestFencesOutliveEveryMessage(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	longest := fmt.Sprint(get(tpl, "Parameters", "DeadLetterRetentionSeconds", "MaxValue"))
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", map[string]string{"DeadLetterRetentionSeconds": longest}))
	life := time.Duration(number(t, app.Queues["ExtractionQueue"].Attributes["MessageRetentionPeriod"])+
		number(t, app.Queues["ExtractionDeadLetterQueue"].Attributes["MessageRetentionPeriod"])) * time.Second
	if life < 14*24*time.Hour {
		t.Fatalf("a message lives %v with DeadLetterRetentionSeconds at its MaxValue %s: the parameter is not the queue's", life, longest)
	}
	for _, id := range slices.Sorted(maps.Keys(app.Functions)) {
		days, err := strconv.Atoi(app.Functions[id].Env[setup.EnvFenceDays])
		if err != nil {
			t.Fatalf("%s: %s: %v", id, setup.EnvFenceDays, err)
		}
		if fence := time.Duration(days) * 24 * time.Hour; fence <= life {
			t.Errorf("%s: %s = %d days: a message can live %v (queue and dead-letter queue), longer than the erasure fence", id, setup.EnvFenceDays, days, life)
		}
	}
	if memory.DeletionFenceLifetime <= life {
		t.Errorf("memory.DeletionFenceLifetime = %v: a message can live %v, longer than a tombstone", memory.DeletionFenceLifetime, life)
	}
	if setup.DefaultFenceDays*24*time.Hour != memory.DeletionFenceLifetime {
		t.Errorf("setup.DefaultFenceDays = %d days, memory.DeletionFenceLifetime = %v: want one lifetime", setup.DefaultFenceDays, memory.DeletionFenceLifetime)
	}
}

// TestExtractorTimeoutHoldsAnAttempt checks that one model attempt fits in
// the extractor's timeout after the handler's safety margin (15 s): a hung
// call is cut by the attempt timeout, not by Lambda.
func TestExtractorTimeoutHoldsAnAttempt(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	timeout := number(t, props(tpl.Resources()["ExtractorFunction"])["Timeout"])
	attempt := setup.DefaultModelAttemptSecs
	if v, ok := asMap(get(props(tpl.Resources()["ExtractorFunction"]), "Environment", "Variables"))[setup.EnvModelAttemptSecs]; ok {
		attempt = number(t, v)
	}
	const safety = 15
	if attempt+safety >= timeout {
		t.Errorf("a model attempt of %d s and the safety margin of %d s do not fit in the extractor's timeout of %d s", attempt, safety, timeout)
	}
}

// TestSamconfigDeploys evaluates the template with samconfig.toml's
// parameter overrides in its Region: CloudFormation accepts them and the
// functions start.
func TestSamconfigDeploys(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	raw, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	region := regexp.MustCompile(`(?m)^region = "([^"]+)"`).FindStringSubmatch(string(raw))
	block := regexp.MustCompile(`(?s)parameter_overrides = \[(.*?)\]`).FindStringSubmatch(string(raw))
	if region == nil || block == nil {
		t.Fatal("samconfig.toml has no deploy region or parameter_overrides")
	}
	params := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*"([A-Za-z]+)=([^"]*)"`).FindAllStringSubmatch(block[1], -1) {
		if _, ok := asMap(tpl["Parameters"])[m[1]]; !ok {
			t.Errorf("samconfig.toml overrides %s, which the template does not have", m[1])
		}
		params[m[1]] = m[2]
	}
	tmpl := loadStackTemplate(t)
	o := deployment(region[1], params)
	if err := tmpl.Check(o); err != nil {
		t.Fatalf("samconfig.toml's parameters in %s: %v", region[1], err)
	}
	app := resolve(t, tmpl, o)
	if err := startAll(app); err != nil {
		t.Errorf("samconfig.toml's parameters: the functions refuse to start: %v", err)
	}
	t.Logf("%s: CHEAP_MODEL_ID=%s", region[1], extractorEnv(t, app)["CHEAP_MODEL_ID"])
}

// runbook is docs/runbook.md read for the test: the alarms its entries
// name (### headings, several IDs separated by commas), and its table of
// outcomes: the alarms of each (backquoted IDs) and the reason when none.
type runbook struct {
	entries map[string]bool
	alarms  map[string][]string
	reasons map[string]string
}

var (
	runbookRow   = regexp.MustCompile("^\\| `([a-z_]+)` \\|([^|]*)\\|([^|]*)\\|$")
	backquoteIDs = regexp.MustCompile("`([A-Za-z0-9]+)`")
)

func readRunbook(t *testing.T) runbook {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	rb := runbook{entries: map[string]bool{}, alarms: map[string][]string{}, reasons: map[string]string{}}
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			for _, id := range strings.Split(h, ",") {
				rb.entries[strings.TrimSpace(id)] = true
			}
		}
		if m := runbookRow.FindStringSubmatch(line); m != nil {
			for _, id := range backquoteIDs.FindAllStringSubmatch(m[2], -1) {
				rb.alarms[m[1]] = append(rb.alarms[m[1]], id[1])
			}
			rb.reasons[m[1]] = strings.TrimSpace(m[3])
		}
	}
	return rb
}

// TestEveryOutcomeReachesAPerson holds "nothing stops in silence": every
// outcome the extractor reports (memory's Outcome constants and its own,
// read from the code) has an alarm of the template in docs/runbook.md's
// table, or a written reason why none; every alarm has a runbook entry
// and publishes to the topic, which a parameter can subscribe a person to.
func TestEveryOutcomeReachesAPerson(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	rb := readRunbook(t)
	_, _, _, outcomes := extractorMetrics(t)
	alarms := map[string]map[string]any{}
	for id, r := range tpl.Resources() {
		if r["Type"] == "AWS::CloudWatch::Alarm" {
			alarms[id] = props(r)
		}
	}
	for _, o := range slices.Sorted(maps.Keys(outcomes)) {
		named, reason := rb.alarms[o], rb.reasons[o]
		if _, listed := rb.reasons[o]; !listed {
			t.Errorf("outcome %s is not in docs/runbook.md's table: give it an alarm or a reason why none", o)
			continue
		}
		if len(named) == 0 && (reason == "" || reason == "—") {
			t.Errorf("outcome %s has neither an alarm nor a reason in docs/runbook.md", o)
		}
		for _, id := range named {
			if alarms[id] == nil {
				t.Errorf("outcome %s: docs/runbook.md names %s, not an alarm of the template", o, id)
			}
		}
	}
	for o := range rb.reasons {
		if !outcomes[o] {
			t.Errorf("docs/runbook.md lists outcome %s, which the code does not report", o)
		}
	}
	for id, p := range alarms {
		if !rb.entries[id] {
			t.Errorf("alarm %s has no entry (### %s) in docs/runbook.md", id, id)
		}
		for _, d := range asList(p["Dimensions"]) {
			if o := asMap(d); o["Name"] == "outcome" && !slices.Contains(rb.alarms[fmt.Sprint(o["Value"])], id) {
				t.Errorf("%s watches outcome %v, but docs/runbook.md's table does not name it there", id, o["Value"])
			}
		}
	}
	for id := range rb.entries {
		if alarms[id] == nil {
			t.Errorf("docs/runbook.md has an entry for %s, not an alarm of the template", id)
		}
	}
	for _, id := range []string{"ExtractionQueueAgeAlarm", "ExtractorRefusedAlarm", "ApiServerErrorsAlarm", "ApiClientErrorsAlarm", "ApiLatencyAlarm", "TableThrottlesAlarm"} {
		if alarms[id] == nil {
			t.Errorf("no %s", id)
		}
	}
	sub := props(tpl.Resources()["AlarmEmailSubscription"])
	if fmt.Sprint(sub["Endpoint"]) != fmt.Sprint(ref("AlarmEmail")) || fmt.Sprint(sub["TopicArn"]) != fmt.Sprint(ref("AlarmTopic")) {
		t.Errorf("AlarmEmailSubscription %v: want the AlarmEmail parameter subscribed to AlarmTopic", sub)
	}
	tmpl := loadStackTemplate(t)
	for email, subscribed := range map[string]bool{"": false, "ops@example.com": true} {
		o := deployment("us-east-1", map[string]string{"AlarmEmail": email})
		if err := tmpl.Check(o); err != nil {
			t.Errorf("AlarmEmail %q refused: %v", email, err)
			continue
		}
		if _, got := resolve(t, tmpl, o).Properties["AlarmEmailSubscription"]; got != subscribed {
			t.Errorf("AlarmEmail %q: subscription made = %v, want %v", email, got, subscribed)
		}
	}
	if tmpl.Check(deployment("us-east-1", map[string]string{"AlarmEmail": "not an address"})) == nil {
		t.Error(`AlarmEmail "not an address" accepted`)
	}
}

// TestQueueAgeAlarmIsPastRetries holds the queue-age alarm's default
// threshold to the queue: a message that fails every time ages for the
// visibility timeout times maxReceiveCount before the dead-letter queue
// takes it, and holds its FIFO group meanwhile, so the message behind it
// ages one visibility timeout more; a lower threshold would call retries
// a backlog.
func TestQueueAgeAlarmIsPastRetries(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	tmpl := loadStackTemplate(t)
	app := resolve(t, tmpl, deployment("us-east-1", nil))
	q := app.Properties["ExtractionQueue"]
	visibility := toFloat(q["VisibilityTimeout"])
	retries := visibility * toFloat(get(q, "RedrivePolicy", "maxReceiveCount"))
	alarm := app.Properties["ExtractionQueueAgeAlarm"]
	// The message behind one that fails every time in its FIFO group waits
	// for those retries, then needs one visibility timeout of its own.
	if th := toFloat(alarm["Threshold"]); th < retries+visibility || retries == 0 {
		t.Errorf("ExtractionQueueAgeAlarm threshold %v s < visibility × (receives + 1) = %v s", th, retries+visibility)
	}
	if fmt.Sprint(props(tpl.Resources()["ExtractionQueueAgeAlarm"])["Threshold"]) != fmt.Sprint(ref("ExtractionDelayAlarmSeconds")) {
		t.Error("ExtractionQueueAgeAlarm's threshold is not the parameter ExtractionDelayAlarmSeconds")
	}
}

// TestLimitsAreParameters checks that the route throttles and the fact
// API's reserved concurrency follow their parameters: reads take the
// default route settings, every editing route the edit limits, and 0
// reserves no concurrency.
func TestLimitsAreParameters(t *testing.T) {
	tmpl := loadStackTemplate(t)
	app := resolve(t, tmpl, deployment("us-east-1", map[string]string{"ReadRateLimit": "700", "EditRateLimit": "7", "EditReservedConcurrency": "0"}))
	api := app.Properties["HttpApi"]
	if got := toFloat(get(api, "DefaultRouteSettings", "ThrottlingRateLimit")); got != 700 {
		t.Errorf("default route rate %v, want ReadRateLimit 700", got)
	}
	routes := asMap(api["RouteSettings"])
	for _, r := range app.APIs["HttpApi"].Routes {
		rs, edit := routes[r.Key()], r.Method != "GET"
		if edit != (rs != nil) {
			t.Errorf("route %s: settings %v; want its own only when it edits", r.Key(), rs)
		}
		if edit && toFloat(asMap(rs)["ThrottlingRateLimit"]) != 7 {
			t.Errorf("route %s: rate %v, want EditRateLimit 7", r.Key(), asMap(rs)["ThrottlingRateLimit"])
		}
	}
	reads := 0
	for _, r := range app.APIs["HttpApi"].Routes {
		if r.Method == "GET" {
			reads++
		}
	}
	if len(routes) != len(app.APIs["HttpApi"].Routes)-reads {
		t.Errorf("route settings %v name routes the API does not have", slices.Sorted(maps.Keys(routes)))
	}
	// The defaults reserve nothing (a new account's quota may not allow
	// it); each parameter reserves for its functions when set.
	for id, f := range resolve(t, tmpl, deployment("us-east-1", nil)).Functions {
		if f.ReservedConcurrency != 0 {
			t.Errorf("%s reserves %d with the defaults, want none", id, f.ReservedConcurrency)
		}
	}
	set := resolve(t, tmpl, deployment("us-east-1", map[string]string{"ReadReservedConcurrency": "20", "EditReservedConcurrency": "5"}))
	for id, f := range set.Functions {
		want := map[string]int{"GetFactsFunction": 20, "PutFactFunction": 5, "DeleteFactFunction": 5, "PendingFactFunction": 5, "ImportsFunction": 5,
			"ClearFactsFunction": 5, "ForgetThreadFunction": 5, "ThreadChangesFunction": 5, "EraseUserFunction": 5}[id]
		if f.ReservedConcurrency != want {
			t.Errorf("%s reserves %d with ReadReservedConcurrency 20 and EditReservedConcurrency 5, want %d", id, f.ReservedConcurrency, want)
		}
	}
}

// runbookCountRow is a row of docs/runbook.md's table of counts: the
// count's metric name, the alarms (backquoted IDs) and the reason when
// none.
var runbookCountRow = regexp.MustCompile("^\\| `([A-Z][A-Za-z]+)` \\|([^|]*)\\|([^|]*)\\|$")

// TestEveryCountReachesAPerson holds "nothing stops in silence" for the
// counts of an extraction (the int fields of memory.ExtractResult, such
// as Unsupported or Pending): each is an EMF metric of the extractor and
// a row of docs/runbook.md's table of counts, with an alarm of the
// template that watches that metric, or a written reason why none.
func TestEveryCountReachesAPerson(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	_, metrics, _, _ := extractorMetrics(t)
	b, err := os.ReadFile(filepath.Join(httpapitest.Root(t), "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // count → [alarms…, reason]
	for line := range strings.Lines(string(b)) {
		if m := runbookCountRow.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			var alarms []string
			for _, id := range backquoteIDs.FindAllStringSubmatch(m[2], -1) {
				alarms = append(alarms, id[1])
			}
			rows[m[1]] = append(alarms, strings.TrimSpace(m[3]))
		}
	}
	typ := reflect.TypeFor[memory.ExtractResult]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Int {
			continue
		}
		if !metrics[f.Name] {
			t.Errorf("count %s: functions/extractor writes no metric %s", f.Name, f.Name)
		}
		row, ok := rows[f.Name]
		if !ok {
			t.Errorf("count %s is not in docs/runbook.md's table of counts: give it an alarm or a reason why none", f.Name)
			continue
		}
		alarms, reason := row[:len(row)-1], row[len(row)-1]
		if len(alarms) == 0 && (reason == "" || reason == "—") {
			t.Errorf("count %s has neither an alarm nor a reason in docs/runbook.md", f.Name)
		}
		for _, id := range alarms {
			if !slices.Contains(watchedMetrics(tpl, id), f.Name) {
				t.Errorf("count %s: docs/runbook.md names %s, which is not an alarm of the template on the metric %s", f.Name, id, f.Name)
			}
		}
	}
}

// alarmMetrics returns the metrics an alarm's properties p watch: p
// itself for an alarm on one metric (Namespace, MetricName, Dimensions),
// each MetricStat's metric for an alarm on metric math.
func alarmMetrics(p map[string]any) []map[string]any {
	if p["Metrics"] == nil {
		return []map[string]any{p}
	}
	var out []map[string]any
	for _, q := range asList(p["Metrics"]) {
		if m := asMap(asMap(asMap(q)["MetricStat"])["Metric"]); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// watchedMetrics returns the names of the extractor's metrics that the
// alarm id of tpl watches, directly or in its metric math.
func watchedMetrics(tpl httpapitest.SAMTemplate, id string) []string {
	r := tpl.Resources()[id]
	if r == nil || r["Type"] != "AWS::CloudWatch::Alarm" {
		return nil
	}
	var out []string
	for _, m := range alarmMetrics(props(r)) {
		out = append(out, fmt.Sprint(m["MetricName"]))
	}
	return out
}

// TestPendingCategoriesPattern holds the template's AllowedPattern of
// PendingCategories to setup.PendingCategories: the template accepts every
// category of memory.Categories, all, none and lists of categories, refuses
// anything else, and nothing it accepts stops a function at cold start.
func TestPendingCategoriesPattern(t *testing.T) {
	p := asMap(asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])["PendingCategories"])
	re, err := regexp.Compile(fmt.Sprint(p["AllowedPattern"]))
	if err != nil {
		t.Fatal(err)
	}
	if p["Default"] != "all" {
		t.Errorf("PendingCategories defaults to %v, want all", p["Default"])
	}
	accept := []string{"all", "none", strings.Join(memory.Categories, ",")}
	for i, c := range memory.Categories {
		accept = append(accept, c, c+","+memory.Categories[(i+1)%len(memory.Categories)])
	}
	for _, v := range accept {
		if !re.MatchString(v) {
			t.Errorf("the template refuses PendingCategories=%q", v)
		}
		if _, err := setup.PendingCategories(v); err != nil {
			t.Errorf("the template accepts PendingCategories=%q, setup refuses it: %v", v, err)
		}
	}
	for _, v := range []string{"", "hobbies", "health,hobbies", "health,", ",health", "all,health", "health;religion"} {
		if re.MatchString(v) {
			t.Errorf("the template accepts PendingCategories=%q", v)
		}
	}
}

// TestPageRoutesArePublic: the memory page's one route is PageApi's
// $default, on an API without an authorizer, and no route of the
// fact API is the page's; PageUrl is PageApi's URL with web.Path, and
// PageApi's stage variables give the page the fact API's URL and, with the
// stack's own identity, the page's client.
func TestPageRoutesArePublic(t *testing.T) {
	tpl := httpapitest.LoadSAMTemplate(t)
	if get(props(tpl.Resources()["PageApi"]), "Auth") != nil {
		t.Error("PageApi has an Auth section: the page's routes must need no token")
	}
	tmpl := loadStackTemplate(t)
	app := resolve(t, tmpl, deployment("eu-west-1", map[string]string{"JwtIssuer": ""}))
	if len(app.APIs["PageApi"].Routes) == 0 || len(app.APIs["PageApi"].Authorizers) != 0 {
		t.Fatalf("PageApi: %d routes, %d authorizers; want the page's routes and no authorizer", len(app.APIs["PageApi"].Routes), len(app.APIs["PageApi"].Authorizers))
	}
	// One route, $default: /app and /app/ reach the page whatever API
	// Gateway does with a trailing slash (docs/decisions.md).
	if rs := app.APIs["PageApi"].Routes; len(rs) != 1 || rs[0].Key() != "$default" || rs[0].Function != "PageFunction" || len(rs[0].Scopes) != 0 {
		t.Errorf("PageApi routes %+v: want one, $default, to PageFunction, no scope", rs)
	}
	for _, r := range app.APIs["HttpApi"].Routes {
		if r.Function == "PageFunction" {
			t.Errorf("the fact API routes %s to the page", r.Key())
		}
	}
	pageURL := fmt.Sprint(get(tpl, "Outputs", "PageUrl", "Value", "Fn::Sub"))
	if pageURL != "https://${PageApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}"+web.Path {
		t.Errorf("PageUrl %s, want PageApi's URL with %s", pageURL, web.Path)
	}
	// The page signs in with its own address as redirect_uri
	// (web/static/signin.js, pageURL), which the client must list exactly:
	// the callback and logout URLs are PageUrl, and /app sends to it.
	client := props(tpl.Resources()["PageClient"])
	for _, k := range []string{"CallbackURLs", "LogoutURLs"} {
		if got := asList(client[k]); len(got) != 1 || fmt.Sprint(get(got[0].(map[string]any), "Fn::Sub")) != pageURL {
			t.Errorf("PageClient %s %v, want only PageUrl %s", k, got, pageURL)
		}
	}
	vars, _ := get(props(tpl.Resources()["PageApi"]), "StageVariables").(map[string]any)
	api := get(tpl, "Outputs", "ApiUrl", "Value")
	if got := get(vars, "apiUrl"); fmt.Sprint(got) != fmt.Sprint(api) {
		t.Errorf("PageApi's stage variable apiUrl %v, want ApiUrl's value %v", got, api)
	}
	if got := fmt.Sprint(get(vars, "pageClientId")); !strings.Contains(got, "PageClient") {
		t.Errorf("PageApi's stage variable pageClientId %s, want the page's client", got)
	}
	// Both identity modes: the page's environment starts it (setup.Page).
	for _, issuer := range []string{"", requiredParams["JwtIssuer"]} {
		app := resolve(t, tmpl, deployment("eu-west-1", map[string]string{"JwtIssuer": issuer}))
		env := app.Functions["PageFunction"].Env
		if env[setup.EnvPageClientID] != "" {
			t.Errorf("JwtIssuer %q: PAGE_CLIENT_ID %q in the environment would make a circular dependency", issuer, env[setup.EnvPageClientID])
		}
		s, err := setup.Page(func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("JwtIssuer %q: the page refuses its environment: %v", issuer, err)
		}
		if created := s.AuthURL != ""; created != (issuer == "") {
			t.Errorf("JwtIssuer %q: AUTH_URL %q, PAGE_CLIENT_ID %q; want a managed login exactly when the stack creates the identity", issuer, s.AuthURL, s.ClientID)
		}
		if issuer == "" && !strings.HasSuffix(s.AuthURL, ".auth.eu-west-1.amazoncognito.com") {
			t.Errorf("AUTH_URL %q, want the user pool domain's managed login in eu-west-1", s.AuthURL)
		}
	}
}

// TestIdleQueueAgeAlarmAllowsTheDelay holds IdleQueueAgeAlarmSeconds to
// what it is made of: SQS's longest per-message delay (900 s, Amazon SQS
// Developer Guide, "Amazon SQS message timers"), which an idle copy waits
// before it can be received, plus the extraction queue's alarm age; and
// the idle queue's visibility timeout to at least six times the
// extractor's timeout, as the extraction queue's.
func TestIdleQueueAgeAlarmAllowsTheDelay(t *testing.T) {
	const maxDelay = 900
	params := asMap(httpapitest.LoadSAMTemplate(t)["Parameters"])
	idle, extraction := asMap(params["IdleQueueAgeAlarmSeconds"]), asMap(params["ExtractionDelayAlarmSeconds"])
	if d, e := toFloat(idle["Default"]), toFloat(extraction["Default"]); d != maxDelay+e {
		t.Errorf("IdleQueueAgeAlarmSeconds defaults to %v, want %v: 900 s of delay plus ExtractionDelayAlarmSeconds' %v", d, maxDelay+e, e)
	}
	if m, e := toFloat(idle["MinValue"]), toFloat(extraction["MinValue"]); m < maxDelay+e {
		t.Errorf("IdleQueueAgeAlarmSeconds may be %v, under the delay plus ExtractionDelayAlarmSeconds' least %v", m, maxDelay+e)
	}
	app := resolve(t, loadStackTemplate(t), deployment("us-east-1", nil))
	if q, f := app.Queues["IdleQueue"], app.Functions["ExtractorFunction"]; q.VisibilityTimeout < 6*f.Timeout {
		t.Errorf("IdleQueue's visibility timeout %s is under six times the extractor's timeout %s", q.VisibilityTimeout, f.Timeout)
	}
}
