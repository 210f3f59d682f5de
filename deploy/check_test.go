package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"github.com/usermemory/usermemory/internal/stackcheck"
)

// TestCheckUserOfThePool: the check signs its user in on the pool (on
// moto's cognito-idp), made the first time, and forgets it afterwards;
// forgetting a user already gone is no error. The check's steps
// themselves run against the local stack (localtest/e2e,
// TestDeployCheckPasses).
func TestCheckUserOfThePool(t *testing.T) {
	c := cip.NewFromConfig(mustAWS(t))
	ctx := context.Background()
	poolID, clientID := pool(t, c)
	p := poolTokens{pool: c, poolID: poolID, client: clientID}
	if tok, err := p.Token(ctx, stackcheck.Tenant, "check-user", true); err != nil || strings.Count(tok, ".") != 2 {
		t.Fatalf("token %q, %v; want a JWT", tok, err)
	}
	for i := range 2 {
		if err := p.forget(ctx, "check-user"); err != nil {
			t.Errorf("forget %d: %v", i+1, err)
		}
	}
	if attrs, err := attributes(ctx, c, poolID, "check-user"); attrs != nil || err != nil {
		t.Errorf("after forget: %v, %v; want no user", attrs, err)
	}
}

// TestCheckResults: a failed step blocks with a fix, a passed one passes,
// and a stack without its own identity warns that the token steps did
// not run.
func TestCheckResults(t *testing.T) {
	steps := []stackcheck.Step{{Name: "page", Detail: "ok"}, {Name: "facts", Err: errors.New("GET answered 401")}}
	got := checkResults(stackcheck.Target{Tokens: poolTokens{}}, steps)
	if len(got) != 2 || got[0].Status != Pass || got[1].Status != Block || got[1].Fix == "" || !strings.Contains(got[1].Message, "401") {
		t.Errorf("results %v, want PASS page, BLOCK facts with a fix", got)
	}
	got = checkResults(stackcheck.Target{}, steps[:1])
	if len(got) != 2 || got[1].Status != Warn || !strings.Contains(got[1].Message, "external issuer") {
		t.Errorf("without the stack's identity: %v, want a warning that no token was used", got)
	}
	out := map[string]string{"PageUrl": "https://p.test/app/", "ApiUrl": "https://a.test", "QueueUrl": "https://q.test/q"}
	if tg := checkTarget(aws.Config{Region: "us-east-1"}, out, 0); tg.Tokens != nil || tg.PageURL != out["PageUrl"] {
		t.Errorf("an external issuer's stack: %+v, want no tokens", tg)
	}
	out["UserPoolId"] = "us-east-1_x"
	if tg := checkTarget(aws.Config{Region: "us-east-1"}, out, 0); tg.Tokens == nil || tg.Forget == nil {
		t.Errorf("the stack's own pool: %+v, want its tokens and forget", tg)
	}
}
