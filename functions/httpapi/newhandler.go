package httpapi

import (
	"log/slog"

	"github.com/usermemory/usermemory/memory"
)

// NewHandlerFunc builds a function's handler over the store, with the
// authorization settings and the log. Each fact API function has one; its
// main hands it to the wiring (package functions/wire), its tests to
// httpapitest.
type NewHandlerFunc func(store *memory.Store, auth Auth, log *slog.Logger) (*Handler, error)
