package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/usermemory/usermemory/internal/awslive"
	"github.com/usermemory/usermemory/producer"
)

// stackClients loads the AWS configuration of c's settings and the
// stack's outputs.
func stackClients(ctx context.Context, c *common) (aws.Config, map[string]string, error) {
	s, err := c.settings()
	if err != nil {
		return aws.Config{}, nil, err
	}
	cfg, err := loadAWS(ctx, s.Region)
	if err != nil {
		return aws.Config{}, nil, err
	}
	out, err := stackOutputs(ctx, cfg, s.StackName)
	if err != nil {
		return aws.Config{}, nil, err
	}
	if out["UserPoolId"] == "" {
		return aws.Config{}, nil, fmt.Errorf("the stack %s has no user pool (no UserPoolId output): it trusts an external issuer (JwtIssuer), where its users are managed", s.StackName)
	}
	return cfg, out, nil
}

// stackOutputs returns the outputs of the stack, or, when CloudFormation
// knows no such stack, an error that says so and what to do.
func stackOutputs(ctx context.Context, cfg aws.Config, stack string) (map[string]string, error) {
	out, err := awslive.StackOutputs(ctx, cfg, stack)
	return out, noStack(err, stack, cfg.Region)
}

// noStack turns CloudFormation's ValidationError for a stack name, which
// is how it answers for a stack that does not exist, into a sentence that
// names the stack, the Region and the way out; other errors are returned
// as they are.
func noStack(err error, stack, region string) error {
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ValidationError" {
		return err
	}
	return fmt.Errorf("there is no stack %q in %s (CloudFormation: %s): deploy it with `go run ./deploy`, or name a deployed one with -stack and -region",
		stack, region, api.ErrorMessage())
}

func userCmd(ctx context.Context, args []string) error {
	c := newFlags("user")
	tenant := c.fs.String("tenant", "", "the user's tenant (custom:tenant_id)")
	email := c.fs.String("email", "", "the user's e-mail address, their user name; Cognito sends the temporary password there")
	admin := c.fs.Bool("admin", false, "add the user to the group "+adminGroup+" (the admin scope)")
	if err := c.parse(args); err != nil {
		return err
	}
	cfg, out, err := stackClients(ctx, c)
	if err != nil {
		return err
	}
	if err := createUser(ctx, cip.NewFromConfig(cfg), out["UserPoolId"], *tenant, *email, *admin); err != nil {
		return err
	}
	fmt.Printf("Created %s in the tenant %s (admin: %v). Cognito e-mails a temporary password to the address.\n", *email, *tenant, *admin)
	fmt.Printf("Sign in at %s\n", out["PageUrl"])
	return nil
}

// tokenCmd prints a token for scripts, such as the black-box suite's
// USERMEMORY_TOKEN_CMD (docs/deploy.md).
func tokenCmd(ctx context.Context, args []string) error {
	c := newFlags("token")
	tenant := c.fs.String("tenant", "", "the test user's tenant")
	user := c.fs.String("user", "", "the test user's user name (made when missing)")
	admin := c.fs.Bool("admin", false, "with the admin scope (membership of "+adminGroup+")")
	client := c.fs.String("client-id", "", "the app client to sign in on (default: the stack's PageClientId output, the client that allows ALLOW_ADMIN_USER_PASSWORD_AUTH)")
	audience := c.fs.String("audience", "", "refused unless empty or the client's ID: Cognito's access tokens carry their client's ID")
	ttl := c.fs.Duration("ttl", 0, "refused unless 0 or 1h: an access token lives as long as its app client says")
	if err := c.parse(args); err != nil {
		return err
	}
	if *user == "" {
		return errors.New("token: --user is required")
	}
	cfg, out, err := stackClients(ctx, c)
	if err != nil {
		return err
	}
	id := *client
	if id == "" {
		id = out["PageClientId"]
	}
	if *audience != "" && *audience != id {
		return fmt.Errorf("token: the user pool issues no token for the audience %q, only for its app clients (here %s): leave {audience} out of USERMEMORY_TOKEN_CMD", *audience, id)
	}
	if *ttl != 0 && *ttl != time.Hour {
		return fmt.Errorf("token: a Cognito access token lives as long as its app client's AccessTokenValidity, not %v: leave {ttl} out of USERMEMORY_TOKEN_CMD", *ttl)
	}
	tok, err := scriptToken(ctx, cip.NewFromConfig(cfg), out["UserPoolId"], id, *tenant, *user, *admin)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

// sendCmd sends one chat turn of a pool user to the stack's queue through
// the producer, as a gateway does: the user ID is the user's sub, the
// tenant their custom:tenant_id.
func sendCmd(ctx context.Context, args []string) error {
	c := newFlags("send")
	name := c.fs.String("email", "", "the pool user's user name (the e-mail address of `deploy user`)")
	thread := c.fs.String("thread", "first-thread", "the thread ID")
	text := c.fs.String("text", "Hi, I'm Ana and I live in Lisbon.", "the user turn")
	answer := c.fs.String("answer", "Nice to meet you, Ana!", "the assistant turn")
	if err := c.parse(args); err != nil {
		return err
	}
	cfg, out, err := stackClients(ctx, c)
	if err != nil {
		return err
	}
	m, err := poolMessage(ctx, cip.NewFromConfig(cfg), out["UserPoolId"], *name, *thread, *text, *answer)
	if err != nil {
		return err
	}
	if err := producer.New(sqs.NewFromConfig(cfg), out["QueueUrl"]).Send(ctx, m); err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "sent: tenant %s, user %s (%s), thread %s, turns %d→%d. The extractor reads it unless it read this thread's first answer already "+
		"(then pass another -thread); what it learns shows on the page once it has run, usually within a minute\n",
		m.TenantID, m.UserID, *name, m.ThreadID, m.PreviousTurnCount, m.TurnCount)
	return nil
}

// poolMessage makes the gateway message of one exchange of the pool user
// name: the first two turns of thread.
func poolMessage(ctx context.Context, pool userPool, poolID, name, thread, text, answer string) (producer.Message, error) {
	attrs, err := attributes(ctx, pool, poolID, name)
	if err != nil {
		return producer.Message{}, err
	}
	if attrs == nil {
		return producer.Message{}, fmt.Errorf("no user %s in the pool: add it with `go run ./deploy user`", name)
	}
	return producer.Message{TenantID: attrs[tenantAttribute], UserID: attrs["sub"], ThreadID: thread, TurnCount: 2,
		Turns: []producer.Turn{{Role: "user", Text: text}, {Role: "assistant", Text: answer}}}, nil
}
