package main

import (
	"log/slog"
	"os"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/functions/wire"
)

// main reads the retention windows, then builds the function once per
// execution environment from the environment (see wire.ServeFactAPI) and
// serves its routes. Windows missing or out of bounds stop it before
// lambda.Start, saying which.
func main() {
	r, err := setup.RetentionFromEnv(os.Getenv)
	if err != nil {
		httpapi.NewLogger(os.Stdout).Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	wire.ServeFactAPI(newHandler(r))
}
