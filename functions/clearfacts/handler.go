// Command clearfacts is the Lambda function of DELETE /v1/me/facts and
// DELETE /v1/users/{userId}/facts: every fact of a user forgotten, the
// record kept.
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// newHandler serves the routes of this function, as in template.yaml: it
// forgets every fact of the user and keeps the record.
var newHandler = httpapi.NewHandlerFor([]string{"DELETE /v1/me/facts", "DELETE /v1/users/{userId}/facts"},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		return nil, s.Clear(ctx, r.Scope)
	})
