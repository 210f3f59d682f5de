// Command pendingfact is the Lambda function of POST
// /v1/me/pending/{key}/keep and DELETE /v1/me/pending/{key}: the user's
// answer to a fact of a special category that waits for their yes. Keep
// moves it to the facts, read into every prompt from then on; discard
// drops it. Only the user answers (it is their consent): there is no
// admin route. Each answer leaves an audit line.
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// Route keys of this function, as in template.yaml.
const (
	routeKeep    = "POST /v1/me/pending/{key}/keep"
	routeDiscard = "DELETE /v1/me/pending/{key}"
)

// newHandler serves the routes of this function: keep answers 200 with
// the kept fact, discard 204 (also when nothing was pending).
var newHandler = httpapi.NewHandlerFor([]string{routeKeep, routeDiscard},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		if r.Route == routeDiscard {
			return nil, s.DiscardPending(ctx, r.Scope, r.Key)
		}
		f, err := s.KeepPending(ctx, r.Scope, r.Key)
		return httpapi.FactBody{Fact: httpapi.FactOf(f)}, err
	})
