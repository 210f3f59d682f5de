// Package e2e tests usermemory end to end on the local stack: real HTTP
// through the API Gateway emulator and its JWT authorizer, real SQS through
// moto_server and the event source emulator, the real function binaries
// under the Lambda Runtime Interface Emulator, and the Bedrock stand-in.
// The stack starts once, in TestMain.
package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/localtest/stack/stacktest"
	"github.com/usermemory/usermemory/localtest/token"
	"github.com/usermemory/usermemory/producer"
)

var (
	st       *stack.Stack
	sqsAPI   *sqs.Client
	gateway  *producer.Producer
	httpc    = &http.Client{Timeout: 30 * time.Second}
	api      *factapi.Client
	tenant   = "acme"
	deadline = 20 * time.Second
)

// stackOptions start the suite's stack. A short visibility timeout makes
// redelivery and the redrive to the dead-letter queue take seconds instead
// of the template's minutes; everything else is the template's. 16
// environments per function let the concurrent writes of forget_test.go
// race as they would in Lambda; an environment starts only when a request
// finds none idle.
var stackOptions = stack.Options{VisibilityTimeout: 2 * time.Second, PollWait: time.Second, MaxEnvironments: 16}

func TestMain(m *testing.M) {
	os.Exit(stacktest.Main("e2e", stackOptions, func(s *stack.Stack) int {
		st = s
		// The suite's clients record the user IDs, values and turns they
		// send and receive; scanLogs looks for them in the logs afterwards.
		httpc.Transport = traffic.wrap(httpc.Transport)
		api = &factapi.Client{BaseURL: st.Info.APIURL, HTTP: httpc}
		sqsAPI = stacktest.SQSClient(st, traffic.wrap(nil))
		gateway = producer.New(sqsAPI, st.Info.QueueURL)
		code := m.Run()
		if err := scanLogs(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "--- FAIL: log scan\n%v\n", err)
			code = 1
		}
		return code
	}))
}

// newUser returns a user ID no other test uses.
var newUser = stacktest.NewUser

type claims struct {
	tenant, user string
	scopes       []string
	mutate       func(*token.Claims)
}

func sign(t *testing.T, c claims) string {
	t.Helper()
	tc := stacktest.Claims(st, c.tenant, c.user, c.scopes...)
	if c.mutate != nil {
		c.mutate(&tc)
	}
	return stacktest.Sign(t, st, tc)
}

func userToken(t *testing.T, tenant, user string) string {
	return sign(t, claims{tenant: tenant, user: user, scopes: []string{st.Info.UserScope}})
}

func adminToken(t *testing.T, tenant, user string) string {
	return sign(t, claims{tenant: tenant, user: user, scopes: []string{st.Info.UserScope, st.Info.AdminScope}})
}

// facts reads the facts through the API, as a map of key to value.
func facts(t *testing.T, path, tok string) map[string]string {
	t.Helper()
	return factapi.Values(api.Facts(t, path, tok))
}

// waitFacts polls the facts until they are want or the deadline passes.
func waitFacts(t *testing.T, tok string, want map[string]string) {
	t.Helper()
	var got map[string]string
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if got = facts(t, "/v1/me/facts", tok); maps.Equal(got, want) {
			return
		}
	}
	t.Fatalf("facts = %v, want %v", got, want)
}

func sendTurns(t *testing.T, user, thread string, prev, count int, turns ...string) {
	t.Helper()
	m := producer.Message{TenantID: tenant, UserID: user, ThreadID: thread, PreviousTurnCount: prev, TurnCount: count, Turns: factapi.Turns(turns...)}
	if err := gateway.Send(context.Background(), m); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// waitQueueEmpty waits until no message of the queue is visible or in
// flight: every message sent so far has been handled or has moved on.
func waitQueueEmpty(t *testing.T, queueURL string) {
	t.Helper()
	if err := stack.WaitDrained(context.Background(), sqsAPI, queueURL, deadline); err != nil {
		t.Fatal(err)
	}
}

// queueDepth counts the messages of the queue at queueURL that are
// visible or in flight.
func queueDepth(t *testing.T, queueURL string) int { return stacktest.Depth(t, sqsAPI, queueURL) }
