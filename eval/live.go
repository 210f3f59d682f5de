package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/eval/harness"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
)

// FailuresInARow is the number of failed model calls in a row after
// which a live run stops: a model the account may not call, a wrong
// region or an exhausted quota fails every call, and the run would pay
// for nothing.
const FailuresInARow = 3

// knownPrices are on-demand prices in USD per million input and output
// tokens, US East, for the models whose price docs/cost.md states with
// its source (a test holds the two to each other). Any other model needs
// -price.
var knownPrices = map[string][2]float64{
	DefaultModelID: {0.035, 0.14},
}

// liveRun runs the conversations, then the import cases, against Amazon
// Bedrock (the imports with the MEMORY_IMPORT prompt): it checks the
// credentials, prints what the run is expected to cost, asks before the
// first call (unless -yes) and stops after FailuresInARow failed calls.
func liveRun(ctx context.Context, o options, su *setup, st streams) ([]score.Conversation, error) {
	su.run.Backend = score.BackendBedrock
	client, region, err := liveClient(ctx, o.region)
	if err != nil {
		return nil, err
	}
	su.run.Region = region
	price, err := priceOf(o)
	if err != nil {
		return nil, err
	}
	est, err := estimate(ctx, su)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(st.stderr, "eval: %d conversations and %d import cases against Bedrock %s in %s: %s\n", len(su.convs), len(su.imports), o.modelID, region, est.describe(price))
	if o.judgeModel != "" {
		fmt.Fprintf(st.stderr, "eval: -judge %s adds one call per kept value the rules do not accept (unknown before the run)\n", o.judgeModel)
	}
	if !o.yes {
		if err := confirm(st); err != nil {
			return nil, err
		}
	}
	model := bedrock.New(client, bedrock.WithOutputMode(su.mode), bedrock.WithAttemptTimeout(60*time.Second))
	rctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	br := &breaker{model: model, limit: FailuresInARow, stop: stop}
	su.run.StartedAt = time.Now().UTC().Truncate(time.Second)
	scores, err := RunAll(rctx, br, su.cfg, su.convs, o.parallel, func(c score.Conversation) {
		fmt.Fprintf(st.stderr, "eval: %s F1 %.2f (precision %.2f recall %.2f)\n", c.ID, c.F1, c.Precision, c.Recall)
	})
	if cause := context.Cause(rctx); errors.Is(cause, errStopped) {
		return nil, cause
	}
	if err != nil {
		return nil, err
	}
	su.importScores, err = harness.RunImports(rctx, br, su.cfg, su.imports)
	if cause := context.Cause(rctx); errors.Is(cause, errStopped) {
		return nil, cause
	}
	return scores, err
}

// estimation is what a run is expected to take: its model calls and the
// tokens the stand-in counted for them (the request's bytes / 4 and its
// own answer's).
type estimation struct {
	calls, inputTokens, outputTokens int
}

// estimate runs the conversations on the stand-in, in the process, to
// count the calls and tokens of a live run.
func estimate(ctx context.Context, su *setup) (estimation, error) {
	s, err := fakebedrock.Start("")
	if err != nil {
		return estimation{}, fmt.Errorf("start the Converse stand-in for the estimate: %w", err)
	}
	defer s.Close()
	model := bedrock.New(StandInClient(s.URL()), bedrock.WithOutputMode(su.mode))
	scores, err := RunAll(ctx, model, su.cfg, su.convs, 4, nil)
	if err != nil {
		return estimation{}, fmt.Errorf("the estimate: %w", err)
	}
	imports, err := harness.RunImports(ctx, model, su.cfg, su.imports)
	if err != nil {
		return estimation{}, fmt.Errorf("the estimate of the imports: %w", err)
	}
	t, it := score.Sum(scores), score.SumImports(imports)
	return estimation{calls: t.ModelCalls + it.ModelCalls, inputTokens: t.InputTokens + it.InputTokens,
		outputTokens: t.OutputTokens + it.OutputTokens}, nil
}

// describe says the estimate, with its price in dollars when known.
func (e estimation) describe(price [2]float64) string {
	s := fmt.Sprintf("about %d model calls, %d input and %d output tokens (counted on the stand-in: bytes / 4; a model's own answers may be longer)",
		e.calls, e.inputTokens, e.outputTokens)
	if price == [2]float64{} {
		return s + "; price unknown for this model: pass -price IN,OUT (USD per million tokens) to see it in dollars"
	}
	usd := float64(e.inputTokens)*price[0]/1e6 + float64(e.outputTokens)*price[1]/1e6
	return s + fmt.Sprintf(", about $%.4f at $%g / $%g per million input / output tokens", usd, price[0], price[1])
}

// priceOf returns the price of -price, or of the model when it is
// known; the zero price when neither.
func priceOf(o options) ([2]float64, error) {
	if o.price == "" {
		return knownPrices[o.modelID], nil
	}
	in, out, ok := strings.Cut(o.price, ",")
	pin, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
	pout, err2 := strconv.ParseFloat(strings.TrimSpace(out), 64)
	if !ok || err1 != nil || err2 != nil || pin < 0 || pout < 0 {
		return [2]float64{}, fmt.Errorf("-price %q: give USD per million input and output tokens, as 0.06,0.24", o.price)
	}
	return [2]float64{pin, pout}, nil
}

// errNotStarted is the answer of a person who did not say yes.
var errNotStarted = errors.New("not started: answer y to start, or pass -yes")

// confirm asks on stderr and reads the answer from stdin: y or yes
// starts the run.
func confirm(st streams) error {
	fmt.Fprint(st.stderr, "eval: start the run? [y/N] ")
	line, err := bufio.NewReader(st.stdin).ReadString('\n')
	if err != nil && line == "" {
		return errNotStarted
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errNotStarted
}

// errStopped is wrapped by the error of a run that the breaker stopped.
var errStopped = errors.New("stopped")

// breaker is a memory.Model that stops the run, through stop, when limit
// calls in a row failed, with the last error.
type breaker struct {
	model memory.Model
	limit int
	stop  context.CancelCauseFunc
	mu    sync.Mutex
	inRow int
}

// Extract implements memory.Model.
func (b *breaker) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	ans, err := b.model.Extract(ctx, req)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		b.inRow = 0
		return ans, nil
	}
	b.inRow++
	if b.inRow == b.limit {
		b.stop(fmt.Errorf("%w after %d failed model calls in a row; the last: %w", errStopped, b.inRow, err))
	}
	return ans, err
}
