package faulte2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/localtest/fault"
	"github.com/usermemory/usermemory/producer"
)

// gateway returns a producer that sends as a gateway does, through the
// SQS endpoint that faults can reach, with the given send timeout.
func gateway(timeout time.Duration) *producer.Producer {
	client := sqs.New(sqs.Options{Region: st.Info.Region, BaseEndpoint: aws.String(st.Info.SQSURL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	return producer.New(client, st.Info.QueueURL, producer.WithSendTimeout(timeout))
}

// extractThrough sends one due message for each of n new users while the
// fault is set on DynamoDB, then waits until every user's fact is stored.
// It fails t when a message is lost (its fact never stored) or moved to
// the dead-letter queue, and when the fault made no record fail (the test
// would prove nothing), and logs the figures.
func extractThrough(t *testing.T, name string, spec fault.Spec, n int) {
	t.Helper()
	p := gateway(producer.DefaultSendTimeout)
	_, _, failedBefore := st.EventSourceStats()
	dlqBefore := queueDepth(t, st.Info.DLQURL)
	inject(t, fault.DynamoDB.Name, spec)
	began := time.Now()
	users := make([]string, n)
	for i := range users {
		users[i] = newUser(name)
		m := producer.Message{TenantID: tenant, UserID: users[i], ThreadID: "th-1", TurnCount: 2,
			Turns: factapi.Turns("Hi, I'm Ana and I live in Lisbon.", "Olá Ana!")}
		if err := p.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	lost := n
	for end := time.Now().Add(3 * time.Minute); lost > 0 && time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		lost = 0
		for _, u := range users {
			if !hasFact(t, u, "home_city", "Lisbon") {
				lost++
			}
		}
	}
	_, _, failedAfter := st.EventSourceStats()
	retried := failedAfter - failedBefore
	dlq := queueDepth(t, st.Info.DLQURL) - dlqBefore
	t.Logf("figure: extractor through %s: %d messages, %d reported as failed and retried, %d lost, %d in the DLQ, all stored after %s",
		name, n, retried, lost, dlq, time.Since(began).Round(100*time.Millisecond))
	if lost > 0 || dlq > 0 {
		t.Errorf("%d of %d messages lost, %d in the dead-letter queue", lost, n, dlq)
	}
	if retried == 0 {
		t.Errorf("no record failed during the %s: the fault did not reach the extractor", name)
	}
}

// TestExtractorUnderDynamoDBStall: the records a DynamoDB stall catches
// are reported as batch item failures before the function's deadline and
// delivered again; none is lost and none reaches the dead-letter queue.
// The stall outlasts the SDK's attempts (4 of at most 2 s, with a
// backoff of milliseconds), so that a record fails rather than waits.
func TestExtractorUnderDynamoDBStall(t *testing.T) {
	extractThrough(t, "stall", fault.Spec{Kind: fault.Stall, For: extractorStall}, extractorMessages)
}

// The faults of the extractor's and the producer's tests, which
// BENCHMARKS.md describes: the messages sent, the stall and the
// throttling they meet, and the producer's send timeout.
const (
	extractorMessages = 6
	extractorStall    = 12 * time.Second
	extractorThrottle = 6 * time.Second
	sendTimeout       = time.Second
)

// TestExtractorUnderDynamoDBThrottling: the same under throttling, which
// the SDK retries first.
func TestExtractorUnderDynamoDBThrottling(t *testing.T) {
	extractThrough(t, "throttling", fault.Spec{Kind: fault.Throttle, For: extractorThrottle}, extractorMessages)
}

// TestProducerDuringSQSStall: a gateway's Send to a stalled SQS returns
// producer.ErrTimeout within its own timeout, and SQS serves again once
// the stall ends.
func TestProducerDuringSQSStall(t *testing.T) {
	const timeout = sendTimeout
	p := gateway(timeout)
	inject(t, fault.SQS.Name, fault.Spec{Kind: fault.Stall, For: 5 * time.Second})
	user := newUser("sqs-stall")
	m := producer.Message{TenantID: tenant, UserID: user, ThreadID: "th-1", TurnCount: 2,
		Turns: factapi.Turns("I'm Bea and I live in Porto.", "Olá Bea!")}
	began := time.Now()
	err := p.Send(context.Background(), m)
	took := time.Since(began)
	t.Logf("figure: producer Send during an SQS stall returned after %s (send timeout %s): %v", took.Round(time.Millisecond), timeout, err)
	if !errors.Is(err, producer.ErrTimeout) || took > timeout+time.Second {
		t.Errorf("Send during the stall: %v after %s, want ErrTimeout within about %s", err, took, timeout)
	}
	st.Fault(fault.SQS.Name).Clear()
	// Sending again is safe: the FIFO queue drops the copy if the held
	// send was applied.
	if err := gateway(producer.DefaultSendTimeout).Send(context.Background(), m); err != nil {
		t.Errorf("Send after the stall: %v", err)
	}
}

// hasFact reports whether user's fact key has value, through the API; an
// answer other than 200 (a 503 during the fault) is a no.
func hasFact(t *testing.T, user, key, value string) bool {
	t.Helper()
	r := api.Call(t, http.MethodGet, "/v1/me/facts", userToken(t, user), nil)
	var body struct{ Facts []factapi.Fact }
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &body) != nil {
		return false
	}
	return factapi.Values(body.Facts)[key] == value
}

// modelThrottles is how many model calls TestExtractorThroughBedrockThrottling
// throttles.
const modelThrottles = 2

// TestExtractorThroughBedrockThrottling throttles the model's next
// modelThrottles calls at the proxy in front of the stand-in: the model client retries
// them within the call, and the fact is stored without a redelivery.
func TestExtractorThroughBedrockThrottling(t *testing.T) {
	in := st.Fault(fault.Bedrock.Name)
	before := in.Status().Faulted
	inject(t, fault.Bedrock.Name, fault.Spec{Kind: fault.Throttle, Requests: modelThrottles})
	_, _, failedBefore := st.EventSourceStats()
	user := newUser("model-throttle")
	m := producer.Message{TenantID: tenant, UserID: user, ThreadID: "th-1", TurnCount: 2,
		Turns: factapi.Turns("Hi, I'm Ana and I live in Lisbon.", "Olá Ana!")}
	if err := gateway(producer.DefaultSendTimeout).Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Minute); !hasFact(t, user, "home_city", "Lisbon"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the fact was not stored within a minute")
		}
	}
	if n := in.Status().Faulted - before; n != modelThrottles {
		t.Errorf("%d model calls throttled, want %d", n, modelThrottles)
	}
	if _, _, failed := st.EventSourceStats(); failed != failedBefore {
		t.Errorf("%d records reported as failed; the model's retries should have absorbed the throttling", failed-failedBefore)
	}
}
