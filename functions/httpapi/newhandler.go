package httpapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/usermemory/usermemory/memory"
)

// NewHandlerFunc builds a function's handler over the store, with the
// authorization settings and the log. Each fact API function has one; its
// main hands it to the wiring (package functions/wire), its tests to
// httpapitest.
type NewHandlerFunc func(store *memory.Store, auth RequestConfig, log *slog.Logger) (*Handler, error)

// StoreOp is what is particular to a fact API function: the operation of
// the memory core it runs on s for r, and the body of its answer, nil for
// none. An error is mapped by [ProblemFor]; the body returned with it is
// not used.
type StoreOp func(ctx context.Context, s *memory.Store, r Request) (body any, err error)

// NewHandlerFor returns the NewHandlerFunc of a fact API function that serves
// routes (route keys as in [New]) by running op on the store. A success
// answers 200 OK with op's body, or 204 No Content when op has none.
func NewHandlerFor(routes []string, op StoreOp) NewHandlerFunc {
	return func(store *memory.Store, auth RequestConfig, log *slog.Logger) (*Handler, error) {
		return New(auth, log, func(ctx context.Context, r Request) (int, any, error) {
			body, err := op(ctx, store, r)
			switch {
			case err != nil:
				return 0, nil, err
			case body == nil:
				return http.StatusNoContent, nil, nil
			}
			return http.StatusOK, body, nil
		}, routes...)
	}
}
