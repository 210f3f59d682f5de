// Command putfact is the Lambda function of PUT /v1/me/facts/{key} and PUT
// /v1/users/{userId}/facts/{key}: one fact set by hand, body {"value": …}.
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// routes are the route keys this function serves, as in template.yaml.
var routes = []string{"PUT /v1/me/facts/{key}", "PUT /v1/users/{userId}/facts/{key}"}

func newHandler(store *memory.Store, auth httpapi.Auth, log *slog.Logger) (*httpapi.Handler, error) {
	return httpapi.New(auth, log, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		f, err := store.UpsertFact(ctx, r.Scope, r.Key, r.Value)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, httpapi.FactBody{Fact: httpapi.FactOf(f)}, nil
	}, routes...)
}
