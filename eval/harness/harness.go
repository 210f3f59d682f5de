// Package harness runs the gold conversations of the memory evaluation
// through the real memory.Store, as the AI gateway and the extractor do,
// and scores the facts each one leaves (package score).
//
// Each conversation runs for a user of its own on an in-memory repository
// (memorytest): the known facts are set first, as a user sets them by
// hand; then the conversation is cut into the gateway's calls (a user turn
// and the turns that answer it), one message per call. As the gateway
// does, each message carries the turns since the last message for which
// an extraction was due, with the turns before them as context turns
// (the store keeps the newest within its ContextChars), and the
// extraction runs only when memory.Store.IsExtractDue(previousTurnCount,
// turnCount) says so. When the user leaves a thread whose last turns came
// after its last due message, those turns are read once, in one
// extraction, as the extractor's idle read does (at most one model call
// per thread); the memory is scored as the user left it (the beat alone)
// and after the idle read, the report's figures. Conversations
// that continue one another run as the threads of one user (RunThreads),
// and a Replayer gives the store the answers a report recorded instead of
// a model's.
//
// Tool turns are sent as the gateway sends them, but memory.Transcript
// never gives them to the model: the memory learns only what the user
// stated.
//
// The store runs on gold.Day, its clock one second on at every reading,
// so that end dates are known in advance and every request is the same on
// every run. What is scored is what the user's page shows
// (memory.Store.GetFactsAndPending): the stored facts and the pending ones. The harness
// checks on its own side, from the gold turns, that the evidence of
// every fact kept is a span of a user turn of the conversation it came
// from ([QuoteProblem]), apart from the store's own check.
package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TenantID is the tenant every conversation runs under; the user ID is
// the conversation's ID, or the first one's for the threads of one user
// (see [RunThreads]).
const TenantID = "eval"

// CallTimeout bounds one extraction, the model's retries included.
const CallTimeout = 2 * time.Minute

// Run runs conv through a new memory.Store over model with cfg and
// returns its score. A failed or refused model call is counted in the
// score, not returned. Errors: an invalid cfg, a known fact the store
// refuses, or a store error (none is expected of the in-memory repository).
func Run(ctx context.Context, model memory.Model, cfg memory.Config, conv gold.Conversation) (score.Conversation, error) {
	out, err := RunThreads(ctx, model, cfg, []gold.Conversation{conv})
	if err != nil {
		return score.Conversation{}, err
	}
	return out[0], nil
}

// RunThreads runs convs, in order, as the threads of one user (the first
// conversation's ID) on one new memory.Store: the facts one thread leaves
// are the next one's, and each thread is scored when it ends. Thread i
// (from 1) has the ID "th-i"; each conversation's known facts are set
// before its thread. Errors as for [Run].
func RunThreads(ctx context.Context, model memory.Model, cfg memory.Config, convs []gold.Conversation) ([]score.Conversation, error) {
	rec := &recorder{model: model}
	store, err := memory.New(memorytest.NewRepo(), cfg, append(setup.StoreOptions(), memory.WithModel(rec), memory.WithClock(memorytest.StepClock(StartTime)))...)
	if err != nil {
		return nil, err
	}
	sc := memory.Scope{TenantID: TenantID, UserID: convs[0].ID}
	out := make([]score.Conversation, len(convs))
	for i := range convs {
		if out[i], err = runThread(ctx, store, rec, sc, convs[:i+1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// StartTime is when the store's clock starts in every run: 09:00 UTC of
// gold.Day.
var StartTime = gold.Day.Add(9 * time.Hour)

// threadID is the ID of the thread of the i-th conversation (from 0) of
// a user.
func threadID(i int) string { return fmt.Sprintf("th-%d", i+1) }

// checkQuotes checks the evidence of every fact of mem against the
// conversation, among convs (the threads of the user so far), of the
// thread it came from, and records the count and the problems in c.
func checkQuotes(c *score.Conversation, mem memory.FactsAndPending, convs []gold.Conversation) {
	for _, f := range append(slices.Clone(mem.Facts), mem.Pending...) {
		if f.Origin != memory.OriginConversation {
			continue
		}
		i := -1
		for j := range convs {
			if threadID(j) == f.SourceThreadID {
				i = j
			}
		}
		c.QuotesChecked++
		problem := "from no thread of this user"
		if i >= 0 {
			problem = QuoteProblem(f.Evidence, convs[i].Turns)
		}
		if problem != "" {
			c.BadQuotes++
			c.QuoteProblems = append(c.QuoteProblems, fmt.Sprintf("%s: %s", f.Key, problem))
		}
	}
}

// runThread runs the last of threads, the conversations of the user of sc
// so far, as its thread and scores the memory the user has when it ends:
// under the beat, then after the idle read of the turns the beat left
// unread (see [thread.idleRead]). The memory as the user left the thread,
// before the idle read, is scored too (BeatOnly).
func runThread(ctx context.Context, store *memory.Store, rec *recorder, sc memory.Scope, threads []gold.Conversation) (score.Conversation, error) {
	conv := threads[len(threads)-1]
	for _, k := range conv.Known {
		if _, err := store.Put(ctx, sc, memory.FactInput{Key: k.Key, Value: k.Value}); err != nil {
			return score.Conversation{}, fmt.Errorf("%s: known fact %q: %w", conv.ID, k.Key, err)
		}
	}
	th := &thread{store: store, rec: rec, sc: sc, id: threadID(len(threads) - 1), conv: conv}
	if err := th.beat(ctx); err != nil {
		return score.Conversation{}, err
	}
	left, err := store.GetFactsAndPending(ctx, sc)
	if err != nil {
		return score.Conversation{}, err
	}
	unread := len(th.pending)
	idleRead, err := th.idleRead(ctx)
	if err != nil {
		return score.Conversation{}, err
	}
	mem, err := store.GetFactsAndPending(ctx, sc)
	if err != nil {
		return score.Conversation{}, err
	}
	out := score.ScoreMemory(conv, mem, th.calls)
	out.Messages, out.Due, out.UnreadTurns, out.IdleReadTurns = th.messages, th.due, unread, idleRead
	out.BeatOnly = score.BeatOnlyOf(score.ScoreMemory(conv, left, nil))
	checkQuotes(&out, mem, threads)
	return out, nil
}

// thread is one thread of a user as the gateway and the extractor run it:
// the calls made so far, the turns read and those not read yet.
type thread struct {
	store *memory.Store
	rec   *recorder
	sc    memory.Scope
	id    string
	conv  gold.Conversation

	calls         []score.Call
	messages, due int
	count, prev   int // the turns sent, and before the last message
	read, pending []memory.Turn
}

// beat sends the conversation's messages one per call, as the gateway
// does, and extracts each message that memory.Store.IsExtractDue finds
// due (the reference's beat at extractEveryTurns), with the turns since
// the last due message. The turns after the last due message stay in
// th.pending: the beat never reads them.
func (th *thread) beat(ctx context.Context) error {
	for _, call := range th.conv.Calls() {
		prev := th.count
		th.prev, th.count = prev, th.count+len(call)
		for _, t := range call {
			th.pending = append(th.pending, memory.Turn{Role: t.Role, Text: t.Text})
		}
		th.messages++
		if !th.store.IsExtractDue(prev, th.count) {
			continue
		}
		th.due++
		if _, err := th.extract(ctx, prev, false); err != nil {
			return fmt.Errorf("%s: extract at turn %d: %w", th.conv.ID, th.count, err)
		}
	}
	return nil
}

// idleRead is the production extractor's read of an idle thread: once the
// user has left, the turns after the last due message, if any, are read in
// one extraction (at most one model call per thread), after the turns
// read before as context: the request of the thread's last message, as
// its delayed copy brings it back. It returns the turns it gave a model that
// answered: 0 when there was no tail, or when the call failed, was refused
// or made none (those turns stay never read).
func (th *thread) idleRead(ctx context.Context) (int, error) {
	n := len(th.pending)
	if n == 0 {
		return 0, nil
	}
	res, err := th.extract(ctx, th.prev, true)
	if err != nil {
		return 0, fmt.Errorf("%s: idle read of the last %d turns: %w", th.conv.ID, n, err)
	}
	if res.ModelCalls == 0 || res.Outcome == memory.OutcomeModelFailed || res.Outcome == memory.OutcomeBadAnswer {
		return 0, nil
	}
	return n, nil
}

// extract runs one extraction of th.pending, from turn count prev to
// th.count, with th.read as context, and records its model call (idle
// for the idle read).
func (th *thread) extract(ctx context.Context, prev int, idle bool) (memory.ExtractResult, error) {
	cctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	res, err := th.store.Extract(cctx, memory.ExtractRequest{Scope: th.sc, ThreadID: th.id,
		PreviousTurnCount: prev, TurnCount: th.count, Turns: th.pending, ContextTurns: th.read})
	if err != nil {
		return res, err
	}
	th.read, th.pending = append(th.read, th.pending...), nil
	if res.ModelCalls == 0 {
		return res, nil
	}
	c := th.rec.take()
	c.Idle = idle
	c.InputTokens, c.OutputTokens = res.Usage.InputTokens, res.Usage.OutputTokens
	c.Unsupported, c.Secrets, c.Ended, c.Pending = res.Unsupported, res.Secrets, res.Ended, res.Pending
	if res.Outcome == memory.OutcomeModelFailed || res.Outcome == memory.OutcomeBadAnswer {
		c.Failed = string(res.Outcome)
		c.Error = redact(res.Reported)
	}
	th.calls = append(th.calls, c)
	return res, nil
}

// recorder times the calls of a model and records each answer as the
// model gave it, before the store judges it.
type recorder struct {
	model memory.Model
	mu    sync.Mutex
	last  score.Call
}

// Extract implements memory.Model.
func (r *recorder) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	start := time.Now()
	ans, err := r.model.Extract(ctx, req)
	c := score.Call{Latency: time.Since(start), RequestSHA256: RequestSHA256(req), Operations: append([]score.Operation{}, ans.Operations...)}
	if lat, ok := r.model.(interface{ lastLatency() time.Duration }); ok {
		c.Latency = lat.lastLatency()
	}
	if err != nil {
		c.ModelError, c.Malformed = redact(err), errors.Is(err, memory.ErrMalformedAnswer)
	}
	r.mu.Lock()
	r.last = c
	r.mu.Unlock()
	return ans, err
}

func (r *recorder) take() score.Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// RequestSHA256 returns the hex SHA-256 of what a model request asks:
// its model ID, system prompt and transcript.
func RequestSHA256(req memory.ModelRequest) string {
	h := sha256.New()
	for _, s := range []string{req.ModelID, req.System, req.Transcript} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// requestIDs are the request IDs of AWS errors, which differ between runs.
var requestIDs = regexp.MustCompile(`(?i)request ?id: [0-9a-z-]+`)

// redact returns the reported error of a failed call as a line for the
// report: the store's message and the model's cause, without request IDs.
func redact(err error) string {
	if err == nil {
		return ""
	}
	return requestIDs.ReplaceAllString(err.Error(), "RequestID: …")
}
