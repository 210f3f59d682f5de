// Command deletefact is the Lambda function of DELETE /v1/me/facts/{key}
// and DELETE /v1/users/{userId}/facts/{key}: one fact forgotten, 204 also
// when it was not there.
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// routes are the route keys this function serves, as in template.yaml.
var routes = []string{"DELETE /v1/me/facts/{key}", "DELETE /v1/users/{userId}/facts/{key}"}

func newHandler(store *memory.Store, auth httpapi.Auth, log *slog.Logger) (*httpapi.Handler, error) {
	return httpapi.New(auth, log, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		if err := store.RemoveFact(ctx, r.Scope, r.Key); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	}, routes...)
}
