// Command getfacts is the Lambda function of GET /v1/me/facts and GET
// /v1/users/{userId}/facts: the facts of a user, sorted by key, the facts
// that wait for the user's yes, and the caps a frontend shows next to
// them.
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// newHandler serves the routes of this function, as in template.yaml: it
// lists the user's facts and pending facts, sorted by key, with the
// store's caps.
var newHandler = httpapi.NewHandlerFor([]string{"GET /v1/me/facts", "GET /v1/users/{userId}/facts"},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		m, err := s.GetFactsAndPending(ctx, r.Scope)
		return httpapi.NewFactsBody(s, m), err
	})
