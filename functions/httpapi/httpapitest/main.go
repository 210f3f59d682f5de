package httpapitest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/usermemory/usermemory/internal/motoserver"
)

// Endpoint is the moto_server endpoint that [Main] found or started.
var Endpoint string

// Main is the TestMain of the functions' packages: it finds or starts a
// moto_server (see motoserver.Endpoint), runs the tests and stops the server. It
// exits with the install hint when moto_server is missing: the tests never
// skip.
func Main(m *testing.M) {
	ep, stop, err := motoserver.Endpoint(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	Endpoint = ep
	code := m.Run()
	stop()
	os.Exit(code)
}
