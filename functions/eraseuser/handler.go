// Command eraseuser is the Lambda function of DELETE /v1/users/{userId},
// the GDPR erasure of a user of the admin's tenant: the record goes and a
// fence stays, so that no extraction requested before writes afterwards.
package main

import (
	"context"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/memory"
)

// newHandler serves the routes of this function, as in template.yaml: it
// erases the user and answers how many facts went.
var newHandler = httpapi.Function([]string{"DELETE /v1/users/{userId}"},
	func(ctx context.Context, s *memory.Store, r httpapi.Request) (any, error) {
		n, err := s.DeleteByUser(ctx, r.Scope)
		return httpapi.ErasedBody{RemovedFacts: n}, err
	})
