// Command clearfacts is the Lambda function of DELETE /v1/me/facts and
// DELETE /v1/users/{userId}/facts: every fact of a user forgotten, the
// record kept.
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// routes are the route keys this function serves, as in template.yaml.
var routes = []string{"DELETE /v1/me/facts", "DELETE /v1/users/{userId}/facts"}

func newHandler(store *memory.Store, auth httpapi.Auth, log *slog.Logger) (*httpapi.Handler, error) {
	return httpapi.New(auth, log, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		if err := store.Clear(ctx, r.Scope); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	}, routes...)
}
