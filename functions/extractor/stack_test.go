package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
)

// The tests of this file run the function as main wires it, through the
// real SDK clients, on the moto_server of the environment (DynamoDB and
// SQS; see motoserver.Endpoint) and a Converse stand-in. Without a
// moto_server they are skipped.

var staticCreds = credentials.NewStaticCredentialsProvider("test", "test", "")

func dynamoClient(tb testing.TB) *dynamodb.Client {
	tb.Helper()
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(motoserver.Endpoint(tb)), Credentials: staticCreds})
}

func sqsClient(tb testing.TB) *sqs.Client {
	tb.Helper()
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(motoserver.Endpoint(tb)), Credentials: staticCreds})
}

var nameSeq atomic.Int64

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), nameSeq.Add(1))
}

func newTable(tb testing.TB) string {
	tb.Helper()
	name := uniqueName("extractor")
	if err := dynamorepo.CreateTable(context.Background(), dynamoClient(tb), name); err != nil {
		tb.Fatalf("CreateTable: %v", err)
	}
	return name
}

// stack is the function as main wires it (fromEnv), over a fresh table of
// moto_server and a Converse stand-in, with logs and metrics captured.
type stack struct {
	fixture
	standIn *fakebedrock.Server
	repo    *dynamorepo.Repo
	table   string
}

// newStack builds the function through fromEnv with env added to the
// settings (TABLE_NAME defaults to a fresh table).
func newStack(t *testing.T, env map[string]string) *stack {
	t.Helper()
	s := &stack{table: newTable(t)}
	standIn, err := fakebedrock.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standIn.Close() })
	s.standIn = standIn
	vars := map[string]string{
		"TABLE_NAME":                       s.table,
		"AWS_ENDPOINT_URL_DYNAMODB":        motoserver.Endpoint(t),
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": standIn.URL(),
		"AWS_REGION":                       "us-east-1",
		"AWS_ACCESS_KEY_ID":                "test",
		"AWS_SECRET_ACCESS_KEY":            "test",
		// The subject is the wiring (SQS, DynamoDB, the Converse wire), not
		// evidence: the stand-in's rule-based answers carry none yet. This
		// also runs the EVIDENCE_CHECK setting through fromEnv.
		"EVIDENCE_CHECK": "off",
		// The idle read needs its queue (idle_test.go); off unless env
		// gives one.
		"IDLE_READ_SECONDS": "0",
	}
	for k, v := range env {
		vars[k] = v
	}
	// The SDK configuration comes from the process environment, as in
	// Lambda; the settings from the same variables.
	for k, v := range vars {
		t.Setenv(k, v)
	}
	s.logs, s.metrics = &syncBuffer{}, &syncBuffer{}
	h, err := fromEnv(context.Background(), os.Getenv, slog.New(slog.NewJSONHandler(s.logs, nil)), s.metrics)
	if err != nil {
		t.Fatalf("fromEnv: %v", err)
	}
	s.h = h
	s.repo = dynamorepo.New(dynamoClient(t), s.table)
	return s
}

func (s *stack) modelCalls() int {
	n, _ := s.standIn.Calls()
	return n
}

func (s *stack) record(t *testing.T, sc memory.Scope) memory.Record {
	t.Helper()
	rec, err := s.repo.Get(context.Background(), sc)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return rec
}

func TestStackFirstAnswerRedeliveryAndNotDue(t *testing.T) {
	s := newStack(t, nil)
	ctx := context.Background()
	if got := failedIDs(s.invoke(t, ctx, event(t, "extractor-first-answer.json"))); len(got) != 0 {
		t.Fatalf("failures = %v, want none", got)
	}
	rec := s.record(t, ana)
	want := map[string]string{"name": "Ana", "home_city": "Lisbon", "preferred_language": "Portuguese"}
	if got := factMap(rec.Facts); !reflect.DeepEqual(got, want) {
		t.Errorf("facts in DynamoDB = %v, want %v", got, want)
	}
	if s.modelCalls() != 1 {
		t.Errorf("model calls = %d, want 1", s.modelCalls())
	}

	if got := failedIDs(s.invoke(t, ctx, event(t, "extractor-redelivered.json"))); len(got) != 0 {
		t.Errorf("redelivery failures = %v, want none", got)
	}
	if after := s.record(t, ana); after.Version != rec.Version || s.modelCalls() != 1 {
		t.Errorf("redelivery: version %q → %q, model calls %d; want unchanged and 1", rec.Version, after.Version, s.modelCalls())
	}

	if got := failedIDs(s.invoke(t, ctx, event(t, "extractor-not-due.json"))); len(got) != 0 {
		t.Errorf("not-due failures = %v, want none", got)
	}
	if after := s.record(t, ana); after.Version != rec.Version || s.modelCalls() != 1 {
		t.Errorf("not due: version changed or model called (%d calls)", s.modelCalls())
	}
	lines := s.logs.lines(t)
	var outcomes []string
	for _, l := range lines {
		if l["msg"] == "extraction record" {
			outcomes = append(outcomes, l["outcome"].(string))
		}
	}
	if want := []string{"changed", "duplicate", "not_due"}; !slices.Equal(outcomes, want) {
		t.Errorf("outcomes = %v, want %v", outcomes, want)
	}
}

func TestStackModelFailures(t *testing.T) {
	tests := []struct {
		name      string
		steps     []fakebedrock.Step
		wantRetry bool
		outcome   string
	}{
		// The model retries throttling itself (4 attempts); when every
		// attempt is throttled the record goes back to the queue.
		{"throttled", []fakebedrock.Step{fakebedrock.Throttle(), fakebedrock.Throttle(), fakebedrock.Throttle(), fakebedrock.Throttle()}, true, "model_failed"},
		{"access denied", []fakebedrock.Step{fakebedrock.AccessDenied()}, false, "model_failed"},
		{"malformed tool input", []fakebedrock.Step{{Input: json.RawMessage(`{"operations":"none"}`)}}, false, "bad_answer"},
		// Asked twice: at bedrock.FirstMaxTokens, and at what the caps allow.
		{"stop reason max_tokens", []fakebedrock.Step{{StopReason: "max_tokens"}, {StopReason: "max_tokens"}}, false, "bad_answer"},
		{"tool choice refused", []fakebedrock.Step{fakebedrock.ToolChoiceRefused()}, false, "model_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, nil)
			ctx := context.Background()
			stored := memory.Record{Facts: []memory.Fact{{Key: "role", Value: "pilot", UpdatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}}
			if _, _, err := s.repo.Save(ctx, ana, stored); err != nil {
				t.Fatal(err)
			}
			before := s.record(t, ana)
			s.standIn.Script(tt.steps...)
			resp := s.invoke(t, ctx, event(t, "extractor-first-answer.json"))
			if got := len(resp.BatchItemFailures) == 1; got != tt.wantRetry {
				t.Errorf("reported as failed = %v, want %v", got, tt.wantRetry)
			}
			if after := s.record(t, ana); !reflect.DeepEqual(before, after) {
				t.Errorf("a model failure changed the record:\nbefore %+v\nafter  %+v", before, after)
			}
			if got := s.outcomes(t)[firstID]; got != tt.outcome {
				t.Errorf("outcome = %q, want %q", got, tt.outcome)
			}
			if tt.name == "tool choice refused" {
				var reason any
				for _, l := range s.logs.lines(t) {
					if l["messageId"] == firstID {
						reason = l["reason"]
					}
				}
				if r, _ := reason.(string); !strings.Contains(r, "MODEL_OUTPUT_MODE=json") {
					t.Errorf("reason = %v, want the hint to set MODEL_OUTPUT_MODE=json", reason)
				}
			}
			if s.standIn.Pending() != 0 {
				t.Errorf("%d scripted answers left unused", s.standIn.Pending())
			}
		})
	}
}

func TestStackErasureFence(t *testing.T) {
	s := newStack(t, nil)
	ctx := context.Background()
	// The sample was sent at 22:00:00; the user was erased at 22:05.
	if _, err := s.repo.Erase(ctx, ana, time.Date(2026, 11, 29, 22, 5, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if got := failedIDs(s.invoke(t, ctx, event(t, "extractor-first-answer.json"))); len(got) != 0 {
		t.Errorf("failures = %v, want none", got)
	}
	if rec := s.record(t, ana); len(rec.Facts) != 0 || len(rec.Threads) != 0 {
		t.Errorf("a message sent before the erasure wrote %d facts and %d watermarks", len(rec.Facts), len(rec.Threads))
	}
	if s.modelCalls() != 0 {
		t.Errorf("model calls = %d, want 0", s.modelCalls())
	}
	if got := s.outcomes(t)[firstID]; got != string(memory.OutcomeFenced) {
		t.Errorf("outcome = %q, want fenced", got)
	}
}

func TestStackDailyBudget(t *testing.T) {
	s := newStack(t, map[string]string{"TENANT_DAILY_MODEL_CALLS": "1"})
	ctx := context.Background()
	s.invoke(t, ctx, event(t, "extractor-first-answer.json")) // acme's one call of the day
	resp := s.invoke(t, ctx, event(t, "extractor-batch-with-poison.json"))
	if got, want := failedIDs(resp), []string{"5c1d-0002", "5c1d-0003"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v, want only the poison %v", got, want)
	}
	got := s.outcomes(t)
	if got["5c1d-0001"] != string(memory.OutcomeRefused) || got["5c1d-0004"] != string(memory.OutcomeChanged) {
		t.Errorf("outcomes = %v, want acme's second extraction refused and globex's changed", got)
	}
	if s.modelCalls() != 2 {
		t.Errorf("model calls = %d, want 2", s.modelCalls())
	}
	if rec := s.record(t, bob); len(rec.Facts) != 0 {
		t.Errorf("a refused extraction stored %d facts", len(rec.Facts))
	}
	refused := 0
	for _, m := range s.metrics.lines(t) {
		if m["outcome"] == "refused" && m["tenant"] == "acme" && m["Records"] == float64(1) {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("refused metric lines for acme = %d, want 1", refused)
	}
}

func TestStackRepositoryFailureIsRetried(t *testing.T) {
	s := newStack(t, map[string]string{"TABLE_NAME": "no-such-table"})
	resp := s.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	if got := failedIDs(resp); !slices.Equal(got, []string{firstID}) {
		t.Errorf("failures = %v, want the record", got)
	}
	if got := s.outcomes(t)[firstID]; got != outcomeRepository {
		t.Errorf("outcome = %q, want %q", got, outcomeRepository)
	}
	if s.modelCalls() != 0 {
		t.Errorf("model calls = %d, want 0", s.modelCalls())
	}
}

// sqsEvent turns messages received from SQS into the event Lambda's event
// source mapping would build of them.
func sqsEvent(t *testing.T, msgs []sqstypes.Message) []byte {
	t.Helper()
	var ev events.SQSEvent
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId:      aws.ToString(m.MessageId),
			ReceiptHandle:  aws.ToString(m.ReceiptHandle),
			Body:           aws.ToString(m.Body),
			Md5OfBody:      aws.ToString(m.MD5OfBody),
			Attributes:     m.Attributes,
			EventSource:    "aws:sqs",
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:extraction.fifo",
			AWSRegion:      "us-east-1",
		})
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStackFromProducerThroughSQS sends with the producer to a FIFO queue
// of moto_server, receives as the event source would, and runs the
// handler on what arrived: the two sides agree on the wire, for a counted
// message and for an uncounted one, whose deduplication ID SQS honours and
// whose digest the extractor stores.
func TestStackFromProducerThroughSQS(t *testing.T) {
	counted := producer.Message{TenantID: "acme", UserID: "u-123", ThreadID: "th-sqs", PreviousTurnCount: 0, TurnCount: 2,
		Turns: []producer.Turn{{Role: "user", Text: "Hi, I'm Ana and I live in Lisbon"}, {Role: "assistant", Text: "Hello Ana"}}}
	uncounted := counted
	uncounted.PreviousTurnCount, uncounted.TurnCount, uncounted.Uncounted = 0, 0, true
	t.Run("counted", func(t *testing.T) { stackFromProducer(t, counted) })
	t.Run("uncounted", func(t *testing.T) {
		s := stackFromProducer(t, uncounted)
		if m := s.record(t, ana).Threads["th-sqs"]; !memory.IsTurnsDigest(m.Digest) {
			t.Errorf("watermark %+v, want the digest of the turns", m)
		}
	})
}

// stackFromProducer sends msg twice with the producer through a FIFO
// queue of moto_server (one is delivered), runs the handler on what the
// queue delivers, then on the same records again (a redelivery, a
// duplicate), and returns the stack.
func stackFromProducer(t *testing.T, msg producer.Message) *stack {
	t.Helper()
	s := newStack(t, nil)
	ctx := context.Background()
	q := sqsClient(t)
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String(uniqueName("extraction") + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "false"},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := producer.New(q, aws.ToString(out.QueueUrl))
	for range 2 { // At-least-once on the sending side too: one is delivered.
		if err := p.Send(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	recv, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: out.QueueUrl, MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(recv.Messages) != 1 {
		t.Fatalf("received %d messages, want 1", len(recv.Messages))
	}
	resp := s.invoke(t, ctx, sqsEvent(t, recv.Messages))
	if got := failedIDs(resp); len(got) != 0 {
		t.Fatalf("failures = %v, want none", got)
	}
	rec := s.record(t, ana)
	if got := factMap(rec.Facts); got["name"] != "Ana" || got["home_city"] != "Lisbon" {
		t.Errorf("facts = %v, want name Ana and home_city Lisbon", got)
	}
	line := s.logs.lines(t)
	var rl map[string]any
	for _, l := range line {
		if l["msg"] == "extraction record" {
			rl = l
		}
	}
	if rl["sentAtFrom"] != "sqs" || rl["receiveCount"] != float64(1) {
		t.Errorf("log = %v, want sentAtFrom sqs and receiveCount 1 from the queue's attributes", rl)
	}
	before := s.record(t, ana).Version
	s.invoke(t, ctx, sqsEvent(t, recv.Messages))
	if after := s.record(t, ana).Version; after != before || s.modelCalls() != 1 {
		t.Errorf("redelivery: version %s after %s, %d model calls; want no write, 1 call", after, before, s.modelCalls())
	}
	return s
}
