package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// Status is the outcome of one check.
type Status int

// The outcomes: a check passes, warns (the deploy works, something is
// missing), or blocks (the deploy would fail, or the stack would not work).
const (
	Pass Status = iota
	Warn
	Block
)

func (s Status) String() string { return [...]string{"PASS", "WARN", "BLOCK"}[s] }

// Result is one line of the preflight: the check, what it found and, when
// it does not pass, the fix.
type Result struct {
	Status  Status
	Check   string
	Message string
	Fix     string
}

func (r Result) String() string {
	s := fmt.Sprintf("%-5s %-12s %s", r.Status, r.Check, r.Message)
	if r.Fix != "" {
		s += "\n      fix: " + r.Fix
	}
	return s
}

// errBlocked is the error of a preflight with a blocker.
type errBlocked int

func (e errBlocked) Error() string {
	return fmt.Sprintf("preflight: %d check(s) block the deploy", int(e))
}

// callerIdentity is the STS call the preflight makes.
type callerIdentity interface {
	GetCallerIdentity(context.Context, *sts.GetCallerIdentityInput, ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
}

// preflight holds what the checks read: the AWS clients (consumer
// interfaces, so that tests point them at moto_server, the Bedrock
// stand-in or an httptest server), the runner of sam, an HTTP client for
// an external issuer, and the deploy's settings.
type preflight struct {
	sts     callerIdentity
	lambda  accountSettings
	bedrock modelCatalog
	// model, when not nil, is called with one token after the person says
	// yes on in (the question goes to out).
	model   converser
	in      io.Reader
	out     io.Writer
	stacks  stackDescriber
	domains domainDescriber
	runner  runner
	http    *http.Client
	root    string
	region  string
	setting samSettings
	// stackID is the deployed stack's ID, "" for a new stack.
	stackID string
}

// run runs every check and returns the results in order. Without
// working credentials it still checks what needs no AWS call: the
// parameters (with a stand-in account ID), the issuer and the alarms.
func (p *preflight) run(ctx context.Context) []Result {
	creds, account := p.credentials(ctx)
	results := []Result{creds, placeholders(p.setting.Parameters), p.samCLI(ctx)}
	if p.region == "" {
		return results
	}
	online := creds.Status != Block
	if !online {
		account = "000000000000"
	} else {
		p.stackID = p.existingStack(ctx)
	}
	app, params, res := p.resolve(account)
	results = append(results, res)
	if app == nil {
		return results
	}
	if online {
		results = append(results, p.concurrency(ctx, app))
		if d, ok := p.domain(ctx, app); ok {
			results = append(results, d)
		}
		results = append(results, p.models(ctx, app, params)...)
	}
	return append(results, p.issuer(ctx, params["JwtIssuer"]), alarmAddress(params["AlarmEmail"]))
}

// report prints results to w, one line each, and returns errBlocked when
// any blocks.
func report(w io.Writer, results []Result) error {
	blocked := 0
	for _, r := range results {
		fmt.Fprintln(w, r)
		if r.Status == Block {
			blocked++
		}
	}
	if blocked > 0 {
		return errBlocked(blocked)
	}
	return nil
}

// credentials asks STS who the credentials are; it returns the account.
func (p *preflight) credentials(ctx context.Context) (Result, string) {
	if p.region == "" {
		return Result{Block, "credentials", "no AWS Region", "set region in samconfig.toml, AWS_REGION, or pass -region"}, ""
	}
	out, err := p.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return Result{Block, "credentials", fmt.Sprintf("STS GetCallerIdentity in %s failed: %v", p.region, err),
			"run `aws configure` or `aws sso login`, or set AWS_PROFILE, then try again"}, ""
	}
	account := aws.ToString(out.Account)
	return Result{Pass, "credentials", fmt.Sprintf("account %s, Region %s, as %s", account, p.region, aws.ToString(out.Arn)), ""}, account
}

// resolve evaluates template.yaml with the parameters as CloudFormation
// would, its Rules and parameter constraints included.
func (p *preflight) resolve(account string) (*samtemplate.App, map[string]string, Result) {
	t, err := samtemplate.Load(filepath.Join(p.root, "template.yaml"))
	if err != nil {
		return nil, nil, Result{Block, "parameters", err.Error(), "run the command from the repository's root, or pass -root"}
	}
	o := samtemplate.Options{Region: p.region, AccountID: account, StackName: p.setting.StackName, Parameters: p.setting.Parameters,
		StackID: p.stackID}
	if o.StackID == "" {
		// A new stack's ID is made when it is created; its last part is a
		// UUID, which newStackUUID stands for.
		o.StackID = fmt.Sprintf("arn:aws:cloudformation:%s:%s:stack/%s/%s", p.region, account, p.setting.StackName, newStackUUID)
	}
	if err := t.Check(o); err != nil {
		return nil, nil, Result{Block, "parameters", "CloudFormation would refuse them: " + err.Error(),
			"fix samconfig.toml's parameter_overrides or -parameter-overrides"}
	}
	app, err := t.Resolve(o)
	if err != nil {
		return nil, nil, Result{Block, "parameters", err.Error(), "fix samconfig.toml's parameter_overrides or -parameter-overrides"}
	}
	n := len(p.setting.Parameters)
	return app, app.Parameters, Result{Pass, "parameters", fmt.Sprintf("template.yaml accepts the %d override(s) in %s", n, p.region), ""}
}

// alarmAddress warns when no one receives the alarms.
func alarmAddress(email string) Result {
	if strings.TrimSpace(email) == "" {
		return Result{Warn, "alarms", "AlarmEmail is empty: nobody gets the alarms",
			"add AlarmEmail=you@your.domain to the parameter overrides (the address confirms by e-mail), or subscribe to the AlarmTopicArn output"}
	}
	return Result{Pass, "alarms", "alarms go to " + email + " (it must confirm the subscription e-mail)", ""}
}
