package gateway

import (
	"context"

	"github.com/usermemory/usermemory/memory"
)

// ForgetThread forgets what thread t taught its user: the facts learned
// in it (none set by hand, none a later thread confirmed) and its pending
// facts (memory.Store.ForgetThread), and returns them. Messages of the
// thread sent before it, still queued or with the model, bring none of it
// back. A host calls it when the user deletes a chat, or asks to forget
// "everything from that conversation"; the thread's turns are the host's
// to delete. The call is retried by Config.Retry (a second forget of the
// same thread forgets nothing more). Errors: those of
// memory.Store.ForgetThread.
func (g *Gateway) ForgetThread(ctx context.Context, t *Thread) (memory.ThreadForgetting, error) {
	g.known.drop(t.Scope)
	var out memory.ThreadForgetting
	err := g.retry.do(ctx, func(ctx context.Context) error {
		var err error
		out, err = g.cfg.Store.ForgetThread(ctx, t.Scope, t.ID)
		return err
	})
	return out, err
}
