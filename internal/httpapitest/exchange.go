package httpapitest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
)

// HandlerFunc is the signature of the functions' handlers.
type HandlerFunc func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Exchange invokes h with payload through the Lambda runtime's JSON path
// and holds the request and the response to spec (see [Spec.Check]).
func Exchange(t testing.TB, spec *Spec, h HandlerFunc, payload []byte) events.APIGatewayV2HTTPResponse {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		t.Fatalf("event: %v", err)
	}
	resp := Invoke(t, h, payload)
	spec.Check(t, req, resp)
	return resp
}

// ProblemCode returns the code of a problem response, or 0 for any other.
func ProblemCode(resp events.APIGatewayV2HTTPResponse) int64 {
	if resp.Headers["content-type"] != "application/problem+json" {
		return 0
	}
	return problemCode(resp.Body)
}

// Now is the fixed time of [NewStore]'s clock.
var Now = time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)

// NewStore returns a store over repo with the default config and a clock
// fixed at [Now].
func NewStore(t testing.TB, repo memory.Repository) *memory.Store {
	t.Helper()
	s, err := memory.New(repo, memory.Config{}, memory.WithClock(func() time.Time { return Now }))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
