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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/httpapi/httpapitest"
	"github.com/usermemory/usermemory/internal/testenv"
)

// libraries are the folders of functions/ that are not functions.
var libraries = map[string]bool{"httpapi": true, "setup": true, "wire": true}

// tableActions are the only DynamoDB actions each function's role has.
var tableActions = map[string][]string{
	"GetFactsFunction":   {"dynamodb:GetItem"},
	"PutFactFunction":    {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
	"DeleteFactFunction": {"dynamodb:UpdateItem"},
	"ClearFactsFunction": {"dynamodb:UpdateItem"},
	"EraseUserFunction":  {"dynamodb:PutItem"},
	"ExtractorFunction":  {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
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
func statements(t *testing.T, tpl httpapitest.Template, id string) []map[string]any {
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
	tpl := httpapitest.LoadTemplate(t)
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
				case service == "bedrock" || service == "sqs":
					if id != "ExtractorFunction" {
						t.Errorf("%s: %s is the extractor's alone", id, action)
					}
				case service == "logs" || service == "xray":
				default:
					t.Errorf("%s: unexpected action %q", id, action)
				}
				if service == "sqs" && fmt.Sprint(s["Resource"]) != fmt.Sprint(getAtt("ExtractionQueue", "Arn")) {
					t.Errorf("%s: %s on %v, want the extraction queue only", id, action, s["Resource"])
				}
				if service == "bedrock" {
					if action != "bedrock:InvokeModel" {
						t.Errorf("%s: %s, want bedrock:InvokeModel only", id, action)
					}
					for _, r := range asList(s["Resource"]) {
						sub := fmt.Sprint(get(r.(map[string]any), "Fn::Sub"))
						if !strings.Contains(sub, "${CheapModelId}") && !strings.Contains(sub, "${CheapFoundationModelId}") {
							t.Errorf("%s: model resource %v is not the configured model", id, r)
						}
					}
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
	tpl := httpapitest.LoadTemplate(t)
	root := httpapitest.Root(t)
	var folders []string
	dirs, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !libraries[d.Name()] {
			folders = append(folders, d.Name())
			files, _ := filepath.Glob(filepath.Join(root, "functions", d.Name(), "*.go"))
			mains := 0
			for _, name := range files {
				if strings.HasSuffix(name, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.PackageClauseOnly)
				if err != nil {
					t.Fatal(err)
				}
				if f.Name.Name != "main" {
					t.Errorf("%s: package %s, want main", name, f.Name.Name)
				}
				mains++
			}
			if mains == 0 {
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
	tpl := httpapitest.LoadTemplate(t)
	var keys []string
	for _, r := range tpl.Routes() {
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
	api := props(tpl.Resources()["HttpApi"])
	if get(api, "Auth", "Authorizers", "JwtAuthorizer", "JwtConfiguration", "issuer") == nil ||
		fmt.Sprint(get(api, "Auth", "Authorizers", "JwtAuthorizer", "JwtConfiguration", "audience")) != fmt.Sprint(ref("JwtAudience")) {
		t.Error("the JWT authorizer's issuer and audience must be parameters")
	}
	if fmt.Sprint(get(api, "CorsConfiguration", "AllowOrigins")) != fmt.Sprint(ref("CorsAllowOrigins")) {
		t.Error("CORS origins must be a parameter")
	}
}

func TestTableIsDynamorepos(t *testing.T) {
	table := props(httpapitest.LoadTemplate(t).Resources()["Table"])
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
	tpl := httpapitest.LoadTemplate(t)
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
	if number(t, dlq["MessageRetentionPeriod"]) <= number(t, q["MessageRetentionPeriod"]) {
		t.Error("the DLQ must keep messages longer than the queue")
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
				alarmed[fmt.Sprint(p["MetricName"], " ", get(d.(map[string]any), "Value"))] = true
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

// setupEnv returns the values of setup's Env* constants, read from its
// source so that a new variable counts without a change here.
func setupEnv(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(httpapitest.Root(t), "functions", "setup", "setup.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
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
	if len(out) == 0 {
		t.Fatal("found no Env constant in functions/setup")
	}
	return out
}

func TestEnvironmentIsSetups(t *testing.T) {
	tpl := httpapitest.LoadTemplate(t)
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
	for _, id := range tpl.Functions() {
		check(id, get(props(tpl.Resources()[id]), "Environment", "Variables"))
	}
	if get(tpl, "Globals", "Function", "Environment", "Variables", "TABLE_NAME") == nil {
		t.Error("TABLE_NAME is not set")
	}
}

func TestCfnLint(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		testenv.Need(t, "cfn-lint is not on PATH: install it with  python3 -m pip install cfn-lint")
	}
	out, err := exec.Command(bin, filepath.Join(httpapitest.Root(t), "template.yaml")).CombinedOutput()
	if err != nil {
		t.Errorf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}
