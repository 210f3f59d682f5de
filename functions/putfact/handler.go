// Command putfact is the Lambda function of PUT /v1/me/facts/{key} and PUT
// /v1/users/{userId}/facts/{key}: one fact set by hand, body {"value": …}
// with an optional "origin" (manual, or remember_tool for a gateway that
// forwards an approved remember call) and an optional "validUntil" (the
// last day of a temporary fact, "YYYY-MM-DD").
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// newHandler serves the routes of this function, as in template.yaml: it
// sets the fact of the path's key to the body's value, of the body's
// origin, until the body's end date if any, and answers it.
var newHandler = httpapi.NewHandlerFor([]string{"PUT /v1/me/facts/{key}", "PUT /v1/users/{userId}/facts/{key}"},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		f, err := s.Put(ctx, r.Scope, memory.FactInput{Key: r.Key, Value: r.Value, Origin: r.Origin, ValidUntil: r.ValidUntil})
		return httpapi.FactBody{Fact: httpapi.FactOf(f)}, err
	})
