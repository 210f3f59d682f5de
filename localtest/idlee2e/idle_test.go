// Package idlee2e tests the idle read end to end on the local stack
// (docs/extractor.md, "Idle read"): a thread whose newest turns were not
// due for extraction is read once after it has been idle, through the
// template's idle queue on moto_server, whose per-message delay the
// copies wait out, and the real extractor. The stack runs the template
// with IdleReadSeconds set to a few seconds, so that a test waits seconds
// rather than the default quarter of an hour.
package idlee2e

import (
	"context"
	"maps"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/localtest/stack/stacktest"
	"github.com/usermemory/usermemory/producer"
)

// idle is the stack's idle time (the template's IdleReadSeconds).
const idle = 5 * time.Second

var (
	st      *stack.Stack
	sqsAPI  *sqs.Client
	gateway *producer.Producer
	api     *factapi.Client
	tenant  = "acme"
	// deadline bounds every wait: the idle time and the polls around it.
	deadline = idle + 20*time.Second
)

func TestMain(m *testing.M) {
	opts := stack.Options{
		Parameters: map[string]string{"IdleReadSeconds": strconv.Itoa(int(idle / time.Second))},
		PollWait:   time.Second,
	}
	os.Exit(stacktest.Main("idlee2e", opts, func(s *stack.Stack) int {
		st = s
		api = &factapi.Client{BaseURL: st.Info.APIURL, HTTP: &http.Client{Timeout: 30 * time.Second}}
		sqsAPI = stacktest.SQSClient(st, nil)
		gateway = producer.New(sqsAPI, st.Info.QueueURL)
		return m.Run()
	}))
}

// send sends one extraction message of the user's thread, as a gateway
// does after an answer.
func send(t *testing.T, user, thread string, prev, count int, turns ...string) {
	t.Helper()
	m := producer.Message{TenantID: tenant, UserID: user, ThreadID: thread, PreviousTurnCount: prev, TurnCount: count, Turns: factapi.Turns(turns...)}
	if err := gateway.Send(context.Background(), m); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// factsOf reads the user's facts through the API.
func factsOf(t *testing.T, tok string) map[string]string {
	t.Helper()
	return factapi.Values(api.Facts(t, "/v1/me/facts", tok))
}

// waitFacts polls the facts until they are want, and returns when they
// were first seen so; it fails t at the deadline.
func waitFacts(t *testing.T, tok string, want map[string]string) time.Time {
	t.Helper()
	var got map[string]string
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if got = factsOf(t, tok); maps.Equal(got, want) {
			return time.Now()
		}
	}
	t.Fatalf("facts = %v, want %v", got, want)
	return time.Time{}
}

// idleDepth returns the idle queue's messages: delayed, visible and in
// flight.
func idleDepth(t *testing.T) int {
	t.Helper()
	out, err := sqsAPI.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(st.Info.IdleQueueURL),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, v := range out.Attributes {
		k, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s = %q", name, v)
		}
		n += k
	}
	return n
}

// waitIdleDrained waits until both queues hold nothing, delayed copies
// included: every message and every idle copy has been handled.
func waitIdleDrained(t *testing.T) {
	t.Helper()
	if err := stack.WaitDrained(context.Background(), sqsAPI, st.Info.QueueURL, deadline); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(deadline); idleDepth(t) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the idle queue still holds %d messages after %s", idleDepth(t), deadline)
		}
	}
}

// calls returns the model calls so far.
func calls() int {
	n, _ := st.Converse().Calls()
	return n
}

// firstAnswer sends the first answer of the user's thread, which is due,
// and waits for its fact.
func firstAnswer(t *testing.T, user, thread, tok string) {
	t.Helper()
	send(t, user, thread, 0, 2, "Hi, I'm Ana.", "Hello Ana!")
	waitFacts(t, tok, map[string]string{"name": "Ana"})
}

// TestIdleThreadIsReadOnce: a fact said at turn 4, which is not due
// (memory.IsExtractDue: after the first answer, then every 6 turns), is
// learned once the thread has been idle for the idle time, with one model
// call, and not before.
func TestIdleThreadIsReadOnce(t *testing.T) {
	st.Converse().Reset()
	user := stacktest.NewUser("idle")
	tok := stacktest.Sign(t, st, stacktest.Claims(st, tenant, user, st.Info.UserScope))
	firstAnswer(t, user, "th-1", tok)
	before := calls()
	sent := time.Now()
	send(t, user, "th-1", 2, 4, "I work as a nurse.", "Noted.")
	if err := stack.WaitDrained(context.Background(), sqsAPI, st.Info.QueueURL, deadline); err != nil {
		t.Fatal(err)
	}
	if got := factsOf(t, tok); !maps.Equal(got, map[string]string{"name": "Ana"}) && time.Since(sent) < idle {
		t.Fatalf("facts = %v before the idle time, want the not-due turn unread", got)
	}
	learned := waitFacts(t, tok, map[string]string{"name": "Ana", "role": "nurse"})
	if took := learned.Sub(sent); took < idle {
		t.Errorf("the idle turn was read %s after it was sent, before the idle time %s", took, idle)
	}
	waitIdleDrained(t)
	if n := calls(); n != before+1 {
		t.Errorf("model calls for the idle thread = %d, want 1", n-before)
	}
}

// TestNewerMessageSupersedes: a second message of the thread before the
// idle time supersedes the first one's delayed copy: the thread is read
// once, with the turns of both.
func TestNewerMessageSupersedes(t *testing.T) {
	st.Converse().Reset()
	user := stacktest.NewUser("supersede")
	tok := stacktest.Sign(t, st, stacktest.Claims(st, tenant, user, st.Info.UserScope))
	firstAnswer(t, user, "th-1", tok)
	before := calls()
	send(t, user, "th-1", 2, 4, "I work as a nurse.", "Noted.")
	time.Sleep(idle / 3)
	// The gateway sends the turns since the last extraction: those of both.
	send(t, user, "th-1", 4, 5, "I work as a nurse.", "Noted.", "Please answer in Portuguese.")
	waitFacts(t, tok, map[string]string{"name": "Ana", "role": "nurse", "preferred_language": "Portuguese"})
	waitIdleDrained(t)
	if n := calls(); n != before+1 {
		t.Errorf("model calls for two messages of one idle thread = %d, want 1", n-before)
	}
}

// TestClearBeforeIdleReadBringsNothingBack: a clear between the note and
// the idle read wins: the turns said before it are never read.
func TestClearBeforeIdleReadBringsNothingBack(t *testing.T) {
	st.Converse().Reset()
	user := stacktest.NewUser("clear")
	tok := stacktest.Sign(t, st, stacktest.Claims(st, tenant, user, st.Info.UserScope))
	firstAnswer(t, user, "th-1", tok)
	before := calls()
	send(t, user, "th-1", 2, 4, "I work as a nurse.", "Noted.")
	if err := stack.WaitDrained(context.Background(), sqsAPI, st.Info.QueueURL, deadline); err != nil {
		t.Fatal(err)
	}
	if r := api.Call(t, http.MethodDelete, "/v1/me/facts", tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE all = %d %s, want 204", r.Status, r.Body)
	}
	waitIdleDrained(t)
	if got := factsOf(t, tok); len(got) != 0 {
		t.Errorf("facts after the idle time = %v, want none: the clear came after the turns", got)
	}
	if n := calls(); n != before {
		t.Errorf("model calls after a clear = %d, want 0", n-before)
	}
}

// TestErasureBeforeIdleReadBringsNothingBack: so does an erasure.
func TestErasureBeforeIdleReadBringsNothingBack(t *testing.T) {
	st.Converse().Reset()
	user := stacktest.NewUser("erase")
	tok := stacktest.Sign(t, st, stacktest.Claims(st, tenant, user, st.Info.UserScope))
	admin := stacktest.Sign(t, st, stacktest.Claims(st, tenant, user, st.Info.UserScope, st.Info.AdminScope))
	firstAnswer(t, user, "th-1", tok)
	before := calls()
	send(t, user, "th-1", 2, 4, "I work as a nurse.", "Noted.")
	if err := stack.WaitDrained(context.Background(), sqsAPI, st.Info.QueueURL, deadline); err != nil {
		t.Fatal(err)
	}
	if r := api.Call(t, http.MethodDelete, "/v1/users/"+user, admin, nil); r.Status >= 300 {
		t.Fatalf("erase = %d %s, want 2xx", r.Status, r.Body)
	}
	waitIdleDrained(t)
	if got := factsOf(t, tok); len(got) != 0 {
		t.Errorf("facts after the idle time = %v, want none: the erasure came after the turns", got)
	}
	if n := calls(); n != before {
		t.Errorf("model calls after an erasure = %d, want 0", n-before)
	}
}
