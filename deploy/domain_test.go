package main

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
)

// TestDomain evaluates a template with the built-in pool's domain
// (testdata/identity) and checks the prefix it derives: a lower-case one
// passes, a stack name with capitals blocks, one another pool of the
// account holds (on moto's cognito-idp) blocks, and with an external
// issuer there is no line.
func TestDomain(t *testing.T) {
	c := cip.NewFromConfig(mustAWS(t))
	ctx := context.Background()
	poolID, _ := pool(t, c)
	if _, err := c.CreateUserPoolDomain(ctx, &cip.CreateUserPoolDomainInput{UserPoolId: aws.String(poolID), Domain: aws.String("um-taken-123456789012")}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		stack, issuer string
		want          Status
		line          bool
	}{
		{"um-domain", "", Pass, true},
		{"UserMemory", "", Block, true},
		{"um-taken", "", Block, true},
		{"um-domain", "https://issuer.acme.test", Pass, false},
	} {
		p := &preflight{root: "testdata/identity", region: "us-east-1", domains: c,
			setting: samSettings{StackName: tt.stack, Parameters: map[string]string{"JwtIssuer": tt.issuer}}}
		app, _, res := p.resolve("123456789012")
		if app == nil {
			t.Fatalf("%s: resolve: %v", tt.stack, res)
		}
		got, line := p.domain(ctx, app)
		if line != tt.line || (line && got.Status != tt.want) {
			t.Errorf("%s, issuer %q: %v (line %v), want %v (line %v)", tt.stack, tt.issuer, got, line, tt.want, tt.line)
		}
	}
}
