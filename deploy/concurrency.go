package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
// read 2026-12-03). An account whose quota is below it can reserve
// nothing: Lambda refuses a reservation that "decreases account's
// UnreservedConcurrentExecution below its minimum value of [50]" on an
// account of quota 50 (Gruntwork knowledge base, discussion 215,
// https://docs.gruntwork.io/discussions/knowledge-base/215, read
// 2026-12-07), so keepUnreserved takes the smaller of the two.
const minUnreserved = 100

// keepUnreserved is the concurrency Lambda keeps unreserved in an account
// of quota limit.
func keepUnreserved(limit int) int { return min(minUnreserved, limit) }

// usualAccountQuota is the concurrency quota that docs/scale.md's limits
// assume, the default of an established account: "New AWS accounts have
// reduced concurrency and memory quotas. AWS raises these quotas
// automatically based on your usage" (Lambda quotas,
// https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html,
// read 2026-12-07). Such accounts have been given 10 and 50 (docs/scale.md).
const usualAccountQuota = 1000

// extractorShare is the most of the unreserved concurrency the
// extractor's queue sources may take at their MaximumConcurrency, as a
// divisor: at most half, so that the other half is left to the functions
// people wait on (the fact API, the page and the pre token trigger,
// without which nobody signs in).
const extractorShare = 2

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

// concurrency checks the account's Lambda concurrency (lambda:
// GetAccountSettings) against what the parameters reserve and against
// what the extractor's queue sources can take of the rest.
func (p *preflight) concurrency(ctx context.Context, app *samtemplate.App) Result {
	need, who := reserved(app)
	out, err := p.lambda.GetAccountSettings(ctx, &lambda.GetAccountSettingsInput{})
	if err != nil {
		return Result{Warn, "concurrency", fmt.Sprintf("Lambda GetAccountSettings failed (%v): the reservations (%d) and the extractor's share are not checked", err, need),
			"allow lambda:GetAccountSettings to the deploying identity"}
	}
	if out.AccountLimit == nil {
		return Result{Warn, "concurrency", "Lambda GetAccountSettings answered no AccountLimit: the reservations and the extractor's share are not checked", ""}
	}
	limit := int(out.AccountLimit.ConcurrentExecutions)
	unreserved := int(aws.ToInt32(out.AccountLimit.UnreservedConcurrentExecutions))
	if res, ok := p.reservationsFit(limit, unreserved, need, who); !ok {
		return res
	}
	// The pool the functions without a reservation share once the stack
	// is deployed: an existing stack's reservations are out of it already.
	pool := unreserved
	if p.stackID == "" {
		pool -= need
	}
	if res, ok := extractorFits(app, limit, pool, p.root); !ok {
		return res
	}
	res := Result{Pass, "concurrency", fmt.Sprintf("the parameters reserve %d; the account's quota is %d, %d unreserved", need, limit, unreserved), ""}
	if limit < usualAccountQuota {
		res.Status = Warn
		res.Message += fmt.Sprintf(": below the %d that docs/scale.md's limits assume (a new account's quota)", usualAccountQuota)
		res.Fix = "ask Service Quotas for \"Concurrent executions\" (Lambda) of 1,000 before traffic grows"
	}
	return res
}

// reservationsFit checks the reservations need (by who) against what an
// account of quota limit with unreserved concurrency can reserve.
func (p *preflight) reservationsFit(limit, unreserved, need int, who []string) (Result, bool) {
	keep := keepUnreserved(limit)
	avail := unreserved - keep
	if need <= avail {
		return Result{}, true
	}
	msg := fmt.Sprintf("the parameters reserve %d (%s); the account's quota is %d, %d unreserved, and Lambda keeps %d unreserved: %d can be reserved",
		need, strings.Join(who, ", "), limit, unreserved, keep, max(avail, 0))
	fix := fmt.Sprintf("set ReadReservedConcurrency=0 and EditReservedConcurrency=0 (the defaults), or ask Service Quotas for a Lambda concurrency quota of at least %d (docs/scale.md)",
		limit-unreserved+minUnreserved+need)
	if p.stackID != "" {
		// The stack's own reservations are already counted out of the
		// unreserved pool: an update may fit where this says no.
		return Result{Warn, "concurrency", msg + " (the stack exists: its own reservations are counted twice here)", fix}, false
	}
	return Result{Block, "concurrency", msg, fix}, false
}

// extractorFits blocks when the extractor's queue sources (the SQS event
// sources of functions without a reservation) can take more than
// 1/extractorShare of pool, the unreserved concurrency, at their
// MaximumConcurrency: they would starve the fact API and the pre token
// trigger. Its fix names the ExtractorMaxConcurrency that fits, or a
// quota when none of those the template allows does.
func extractorFits(app *samtemplate.App, limit, pool int, root string) (Result, bool) {
	takes, sources := 0, 0
	for _, e := range app.SQSEvents {
		if !e.Enabled || app.Functions[e.Function].ReservedConcurrency > 0 {
			continue
		}
		sources++
		if e.MaxConcurrency == 0 {
			takes += limit // no MaximumConcurrency: it may take all
			continue
		}
		takes += e.MaxConcurrency
	}
	share := pool / extractorShare
	if sources == 0 || takes <= share {
		return Result{}, true
	}
	msg := fmt.Sprintf("the extractor's %d queue sources can take %d of the %d unreserved concurrency (quota %d), more than half: they would throttle the fact API and the pre token trigger, and nobody could sign in",
		sources, takes, pool, limit)
	fits := share / sources
	lowest := parameterMin(root, "ExtractorMaxConcurrency")
	quota := fmt.Sprintf("ask Service Quotas for \"Concurrent executions\" (Lambda) of at least %d, or of 1,000 (docs/scale.md)", limit-pool+extractorShare*sources*max(lowest, 1))
	if fits < max(lowest, 1) {
		return Result{Block, "concurrency", msg, "no ExtractorMaxConcurrency the template allows fits: " + quota}, false
	}
	return Result{Block, "concurrency", msg, fmt.Sprintf("set ExtractorMaxConcurrency=%d (each source at most %d, %d in all), or %s", fits, fits, fits*sources, quota)}, false
}

// parameterMin returns the MinValue of template.yaml's parameter name
// under root, 0 when it has none or the template cannot be read.
func parameterMin(root, name string) int {
	src, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		return 0
	}
	doc, err := samtemplate.Decode(src)
	if err != nil {
		return 0
	}
	params, _ := doc["Parameters"].(map[string]any)
	param, _ := params[name].(map[string]any)
	switch v := param["MinValue"].(type) {
	case int:
		return v
	case float64:
		return int(v)
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
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
