// Command forgetthread is the Lambda function of DELETE
// /v1/me/threads/{threadId}/facts and DELETE
// /v1/users/{userId}/threads/{threadId}/facts: what one conversation
// taught the user forgotten (memory.Store.ForgetThread), with a fence
// that keeps the thread's messages sent before it from bringing any of it
// back. It answers 200 with what was forgotten.
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// Route keys of this function, as in template.yaml.
const (
	routeMe    = "DELETE /v1/me/threads/{threadId}/facts"
	routeAdmin = "DELETE /v1/users/{userId}/threads/{threadId}/facts"
)

// newHandler serves the routes of this function: it forgets the facts
// the thread taught and answers with them.
var newHandler = httpapi.NewHandlerFor([]string{routeMe, routeAdmin},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		f, err := s.ForgetThread(ctx, r.Scope, r.ThreadID)
		return httpapi.NewForgottenThreadBody(f), err
	})
