// Command threadchanges is the Lambda function of GET
// /v1/me/threads/{threadId}/changes and POST
// /v1/me/threads/{threadId}/changes/{key}/undo, and of their admin twins
// under /v1/users/{userId}: what one conversation's extractions changed
// since a time (memory.Store.ThreadChanges), the gateway's "Memory
// updated", and the user's Undo of one of those changes
// (memory.Store.UndoChange).
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// Route keys of this function, as in template.yaml.
const (
	routeMe        = "GET /v1/me/threads/{threadId}/changes"
	routeAdmin     = "GET /v1/users/{userId}/threads/{threadId}/changes"
	routeUndoMe    = "POST /v1/me/threads/{threadId}/changes/{key}/undo"
	routeUndoAdmin = "POST /v1/users/{userId}/threads/{threadId}/changes/{key}/undo"
)

// newHandler serves the routes of this function: the thread's changes
// since the since query parameter (all without it), or the undo of one.
var newHandler = httpapi.NewHandlerFor([]string{routeMe, routeAdmin, routeUndoMe, routeUndoAdmin},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		if r.Route == routeUndoMe || r.Route == routeUndoAdmin {
			u, err := s.UndoChange(ctx, r.Scope, r.ThreadID, r.Key)
			return httpapi.NewUndoneBody(r.ThreadID, u), err
		}
		cs, err := s.ThreadChanges(ctx, r.Scope, r.ThreadID, r.Since)
		return httpapi.NewChangesBody(r.ThreadID, cs), err
	})
