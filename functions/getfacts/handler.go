// Command getfacts is the Lambda function of GET /v1/me/facts and GET
// /v1/users/{userId}/facts: the facts of a user, sorted by key, with the
// caps a frontend shows next to them.
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// routes are the route keys this function serves, as in template.yaml.
var routes = []string{"GET /v1/me/facts", "GET /v1/users/{userId}/facts"}

func newHandler(store *memory.Store, auth httpapi.Auth, log *slog.Logger) (*httpapi.Handler, error) {
	return httpapi.New(auth, log, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		facts, err := store.GetFacts(ctx, r.Scope)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, httpapi.NewFactsBody(facts, store.Limits()), nil
	}, routes...)
}
