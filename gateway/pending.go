package gateway

import (
	"context"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// PendingFact is a fact of a special category that the extractor learned
// and that waits for the user's yes before any prompt holds it.
type PendingFact struct {
	memory.Fact
	// Until is when it is dropped if the user does not answer
	// (memory.Store.PendingUntil).
	Until time.Time
}

// Pending returns the user's pending facts, sorted by key, for the host
// to show with a "keep" and a "discard" choice; a pending fact is never in
// [Gateway.SystemPrompt]. A host calls it after the answers that were
// due for an extraction. The read is retried by Config.Retry. Errors:
// those of memory.Store.GetFactsAndPending.
func (g *Gateway) Pending(ctx context.Context, sc memory.Scope) ([]PendingFact, error) {
	var m memory.FactsAndPending
	err := g.retry.do(ctx, func(ctx context.Context) error {
		var err error
		m, err = g.cfg.Store.GetFactsAndPending(ctx, sc)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]PendingFact, 0, len(m.Pending))
	for _, f := range m.Pending {
		out = append(out, PendingFact{Fact: f, Until: g.cfg.Store.PendingUntil(f)})
	}
	return out, nil
}

// Keep is the user's yes to the pending fact of key: it becomes a fact,
// in the prompt of every later answer. Only the user may give it, never
// the model: a host calls Keep from its own user interface, not from a
// tool. It returns the kept fact. Errors: those of
// memory.Store.KeepPending (404 memory.CodePendingNotFound when nothing
// waits under key).
func (g *Gateway) Keep(ctx context.Context, sc memory.Scope, key string) (memory.Fact, error) {
	g.known.drop(sc)
	return g.cfg.Store.KeepPending(ctx, sc, key)
}

// Discard is the user's no to the pending fact of key: it is dropped, and
// extractions already queued do not propose it again. Discarding a key
// with nothing pending changes nothing. Errors: those of
// memory.Store.DiscardPending.
func (g *Gateway) Discard(ctx context.Context, sc memory.Scope, key string) error {
	return g.cfg.Store.DiscardPending(ctx, sc, key)
}
