package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/internal/stackcheck"
	"github.com/usermemory/usermemory/producer"
)

// defaultCheckWait bounds the check's wait for its extraction on AWS: a
// cold extractor, the queue's poll and one model call.
const defaultCheckWait = 3 * time.Minute

// poolTokens signs the check's user in on the stack's user pool, made
// the first time (scriptToken), on the page's app client.
type poolTokens struct {
	pool           userPool
	poolID, client string
}

func (p poolTokens) Token(ctx context.Context, tenant, user string, admin bool) (string, error) {
	return scriptToken(ctx, p.pool, p.poolID, p.client, tenant, user, admin)
}

// forget deletes the check's user from the pool; a user already gone is
// no error.
func (p poolTokens) forget(ctx context.Context, user string) error {
	_, err := p.pool.AdminDeleteUser(ctx, &cip.AdminDeleteUserInput{UserPoolId: aws.String(p.poolID), Username: aws.String(user)})
	var nf *ciptypes.UserNotFoundException
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("delete the check's user %s from the pool: %w", user, err)
	}
	return nil
}

// checkTarget is the deployed stack of outputs out, as the check reaches
// it with the AWS configuration cfg.
func checkTarget(cfg aws.Config, out map[string]string, wait time.Duration) stackcheck.Target {
	t := stackcheck.Target{PageURL: out["PageUrl"], APIURL: out["ApiUrl"], Wait: wait,
		Queue: producer.New(sqs.NewFromConfig(cfg), out["QueueUrl"])}
	if out["UserPoolId"] != "" {
		p := poolTokens{pool: cip.NewFromConfig(cfg), poolID: out["UserPoolId"], client: out["PageClientId"]}
		t.Tokens, t.Forget = p, p.forget
	}
	return t
}

// checkResults turns the check's steps into the preflight's lines: a
// failed step blocks. Without the stack's own identity the token steps
// are not run, which warns.
func checkResults(t stackcheck.Target, steps []stackcheck.Step) []Result {
	var out []Result
	for _, s := range steps {
		if s.Err != nil {
			out = append(out, Result{Block, "check " + s.Name, s.Err.Error(), "docs/deploy.md, \"Check the deploy\", says what each step needs"})
			continue
		}
		out = append(out, Result{Pass, "check " + s.Name, s.Detail, ""})
	}
	if t.Tokens == nil {
		out = append(out, Result{Warn, "check facts", "the stack trusts an external issuer (JwtIssuer): the check has no token, so it reads no facts and sends no chat turn",
			"run the black-box suite with your issuer's token command (docs/deploy.md)"})
	}
	return out
}

// runCheck checks the stack of outputs out and prints one line a step
// to w; it returns an error saying how many steps failed.
func runCheck(ctx context.Context, w io.Writer, cfg aws.Config, out map[string]string, wait time.Duration) error {
	fmt.Fprintf(w, "\nChecking the stack as its first users would (a page visit, a token, one chat turn; then erasing them):\n")
	t := checkTarget(cfg, out, wait)
	var blocked errBlocked
	if err := report(w, checkResults(t, stackcheck.Run(ctx, t))); errors.As(err, &blocked) {
		return fmt.Errorf("%d step(s) of the check failed", int(blocked))
	}
	return nil
}

func checkCmd(ctx context.Context, args []string) error {
	c := newFlags("check")
	wait := c.fs.Duration("wait", defaultCheckWait, "how long to wait for the chat turn's fact")
	if err := c.parse(args); err != nil {
		return err
	}
	s, err := c.settings()
	if err != nil {
		return err
	}
	cfg, err := loadAWS(ctx, s.Region)
	if err != nil {
		return err
	}
	out, err := stackOutputs(ctx, cfg, s.StackName)
	if err != nil {
		return err
	}
	return runCheck(ctx, os.Stdout, cfg, out, *wait)
}
