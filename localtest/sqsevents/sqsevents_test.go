package sqsevents

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/lambdapool"
)

// sqsClient returns a client for the moto_server of the environment (see
// motoserver.Endpoint): without one, t is skipped.
func sqsClient(t *testing.T) *sqs.Client {
	t.Helper()
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(motoserver.Endpoint(t)),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
}

// queues makes a FIFO queue and its dead-letter queue with the given
// visibility timeout and maxReceiveCount.
func queues(t *testing.T, visibility, maxReceives int) (queueURL, queueARN, dlqURL string) {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("t%d", time.Now().UnixNano())
	dlq, err := sqsClient(t).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-dlq.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	dlqARN := "arn:aws:sqs:us-east-1:123456789012:" + name + "-dlq.fifo"
	q, err := sqsClient(t).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + ".fifo"), Attributes: map[string]string{
		"FifoQueue": "true", "VisibilityTimeout": strconv.Itoa(visibility),
		"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlqARN, maxReceives),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(q.QueueUrl), "arn:aws:sqs:us-east-1:123456789012:" + name + ".fifo", aws.ToString(dlq.QueueUrl)
}

func send(t *testing.T, url, group, body string) {
	t.Helper()
	_, err := sqsClient(t).SendMessage(context.Background(), &sqs.SendMessageInput{
		QueueUrl: aws.String(url), MessageBody: aws.String(body), MessageGroupId: aws.String(group),
		MessageDeduplicationId: aws.String(body),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"kind": {DataType: aws.String("String"), StringValue: aws.String("test")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// recorder is a function that fails the records whose body is in fail.
type recorder struct {
	mu      sync.Mutex
	batches [][]events.SQSMessage
	fail    map[string]bool
	crash   bool
}

func (r *recorder) invoke(_ context.Context, payload []byte) (lambdapool.Result, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return lambdapool.Result{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, ev.Records)
	if r.crash {
		return lambdapool.Result{Err: &lambdapool.FunctionError{Type: "Runtime.ExitError"}}, nil
	}
	var resp events.SQSEventResponse
	for _, m := range ev.Records {
		if r.fail[m.Body] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	b, _ := json.Marshal(resp)
	return lambdapool.Result{Payload: b}, nil
}

func (r *recorder) seen() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := map[string]int{}
	for _, b := range r.batches {
		for _, m := range b {
			n[m.Body]++
		}
	}
	return n
}

func depth(t *testing.T, url string) int {
	t.Helper()
	out, err := sqsClient(t).GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Attributes {
		x, _ := strconv.Atoi(v)
		n += x
	}
	return n
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited %s for %s", d, what)
}

func TestEventShapeAndDeleteOnSuccess(t *testing.T) {
	url, arn, _ := queues(t, 30, 3)
	send(t, url, "g1", "one")
	send(t, url, "g1", "two")
	r := &recorder{}
	p := Start(context.Background(), Config{API: sqsClient(t), QueueURL: url, QueueARN: arn, Region: "us-east-1",
		BatchSize: 10, BatchingWindow: 300 * time.Millisecond, ReportBatchItemFailures: true, PollWait: time.Second, Invoke: r.invoke})
	defer p.Close()
	// The poller counts a deletion after DeleteMessageBatch returns, so
	// the queue can be empty a moment before the count says so.
	waitUntil(t, 10*time.Second, "both messages handled and deleted", func() bool {
		_, deleted, _ := p.Stats()
		return r.seen()["one"] == 1 && r.seen()["two"] == 1 && depth(t, url) == 0 && deleted == 2
	})
	if _, deleted, failed := p.Stats(); deleted != 2 || failed != 0 {
		t.Errorf("deleted %d failed %d, want 2 and 0", deleted, failed)
	}
	m := r.batches[0][0]
	if m.EventSource != "aws:sqs" || m.EventSourceARN != arn || m.AWSRegion != "us-east-1" || m.Body != "one" ||
		m.MessageId == "" || m.ReceiptHandle == "" || m.Md5OfBody == "" {
		t.Errorf("record = %+v", m)
	}
	for _, a := range []string{"ApproximateReceiveCount", "SentTimestamp", "MessageGroupId", "MessageDeduplicationId", "SequenceNumber", "ApproximateFirstReceiveTimestamp", "SenderId"} {
		if m.Attributes[a] == "" {
			t.Errorf("attribute %s missing: %v", a, m.Attributes)
		}
	}
	if m.Attributes["MessageGroupId"] != "g1" || m.Attributes["ApproximateReceiveCount"] != "1" {
		t.Errorf("attributes = %v", m.Attributes)
	}
	if a := m.MessageAttributes["kind"]; a.DataType != "String" || aws.ToString(a.StringValue) != "test" {
		t.Errorf("message attribute kind = %+v", a)
	}
	if len(r.batches) != 1 || len(r.batches[0]) != 2 {
		t.Errorf("batches = %d of sizes, want one batch of two (batching window)", len(r.batches))
	}
}

func TestPartialFailureRedeliversAndRedrives(t *testing.T) {
	url, arn, dlq := queues(t, 1, 2)
	send(t, url, "bad", "poison")
	send(t, url, "good", "fine")
	r := &recorder{fail: map[string]bool{"poison": true}}
	p := Start(context.Background(), Config{API: sqsClient(t), QueueURL: url, QueueARN: arn, Region: "us-east-1",
		BatchSize: 10, ReportBatchItemFailures: true, PollWait: time.Second, Invoke: r.invoke})
	defer p.Close()
	waitUntil(t, 20*time.Second, "the poison message in the dead-letter queue", func() bool { return depth(t, dlq) == 1 })
	waitUntil(t, 5*time.Second, "the queue drained", func() bool { return depth(t, url) == 0 })
	if got := r.seen(); got["fine"] != 1 || got["poison"] != 2 {
		t.Errorf("deliveries = %v, want fine once and poison twice (maxReceiveCount)", got)
	}
}

func TestFunctionErrorLeavesTheWholeBatch(t *testing.T) {
	url, arn, dlq := queues(t, 1, 2)
	send(t, url, "g", "a")
	send(t, url, "h", "b")
	r := &recorder{crash: true}
	p := Start(context.Background(), Config{API: sqsClient(t), QueueURL: url, QueueARN: arn, Region: "us-east-1",
		BatchSize: 10, BatchingWindow: 200 * time.Millisecond, ReportBatchItemFailures: true, PollWait: time.Second, Invoke: r.invoke})
	defer p.Close()
	waitUntil(t, 20*time.Second, "both messages in the dead-letter queue", func() bool { return depth(t, dlq) == 2 })
	if got := r.seen(); got["a"] != 2 || got["b"] != 2 {
		t.Errorf("deliveries = %v, want each twice", got)
	}
}

func TestFailures(t *testing.T) {
	msgs := []types.Message{{MessageId: aws.String("m1")}, {MessageId: aws.String("m2")}}
	for _, c := range []struct {
		payload string
		want    []string
		bad     bool
	}{
		{``, nil, false},
		{`null`, nil, false},
		{`{}`, nil, false},
		{`{"batchItemFailures":[]}`, nil, false},
		{`{"batchItemFailures":[{"itemIdentifier":"m2"}]}`, []string{"m2"}, false},
		{`{"batchItemFailures":[{"itemIdentifier":"zz"}]}`, nil, true},
		{`{"batchItemFailures":[{}]}`, nil, true},
		{`"text"`, nil, true},
	} {
		keep, err := failures([]byte(c.payload), msgs)
		if (err != nil) != c.bad {
			t.Errorf("failures(%s) error %v, want error %v", c.payload, err, c.bad)
			continue
		}
		if len(keep) != len(c.want) {
			t.Errorf("failures(%s) = %v, want %v", c.payload, keep, c.want)
		}
		for _, id := range c.want {
			if !keep[id] {
				t.Errorf("failures(%s) = %v, want %s kept", c.payload, keep, id)
			}
		}
	}
}

// gate is a function that records when each message's invocation starts
// and ends, and holds the messages named in block until they are let go.
type gate struct {
	mu      sync.Mutex
	started map[string]time.Time
	ended   map[string]time.Time
	block   map[string]chan struct{}
	fail    map[string]bool
}

func newGate(block ...string) *gate {
	g := &gate{started: map[string]time.Time{}, ended: map[string]time.Time{}, block: map[string]chan struct{}{}, fail: map[string]bool{}}
	for _, b := range block {
		g.block[b] = make(chan struct{})
	}
	return g
}

func (g *gate) invoke(ctx context.Context, payload []byte) (lambdapool.Result, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return lambdapool.Result{}, err
	}
	var resp events.SQSEventResponse
	for _, m := range ev.Records {
		g.mu.Lock()
		g.started[m.Body] = time.Now()
		wait, fail := g.block[m.Body], g.fail[m.Body]
		g.mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
			case <-ctx.Done():
				return lambdapool.Result{}, ctx.Err()
			}
		}
		if fail {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
		g.mu.Lock()
		g.ended[m.Body] = time.Now()
		g.mu.Unlock()
	}
	b, _ := json.Marshal(resp)
	return lambdapool.Result{Payload: b}, nil
}

func (g *gate) let(body string) { close(g.block[body]) }

func (g *gate) times(body string) (started, ended time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started[body], g.ended[body]
}

// TestFIFOGroupWaitsForItsBatchInFlight sends a group's second message
// while the first is with the function and several long polls wait: the
// second must not reach the function before the first is done, while a
// message of another group does.
func TestFIFOGroupWaitsForItsBatchInFlight(t *testing.T) {
	url, arn, _ := queues(t, 30, 3)
	g := newGate("first")
	p := Start(context.Background(), Config{API: sqsClient(t), QueueURL: url, QueueARN: arn, Region: "us-east-1",
		BatchSize: 10, ReportBatchItemFailures: true, MaxConcurrency: 5, PollWait: 5 * time.Second, Invoke: g.invoke})
	defer p.Close()
	time.Sleep(500 * time.Millisecond) // every long poll is waiting
	send(t, url, "user-1", "first")
	waitUntil(t, 10*time.Second, "the first message with the function", func() bool { s, _ := g.times("first"); return !s.IsZero() })
	send(t, url, "user-1", "second")
	send(t, url, "user-2", "other")
	waitUntil(t, 10*time.Second, "the other group's message handled", func() bool { _, e := g.times("other"); return !e.IsZero() })
	time.Sleep(time.Second)
	if s, _ := g.times("second"); !s.IsZero() {
		t.Fatalf("the second message of the group reached the function while the first was still there")
	}
	g.let("first")
	waitUntil(t, 15*time.Second, "the second message handled", func() bool { _, e := g.times("second"); return !e.IsZero() })
	_, firstEnd := g.times("first")
	if secondStart, _ := g.times("second"); secondStart.Before(firstEnd) {
		t.Errorf("the second message started %s before the first ended", firstEnd.Sub(secondStart))
	}
	waitUntil(t, 5*time.Second, "the queue drained", func() bool { return depth(t, url) == 0 })
}

// misordered is a queue that breaks FIFO order: it hands out the messages
// of its script, one receive each, whatever is in flight.
type misordered struct {
	mu       sync.Mutex
	script   [][]types.Message
	deleted  []string
	released []string
}

func (q *misordered) ReceiveMessage(ctx context.Context, _ *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	if len(q.script) > 0 {
		out := q.script[0]
		q.script = q.script[1:]
		q.mu.Unlock()
		return &sqs.ReceiveMessageOutput{Messages: out}, nil
	}
	q.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(50 * time.Millisecond):
		return &sqs.ReceiveMessageOutput{}, nil
	}
}

func (q *misordered) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := &sqs.DeleteMessageBatchOutput{}
	for _, e := range in.Entries {
		q.deleted = append(q.deleted, aws.ToString(e.ReceiptHandle))
		out.Successful = append(out.Successful, types.DeleteMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

func (q *misordered) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range in.Entries {
		if e.VisibilityTimeout != 0 {
			return nil, fmt.Errorf("visibility %d, want 0", e.VisibilityTimeout)
		}
		q.released = append(q.released, aws.ToString(e.ReceiptHandle))
	}
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

func (q *misordered) state() (deleted, released []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.deleted...), append([]string(nil), q.released...)
}

func message(body, group, seq string) types.Message {
	return types.Message{MessageId: aws.String("id-" + body), ReceiptHandle: aws.String("rh-" + body), Body: aws.String(body),
		Attributes: map[string]string{"MessageGroupId": group, "SequenceNumber": seq}}
}

// TestHeldBackMessagesWaitForTheirGroup gives the poller a queue that hands
// out a group's later messages while an earlier one is in flight, in the
// wrong order: the poller holds them back and runs them after the first,
// in sequence order, or makes them visible again when the first failed.
func TestHeldBackMessagesWaitForTheirGroup(t *testing.T) {
	for _, firstFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("firstFails=%v", firstFails), func(t *testing.T) {
			q := &misordered{script: [][]types.Message{
				{message("first", "g", "10")},
				{message("third", "g", "30"), message("other", "h", "15")},
				{message("second", "g", "20")},
			}}
			g := newGate("first")
			g.fail["first"] = firstFails
			p := Start(context.Background(), Config{API: q, QueueURL: "q", QueueARN: "arn", Region: "us-east-1",
				BatchSize: 10, ReportBatchItemFailures: true, MaxConcurrency: 5, PollWait: time.Second, Invoke: g.invoke})
			defer p.Close()
			waitUntil(t, 5*time.Second, "the other group's message handled", func() bool { _, e := g.times("other"); return !e.IsZero() })
			waitUntil(t, 5*time.Second, "both later messages held back", func() bool { return p.Held() == 2 })
			for _, b := range []string{"second", "third"} {
				if s, _ := g.times(b); !s.IsZero() {
					t.Fatalf("%s reached the function while the group's first message was there", b)
				}
			}
			g.let("first")
			if firstFails {
				waitUntil(t, 5*time.Second, "the held messages made visible again", func() bool { _, r := q.state(); return len(r) == 2 })
				time.Sleep(200 * time.Millisecond)
				for _, b := range []string{"second", "third"} {
					if s, _ := g.times(b); !s.IsZero() {
						t.Errorf("%s ran after the group's first message failed", b)
					}
				}
				return
			}
			waitUntil(t, 5*time.Second, "the held messages handled", func() bool { _, e := g.times("third"); return !e.IsZero() })
			_, firstEnd := g.times("first")
			secondStart, secondEnd := g.times("second")
			thirdStart, _ := g.times("third")
			if secondStart.Before(firstEnd) || thirdStart.Before(secondEnd) {
				t.Errorf("order: first ended %v, second ran %v–%v, third started %v; want first, second, third", firstEnd, secondStart, secondEnd, thirdStart)
			}
			if del, rel := q.state(); len(del) != 4 || len(rel) != 0 {
				t.Errorf("deleted %v, released %v; want all four deleted, none released", del, rel)
			}
		})
	}
}
