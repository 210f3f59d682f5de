package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/internal/samtemplate"
)

func mustAWS(t *testing.T) aws.Config {
	t.Helper()
	return aws.Config{Region: "us-east-1", Credentials: static, BaseEndpoint: aws.String(motoserver.Endpoint(t))}
}

// TestSamDeployRunsBuildThenDeploy: sam build, then sam deploy with the
// stack, the Region and every parameter; a failed build stops there.
func TestSamDeployRunsBuildThenDeploy(t *testing.T) {
	r := &fakeRunner{}
	s := samSettings{StackName: "um", Region: "eu-west-1", Parameters: map[string]string{"AlarmEmail": "a@b.test", "CorsAllowOrigins": "https://x.test"}}
	if err := samDeploy(context.Background(), r, ".", s); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"sam", "build"}, {"sam", "deploy", "--stack-name", "um", "--region", "eu-west-1",
		"--parameter-overrides", "AlarmEmail=a@b.test CorsAllowOrigins=https://x.test"}}
	if !reflect.DeepEqual(r.ran, want) {
		t.Errorf("ran %q, want %q", r.ran, want)
	}
	r = &fakeRunner{fail: "build"}
	if err := samDeploy(context.Background(), r, ".", s); err == nil || len(r.ran) != 1 {
		t.Errorf("a failed build: %v after %q, want an error after sam build alone", err, r.ran)
	}
}

// TestPrintNextReadsTheStack creates a stack with the outputs of a
// deployed usermemory on moto's CloudFormation and prints what follows.
func TestPrintNextReadsTheStack(t *testing.T) {
	cfg := mustAWS(t)
	ctx := context.Background()
	outputs := map[string]string{"ApiUrl": "https://abc.execute-api.us-east-1.amazonaws.com", "PageUrl": "https://abc.execute-api.us-east-1.amazonaws.com/app/",
		"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/usermemory-x.fifo", "UserPoolId": "us-east-1_abc"}
	for _, tt := range []struct {
		stack string
		pool  bool
		want  []string
	}{
		{"um-builtin", true, []string{outputs["ApiUrl"], outputs["PageUrl"], "go run ./deploy user -stack um-builtin --tenant"}},
		{"um-external", false, []string{outputs["ApiUrl"], "Tokens come from your issuer"}},
	} {
		o := map[string]string{}
		for k, v := range outputs {
			if k != "UserPoolId" || tt.pool {
				o[k] = v
			}
		}
		createStack(t, cfg, tt.stack, o)
		got, err := awslive.StackOutputs(ctx, cfg, tt.stack)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		printNext(&b, tt.stack, "us-east-1", got)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the printout lacks %q:\n%s", tt.stack, w, b.String())
			}
		}
		if !tt.pool && strings.Contains(b.String(), "deploy user") {
			t.Errorf("%s: a stack without a pool is told to add a pool user:\n%s", tt.stack, b.String())
		}
	}
}

// createStack creates on moto a stack whose outputs are outputs.
func createStack(t *testing.T, cfg aws.Config, name string, outputs map[string]string) {
	t.Helper()
	outs := map[string]any{}
	for k, v := range outputs {
		outs[k] = map[string]string{"Value": v}
	}
	body, _ := json.Marshal(map[string]any{
		"Resources": map[string]any{"Topic": map[string]any{"Type": "AWS::SNS::Topic"}},
		"Outputs":   outs,
	})
	_, err := cloudformation.NewFromConfig(cfg).CreateStack(context.Background(), &cloudformation.CreateStackInput{StackName: aws.String(name), TemplateBody: aws.String(string(body))})
	if err != nil {
		t.Fatal(err)
	}
}

// pool creates on moto a user pool as the stack makes it: the custom
// tenant attribute, the admin group, and an app client that allows
// ADMIN_USER_PASSWORD_AUTH. It returns the pool's and client's IDs.
func pool(t *testing.T, c *cip.Client) (string, string) {
	t.Helper()
	ctx := context.Background()
	p, err := c.CreateUserPool(ctx, &cip.CreateUserPoolInput{PoolName: aws.String("usermemory-test"),
		Schema: []ciptypes.SchemaAttributeType{{Name: aws.String("tenant_id"), AttributeDataType: ciptypes.AttributeDataTypeString, Mutable: aws.Bool(false)}}})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(p.UserPool.Id)
	if _, err := c.CreateGroup(ctx, &cip.CreateGroupInput{UserPoolId: aws.String(id), GroupName: aws.String(adminGroup)}); err != nil {
		t.Fatal(err)
	}
	cl, err := c.CreateUserPoolClient(ctx, &cip.CreateUserPoolClientInput{UserPoolId: aws.String(id), ClientName: aws.String("page"),
		ExplicitAuthFlows: []ciptypes.ExplicitAuthFlowsType{ciptypes.ExplicitAuthFlowsTypeAllowAdminUserPasswordAuth, ciptypes.ExplicitAuthFlowsTypeAllowRefreshTokenAuth}})
	if err != nil {
		t.Fatal(err)
	}
	return id, aws.ToString(cl.UserPoolClient.ClientId)
}

// groups returns the groups of user.
func groups(t *testing.T, c *cip.Client, poolID, user string) []string {
	t.Helper()
	out, err := c.AdminListGroupsForUser(context.Background(), &cip.AdminListGroupsForUserInput{UserPoolId: aws.String(poolID), Username: aws.String(user)})
	if err != nil {
		t.Fatal(err)
	}
	var g []string
	for _, x := range out.Groups {
		g = append(g, aws.ToString(x.GroupName))
	}
	return g
}

// TestCreateUser on moto's cognito-idp: the user gets the tenant
// attribute and, with admin, the group; bad input and a second creation
// are refused. moto does not run a pre token generation trigger: the
// claims the trigger adds are tested with the trigger's own code.
func TestCreateUser(t *testing.T) {
	c := cip.NewFromConfig(mustAWS(t))
	ctx := context.Background()
	poolID, _ := pool(t, c)
	if err := createUser(ctx, c, poolID, "acme", "ana@acme.test", true); err != nil {
		t.Fatal(err)
	}
	attrs, err := attributes(ctx, c, poolID, "ana@acme.test")
	if err != nil || attrs[tenantAttribute] != "acme" || attrs["email"] != "ana@acme.test" {
		t.Errorf("attributes %v, %v; want the tenant acme and the e-mail", attrs, err)
	}
	if g := groups(t, c, poolID, "ana@acme.test"); !reflect.DeepEqual(g, []string{adminGroup}) {
		t.Errorf("groups %v, want [%s]", g, adminGroup)
	}
	for _, bad := range []struct{ tenant, email, want string }{
		{"acme", "ana@acme.test", "already"},
		{"ac/me", "bo@acme.test", "--tenant"},
		{"acme", "bo", "--email"},
	} {
		if err := createUser(ctx, c, poolID, bad.tenant, bad.email, false); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("createUser(%q, %q): %v, want an error about %s", bad.tenant, bad.email, err, bad.want)
		}
	}
}

// claims decodes a JWT's payload, unverified.
func claims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%q is not a JWT", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestScriptToken on moto's cognito-idp: the first call makes the test
// user, each call signs in with a fresh password and returns an access
// token of the client; --admin puts the user in the group and a later
// call without it takes the user out; another tenant is refused.
func TestScriptToken(t *testing.T) {
	c := cip.NewFromConfig(mustAWS(t))
	ctx := context.Background()
	poolID, clientID := pool(t, c)
	tok, err := scriptToken(ctx, c, poolID, clientID, "acme", "bb-1", true)
	if err != nil {
		t.Fatal(err)
	}
	cl := claims(t, tok)
	if cl["token_use"] != "access" || cl["client_id"] != clientID || cl["username"] != "bb-1" {
		t.Errorf("claims %v, want an access token of client %s for bb-1", cl, clientID)
	}
	if g := groups(t, c, poolID, "bb-1"); len(g) != 1 {
		t.Errorf("with admin: groups %v, want [%s]", g, adminGroup)
	}
	if _, err := scriptToken(ctx, c, poolID, clientID, "acme", "bb-1", false); err != nil {
		t.Fatal(err)
	}
	if g := groups(t, c, poolID, "bb-1"); len(g) != 0 {
		t.Errorf("without admin: groups %v, want none", g)
	}
	if _, err := scriptToken(ctx, c, poolID, clientID, "other", "bb-1", false); err == nil || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("another tenant: %v, want a refusal", err)
	}
}

// TestPoolMessage: a pool user's chat turn goes out under their sub and
// tenant, as the API will read them from the token.
func TestPoolMessage(t *testing.T) {
	c := cip.NewFromConfig(mustAWS(t))
	ctx := context.Background()
	poolID, _ := pool(t, c)
	if err := createUser(ctx, c, poolID, "acme", "ana@acme.test", false); err != nil {
		t.Fatal(err)
	}
	attrs, _ := attributes(ctx, c, poolID, "ana@acme.test")
	m, err := poolMessage(ctx, c, poolID, "ana@acme.test", "th-1", "I live in Lisbon.", "Nice!")
	if err != nil {
		t.Fatal(err)
	}
	if m.TenantID != "acme" || m.UserID != attrs["sub"] || m.UserID == "" || m.TurnCount != 2 || len(m.Turns) != 2 {
		t.Errorf("message %+v, want tenant acme, user %s, two turns", m, attrs["sub"])
	}
	if _, err := poolMessage(ctx, c, poolID, "nobody@acme.test", "th-1", "x", "y"); err == nil {
		t.Error("an unknown user: no error")
	}
}

// TestTeardownListsTheRetained reads the retained resources from
// template.yaml and their names from a stack on moto.
func TestTeardownListsTheRetained(t *testing.T) {
	ks, err := retainedResources(filepath.Join("..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range ks {
		ids = append(ids, k.LogicalID)
	}
	for _, want := range []string{"Table", "ExtractionQueue", "ExtractionDeadLetterQueue", "UserPool"} {
		if !strings.Contains(strings.Join(ids, " "), want) {
			t.Errorf("retained %v, want %s among them", ids, want)
		}
	}
	cfg := mustAWS(t)
	body := `{"Resources":{"Table":{"Type":"AWS::DynamoDB::Table","DeletionPolicy":"Retain","Properties":{"BillingMode":"PAY_PER_REQUEST",` +
		`"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}}}}`
	if _, err := cloudformation.NewFromConfig(cfg).CreateStack(context.Background(), &cloudformation.CreateStackInput{StackName: aws.String("um-teardown"), TemplateBody: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
	if err := physicalIDs(context.Background(), cloudformation.NewFromConfig(cfg), "um-teardown", ks); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printTeardown(&b, "um-teardown", "us-east-1", ks)
	for _, k := range ks {
		if k.LogicalID == "Table" && (k.PhysicalID == "" || !strings.Contains(b.String(), "--table-name "+k.PhysicalID)) {
			t.Errorf("the table's name %q is not in the plan:\n%s", k.PhysicalID, b.String())
		}
	}
}

// TestNoStackSaysSo: teardown's and the user commands' reads of a stack
// that does not exist (on moto) end in a sentence naming the stack and
// the way out, not CloudFormation's raw ValidationError.
func TestNoStackSaysSo(t *testing.T) {
	cfg := mustAWS(t)
	ctx := context.Background()
	_, outErr := stackOutputs(ctx, cfg, "um-nowhere")
	listErr := noStack(physicalIDs(ctx, cloudformation.NewFromConfig(cfg), "um-nowhere", []kept{{LogicalID: "Table"}}), "um-nowhere", cfg.Region)
	for name, err := range map[string]error{"outputs": outErr, "resources": listErr} {
		if err == nil || !strings.Contains(err.Error(), `there is no stack "um-nowhere" in us-east-1`) || strings.Contains(err.Error(), "api error") {
			t.Errorf("%s: %v, want a sentence naming the stack and the Region", name, err)
		}
	}
}

// TestOutputsReadAreTheTemplates: every stack output the commands read
// (an index of a map named out with a string literal, as out["PageUrl"])
// is an output of template.yaml, so that no command falls back on an
// output the stack does not have.
func TestOutputsReadAreTheTemplates(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join("..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app, err := tmpl.Resolve(samtemplate.Options{Region: "us-east-1", AccountID: "123456789012", StackName: "um"})
	if err != nil {
		t.Fatal(err)
	}
	fset := gotoken.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ix, ok := n.(*ast.IndexExpr)
			if !ok {
				return true
			}
			m, isIdent := ix.X.(*ast.Ident)
			lit, isLit := ix.Index.(*ast.BasicLit)
			if !isIdent || m.Name != "out" || !isLit || lit.Kind != gotoken.STRING {
				return true
			}
			key, _ := strconv.Unquote(lit.Value)
			read++
			if _, ok := app.Outputs[key]; !ok {
				t.Errorf("%s reads the output %s, which template.yaml does not define", fset.Position(ix.Pos()), key)
			}
			return true
		})
	}
	if read == 0 {
		t.Error("found no output read: the test reads nothing")
	}
}
