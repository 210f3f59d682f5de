// Command eraseuser is the Lambda function of DELETE /v1/users/{userId},
// the GDPR erasure of a user of the admin's tenant: the record goes and a
// fence stays, so that no extraction requested before writes afterwards.
// Its answer says until when backups and queued messages may still hold
// the user's data (docs/privacy.md).
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// newHandler returns the handler builder of this function's routes, as in
// template.yaml: it erases the user and answers how many facts went and,
// from the stack's retention windows r, what remains until when.
func newHandler(r memory.Retention) httpapi.NewHandlerFunc {
	return httpapi.NewHandlerFor([]string{"DELETE /v1/users/{userId}"},
		func(ctx context.Context, s *memory.Store, req httpapi.Request) (any, error) {
			e, err := s.DeleteByUser(ctx, req.Scope, r)
			return httpapi.NewErasedBody(e), err
		})
}
