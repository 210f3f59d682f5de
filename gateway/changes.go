package gateway

import (
	"context"
	"time"

	"github.com/usermemory/usermemory/memory"
)

// Changes returns what thread t's extractions set since since
// (memory.Store.ThreadChanges), each with the value it replaced: what a
// host shows as "Memory updated: home city → Porto · Undo" after an answer
// whose extraction ran. One read. Errors: those of
// memory.Store.ThreadChanges.
func (g *Gateway) Changes(ctx context.Context, t *Thread, since time.Time) ([]memory.Change, error) {
	var out []memory.Change
	err := g.retry.do(ctx, func(ctx context.Context) error {
		var err error
		out, err = g.cfg.Store.ThreadChanges(ctx, t.Scope, t.ID, since)
		return err
	})
	return out, err
}

// Undo undoes thread t's setting of key, the user's Undo after "Memory
// updated" (memory.Store.UndoChange): the replaced value comes back, or a
// new fact goes, and a message of the thread sent before the undo cannot
// set it again. The call is retried by Config.Retry (a second undo finds
// the fact no longer the thread's and does nothing). Errors: those of
// memory.Store.UndoChange.
func (g *Gateway) Undo(ctx context.Context, t *Thread, key string) (memory.Undo, error) {
	g.known.drop(t.Scope)
	var out memory.Undo
	err := g.retry.do(ctx, func(ctx context.Context) error {
		var err error
		out, err = g.cfg.Store.UndoChange(ctx, t.Scope, t.ID, key)
		return err
	})
	return out, err
}
