// Package faulte2e tests usermemory on the local stack while its
// dependencies misbehave, with the faults of package localtest/fault: a
// DynamoDB that stalls or throttles, an SQS that stalls. The fact API must
// answer 503 problem+json within its bound, lose no acknowledged write and
// half-apply none; the extractor must lose no message; everything must
// recover without a restart. The stack starts once, in TestMain, apart
// from the e2e suite's: a fault stops every request of the stack, so the
// tests here run one at a time.
//
// Each test logs its figures ("figure: …"); BENCHMARKS.md, "When a
// dependency stalls", gives them with the command that prints them.
package faulte2e

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/localtest/fault"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/localtest/stack/stacktest"
)

var (
	st     *stack.Stack
	api    *factapi.Client
	sqsAPI *sqs.Client
	tenant = "acme"
)

// visibility is the queues' visibility timeout here: short, so that a
// record reported as failed comes back in seconds, yet longer than a
// batch takes under the faults below (a stalled record takes the SDK's 4
// attempts of 2 s), so that no message in flight is delivered a second
// time: Lambda advises six times the function's timeout, which the
// template follows (360 s).
const visibility = 20 * time.Second

func TestMain(m *testing.M) {
	opts := stack.Options{VisibilityTimeout: visibility, PollWait: time.Second, MaxEnvironments: 8}
	os.Exit(stacktest.Main("faulte2e", opts, func(s *stack.Stack) int {
		st = s
		api = &factapi.Client{BaseURL: st.Info.APIURL, HTTP: &http.Client{Timeout: 30 * time.Second}}
		// The test's own SQS client reads the queues on moto, past the faults.
		sqsAPI = stacktest.SQSClient(st, nil)
		return m.Run()
	}))
}

// inject sets a fault on service until the test ends.
func inject(t *testing.T, service string, s fault.Spec) {
	t.Helper()
	in := st.Fault(service)
	if err := in.Set(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Clear)
}

// newUser returns a user ID no other test uses.
var newUser = stacktest.NewUser

// userToken returns a token of the user scope for user of the tenant.
func userToken(t *testing.T, user string) string {
	t.Helper()
	return stacktest.Sign(t, st, stacktest.Claims(st, tenant, user, st.Info.UserScope))
}

// recovered waits until the API answers tok's GET with 200 again, and
// returns how long that took.
func recovered(t *testing.T, tok string, within time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for time.Since(began) < within {
		if r := api.Call(t, http.MethodGet, "/v1/me/facts", tok, nil); r.Status == http.StatusOK {
			return time.Since(began)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the API did not answer 200 within %s of the fault's end", within)
	return 0
}

// queueDepth counts the messages of the queue at queueURL that are
// visible or in flight.
func queueDepth(t *testing.T, queueURL string) int { return stacktest.Depth(t, sqsAPI, queueURL) }
