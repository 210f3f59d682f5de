package harness

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// ImportID is the ID every gold import case is imported under: an ID of
// memory.NewImportID's form, made at StartTime, the same on every run.
var ImportID = "imp-" + strconv.FormatInt(StartTime.UnixMilli(), 10) + "-goldcase"

// RunImport runs the import case c through a new memory.Store over model
// with cfg, as the extractor does with an import message: the known facts
// are stored first, as a user sets them by hand, then memory.Store.Import
// reads c's text, with c's source, at StartTime. It scores the pending
// facts the import proposed and the stored facts after it
// (score.ScoreImport), with the import's mark, outcome, model calls and
// tokens, every answer as the model gave it, and the harness's own check
// that the evidence of each proposal is a span of the pasted text
// ([QuoteProblem]). A failed import is scored as what it left (nothing
// proposed), with its error. Errors: an invalid cfg, a known fact the
// store refuses, or a store error.
func RunImport(ctx context.Context, model memory.Model, cfg memory.Config, c gold.ImportCase) (score.Import, error) {
	rec := &allCalls{model: model}
	store, err := memory.New(memorytest.NewRepo(), cfg, append(setup.StoreOptions(), memory.WithModel(rec), memory.WithClock(memorytest.StepClock(StartTime)))...)
	if err != nil {
		return score.Import{}, err
	}
	sc := memory.Scope{TenantID: TenantID, UserID: c.ID}
	for _, k := range c.Known {
		if _, err := store.Put(ctx, sc, memory.FactInput{Key: k.Key, Value: k.Value}); err != nil {
			return score.Import{}, fmt.Errorf("%s: known fact %q: %w", c.ID, k.Key, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, CallTimeout*memory.MaxImportParts)
	defer cancel()
	res, err := store.Import(cctx, memory.ImportRequest{Scope: sc, ImportID: ImportID, Source: c.Source, Text: c.Text,
		SentAt: StartTime, FinalAttempt: true})
	if err != nil {
		return score.Import{}, fmt.Errorf("%s: import: %w", c.ID, err)
	}
	mem, err := store.GetFactsAndPending(ctx, sc)
	if err != nil {
		return score.Import{}, err
	}
	var proposed []memory.Fact
	for _, f := range mem.Pending {
		if f.Origin == memory.OriginImported && f.SourceThreadID == ImportID {
			proposed = append(proposed, f)
		}
	}
	out := score.ScoreImport(c, proposed, mem.Facts)
	out.Status, out.Reason, out.LeftOut, out.Outcome = string(res.Mark.Status), res.Mark.Reason, res.Mark.LeftOut, string(res.Outcome)
	out.Error = redact(res.Reported)
	out.ModelCalls, out.InputTokens, out.OutputTokens = res.ModelCalls, res.Usage.InputTokens, res.Usage.OutputTokens
	out.Calls = append(out.Calls, rec.recorded()...)
	for _, f := range proposed {
		if p := QuoteProblem(f.Evidence, c.Turns); p != "" {
			out.BadQuotes++
			out.QuoteProblems = append(out.QuoteProblems, fmt.Sprintf("%s: %s", f.Key, p))
		}
	}
	return out, nil
}

// RunImports runs every import case, one after the other, and returns
// their scores in order. It stops at the first error.
func RunImports(ctx context.Context, model memory.Model, cfg memory.Config, cases []gold.ImportCase) ([]score.Import, error) {
	out := make([]score.Import, 0, len(cases))
	for _, c := range cases {
		s, err := RunImport(ctx, model, cfg, c)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// allCalls records every call of a model, with its answer as the model
// gave it, in call order: an import makes one call a part.
type allCalls struct {
	model memory.Model
	mu    sync.Mutex
	calls []score.Call
}

// Extract implements memory.Model.
func (a *allCalls) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	start := time.Now()
	ans, err := a.model.Extract(ctx, req)
	c := score.Call{Latency: time.Since(start), RequestSHA256: RequestSHA256(req), Operations: append([]score.Operation{}, ans.Operations...),
		InputTokens: ans.Usage.InputTokens, OutputTokens: ans.Usage.OutputTokens}
	if lat, ok := a.model.(interface{ lastLatency() time.Duration }); ok {
		c.Latency = lat.lastLatency()
	}
	if err != nil {
		c.ModelError, c.Malformed = redact(err), errors.Is(err, memory.ErrMalformedAnswer)
	}
	a.mu.Lock()
	a.calls = append(a.calls, c)
	a.mu.Unlock()
	return ans, err
}

func (a *allCalls) recorded() []score.Call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]score.Call{}, a.calls...)
}
