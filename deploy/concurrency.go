package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/usermemory/usermemory/internal/samtemplate"
)

// minUnreserved is the concurrency Lambda keeps unreserved in an account:
// "You can reserve up to the Unreserved account concurrency value minus
// 100" (Lambda developer guide, Configuring reserved concurrency,
// https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html,
// read 2026-12-03).
const minUnreserved = 100

// usualAccountQuota is the concurrency quota of an established account
// that docs/scale.md assumes; "New AWS accounts have reduced concurrency
// and memory quotas" (Lambda quotas,
// https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html,
// read 2026-12-03).
const usualAccountQuota = 1000

// accountSettings is the Lambda call the preflight makes.
type accountSettings interface {
	GetAccountSettings(context.Context, *lambda.GetAccountSettingsInput, ...func(*lambda.Options)) (*lambda.GetAccountSettingsOutput, error)
}

// stackDescriber is the CloudFormation call that tells whether the stack
// exists already.
type stackDescriber interface {
	DescribeStacks(context.Context, *cloudformation.DescribeStacksInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
}

// reserved returns the concurrency the resolved template reserves, and
// the functions that reserve it, as "Name N".
func reserved(app *samtemplate.App) (int, []string) {
	total := 0
	var who []string
	for _, id := range slices.Sorted(maps.Keys(app.Functions)) {
		if n := app.Functions[id].ReservedConcurrency; n > 0 {
			total += n
			who = append(who, fmt.Sprintf("%s %d", id, n))
		}
	}
	return total, who
}

// concurrency checks the account's Lambda concurrency against what the
// parameters reserve.
func (p *preflight) concurrency(ctx context.Context, app *samtemplate.App) Result {
	need, who := reserved(app)
	out, err := p.lambda.GetAccountSettings(ctx, &lambda.GetAccountSettingsInput{})
	if err != nil {
		return Result{Warn, "concurrency", fmt.Sprintf("Lambda GetAccountSettings failed (%v): the reservations (%d) are not checked", err, need),
			"allow lambda:GetAccountSettings to the deploying identity"}
	}
	if out.AccountLimit == nil {
		return Result{Warn, "concurrency", "Lambda GetAccountSettings answered no AccountLimit: the reservations are not checked", ""}
	}
	limit := int(out.AccountLimit.ConcurrentExecutions)
	unreserved := int(aws.ToInt32(out.AccountLimit.UnreservedConcurrentExecutions))
	avail := unreserved - minUnreserved
	if need > avail {
		msg := fmt.Sprintf("the parameters reserve %d (%s); the account's quota is %d, %d unreserved, and Lambda keeps %d unreserved: %d can be reserved",
			need, strings.Join(who, ", "), limit, unreserved, minUnreserved, max(avail, 0))
		fix := fmt.Sprintf("set ReadReservedConcurrency=0 and EditReservedConcurrency=0 (the defaults), or ask Service Quotas for a Lambda concurrency quota of at least %d (docs/scale.md)",
			limit-unreserved+minUnreserved+need)
		if p.stackID != "" {
			// The stack's own reservations are already counted out of
			// the unreserved pool: an update may fit where this says no.
			return Result{Warn, "concurrency", msg + " (the stack exists: its own reservations are counted twice here)", fix}
		}
		return Result{Block, "concurrency", msg, fix}
	}
	res := Result{Pass, "concurrency", fmt.Sprintf("the parameters reserve %d; the account's quota is %d, %d unreserved", need, limit, unreserved), ""}
	if limit < usualAccountQuota {
		res.Status = Warn
		res.Message += fmt.Sprintf(": below the %d that docs/scale.md's limits assume (a new account's)", usualAccountQuota)
		res.Fix = "ask Service Quotas for \"Concurrent executions\" (Lambda) of 1,000 before traffic grows"
	}
	return res
}

// existingStack returns the ID of the stack when it is deployed already,
// or "".
func (p *preflight) existingStack(ctx context.Context) string {
	if p.stacks == nil {
		return ""
	}
	out, err := p.stacks.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(p.setting.StackName)})
	if err != nil || len(out.Stacks) != 1 {
		return ""
	}
	return aws.ToString(out.Stacks[0].StackId)
}
