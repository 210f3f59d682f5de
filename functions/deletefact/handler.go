// Command deletefact is the Lambda function of DELETE /v1/me/facts/{key}
// and DELETE /v1/users/{userId}/facts/{key}: one fact forgotten, 204 also
// when it was not there.
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// newHandler serves the routes of this function, as in template.yaml: it
// forgets the fact of the path's key, present or not.
var newHandler = httpapi.NewHandlerFor([]string{"DELETE /v1/me/facts/{key}", "DELETE /v1/users/{userId}/facts/{key}"},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		return nil, s.RemoveFact(ctx, r.Scope, r.Key)
	})
