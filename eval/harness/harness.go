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
// turnCount) says so. The facts kept at the end are scored. Conversations
// that continue one another run as the threads of one user (RunThreads),
// and a Replayer gives the store the answers a report recorded instead of
// a model's.
//
// Tool turns are sent as the gateway sends them, but memory.Transcript
// never gives them to the model: the memory learns only what the user
// stated.
package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/score"
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
	store, err := memory.New(memorytest.NewRepo(), cfg, memory.WithModel(rec))
	if err != nil {
		return nil, err
	}
	sc := memory.Scope{TenantID: TenantID, UserID: convs[0].ID}
	out := make([]score.Conversation, len(convs))
	for i, conv := range convs {
		if out[i], err = runThread(ctx, store, rec, sc, fmt.Sprintf("th-%d", i+1), conv); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runThread runs conv as thread threadID of the user of sc and scores the
// facts the user has when it ends.
func runThread(ctx context.Context, store *memory.Store, rec *recorder, sc memory.Scope, threadID string, conv gold.Conversation) (score.Conversation, error) {
	for _, k := range conv.Known {
		if _, err := store.UpsertFact(ctx, sc, k.Key, k.Value); err != nil {
			return score.Conversation{}, fmt.Errorf("%s: known fact %q: %w", conv.ID, k.Key, err)
		}
	}
	var calls []score.Call
	messages, due, count := 0, 0, 0
	var read, pending []memory.Turn
	for _, call := range conv.Calls() {
		prev := count
		count += len(call)
		for _, t := range call {
			pending = append(pending, memory.Turn{Role: t.Role, Text: t.Text})
		}
		messages++
		if !store.IsExtractDue(prev, count) {
			continue
		}
		due++
		cctx, cancel := context.WithTimeout(ctx, CallTimeout)
		res, err := store.Extract(cctx, memory.ExtractRequest{Scope: sc, ThreadID: threadID,
			PreviousTurnCount: prev, TurnCount: count, Turns: pending, ContextTurns: read})
		cancel()
		if err != nil {
			return score.Conversation{}, fmt.Errorf("%s: extract at turn %d: %w", conv.ID, count, err)
		}
		read, pending = append(read, pending...), nil
		if res.ModelCalls == 0 {
			continue
		}
		c := rec.take()
		c.InputTokens, c.OutputTokens = res.Usage.InputTokens, res.Usage.OutputTokens
		if res.Outcome == memory.OutcomeModelFailed || res.Outcome == memory.OutcomeBadAnswer {
			c.Failed = string(res.Outcome)
			c.Error = redact(res.Reported)
		}
		calls = append(calls, c)
	}
	facts, err := store.GetFacts(ctx, sc)
	if err != nil {
		return score.Conversation{}, err
	}
	out := score.Score(conv, facts, calls)
	out.Messages, out.Due, out.UnreadTurns = messages, due, len(pending)
	return out, nil
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
	c := score.Call{Latency: time.Since(start), RequestSHA256: RequestSHA256(req), Operations: []score.Operation{}}
	if lat, ok := r.model.(interface{ lastLatency() time.Duration }); ok {
		c.Latency = lat.lastLatency()
	}
	for _, op := range ans.Operations {
		c.Operations = append(c.Operations, score.Operation{Op: op.Op, Key: op.Key, Value: op.Value})
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
