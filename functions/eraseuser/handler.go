// Command eraseuser is the Lambda function of DELETE /v1/users/{userId},
// the GDPR erasure of a user of the admin's tenant: the record goes and a
// fence stays, so that no extraction requested before writes afterwards.
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// routes are the route keys this function serves, as in template.yaml.
var routes = []string{"DELETE /v1/users/{userId}"}

func newHandler(store *memory.Store, auth httpapi.Auth, log *slog.Logger) (*httpapi.Handler, error) {
	return httpapi.New(auth, log, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		n, err := store.DeleteByUser(ctx, r.Scope)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, httpapi.ErasedBody{RemovedFacts: n}, nil
	}, routes...)
}
