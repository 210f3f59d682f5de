package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
)

// TestDomain evaluates the repository's template.yaml and checks the
// prefix it makes for the stack: with AuthDomainPrefix empty, a new
// stack's prefix is derived from the ID it will get (it passes, and names
// no made-up prefix), and an existing stack's from its real ID; a prefix
// chosen by hand that another pool of the account holds (on moto's
// cognito-idp) or that holds a reserved word blocks, its fix naming
// AuthDomainPrefix; with an external issuer there is no line.
func TestDomain(t *testing.T) {
	cfg := mustAWS(t)
	c := cip.NewFromConfig(cfg)
	cfn := cloudformation.NewFromConfig(cfg)
	ctx := context.Background()
	poolID, _ := pool(t, c)
	if _, err := c.CreateUserPoolDomain(ctx, &cip.CreateUserPoolDomainInput{UserPoolId: aws.String(poolID), Domain: aws.String("um-taken-123456789012")}); err != nil {
		t.Fatal(err)
	}
	created, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("um-existing"),
		TemplateBody: aws.String(`{"Resources":{"Topic":{"Type":"AWS::SNS::Topic"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(created.StackId)
	existing := "memory-" + id[strings.LastIndex(id, "/")+1:]
	for _, tt := range []struct {
		stack, prefix, issuer string
		want                  Status
		line                  bool
		says, notSays         string
	}{
		{"um-new", "", "", Pass, true, "stack's ID", "memory-local"},
		{"um-existing", "", "", Pass, true, existing, "<the new stack's UUID>"},
		{"um-new", "um-mine", "", Pass, true, "https://um-mine.auth", ""},
		{"um-new", "um-taken-123456789012", "", Block, true, "AuthDomainPrefix", "lower-case stack name"},
		{"um-new", "my-cognito-login", "", Block, true, "AuthDomainPrefix", "lower-case stack name"},
		{"um-new", "", "https://issuer.acme.test", Pass, false, "", ""},
	} {
		params := map[string]string{"JwtIssuer": tt.issuer, "AuthDomainPrefix": tt.prefix}
		if tt.issuer != "" {
			params["JwtAudience"] = "usermemory-api"
		}
		p := &preflight{root: "..", region: "us-east-1", domains: c, stacks: cfn,
			setting: samSettings{StackName: tt.stack, Parameters: params}}
		p.stackID = p.existingStack(ctx)
		app, _, res := p.resolve("123456789012")
		if app == nil {
			t.Fatalf("%s: resolve: %v", tt.stack, res)
		}
		got, line := p.domain(ctx, app)
		if line != tt.line || (line && got.Status != tt.want) {
			t.Errorf("%s, prefix %q, issuer %q: %v (line %v), want %v (line %v)", tt.stack, tt.prefix, tt.issuer, got, line, tt.want, tt.line)
		}
		if text := got.String(); !strings.Contains(text, tt.says) || tt.notSays != "" && strings.Contains(text, tt.notSays) {
			t.Errorf("%s, prefix %q: %q, want it to say %q and not %q", tt.stack, tt.prefix, text, tt.says, tt.notSays)
		}
	}
}
