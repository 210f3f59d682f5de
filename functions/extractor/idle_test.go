package main

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

const (
	idleURL = "https://sqs.us-east-1.amazonaws.com/123456789012/usermemory-idle"
	idleARN = "arn:aws:sqs:us-east-1:123456789012:usermemory-idle"
	notDue  = "0b8f4c1e-2222-4a51-9a3e-000000000002"
)

// sentCopies is a Sender that keeps what it is asked to send, or fails.
type sentCopies struct {
	mu   sync.Mutex
	in   []*sqs.SendMessageInput
	fail error
}

func (s *sentCopies) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	s.in = append(s.in, in)
	return &sqs.SendMessageOutput{MessageId: aws.String("idle-1")}, nil
}

// idleFixture is a fixture with the idle read on after idle, its clock
// at now.
func idleFixture(t *testing.T, idle time.Duration, now *time.Time, answers ...memorytest.Answer) (*fixture, *sentCopies) {
	t.Helper()
	send := &sentCopies{}
	f := newFixture(t, fixtureOpts{opts: []Option{WithIdleRead(idle, idleURL, idleARN, send), WithClock(func() time.Time { return *now })}}, answers...)
	return f, send
}

// copyEvent returns the event of the idle copy in: the body sent, from
// the idle queue, with its attributes.
func copyEvent(t *testing.T, in *sqs.SendMessageInput) []byte {
	t.Helper()
	return editEvent(t, event(t, "extractor-not-due.json"), func(ev *events.SQSEvent) {
		r := &ev.Records[0]
		r.MessageId, r.Body, r.EventSourceARN = "idle-copy-1", aws.ToString(in.MessageBody), idleARN
		r.Attributes = map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1795990680000"}
		r.MessageAttributes = map[string]events.SQSMessageAttribute{}
		for k, v := range in.MessageAttributes {
			r.MessageAttributes[k] = events.SQSMessageAttribute{DataType: aws.ToString(v.DataType), StringValue: v.StringValue}
		}
	})
}

// TestNotDueNotesTheTailAndSendsADelayedCopy: with the idle read on, a
// message that is not due notes its tail and sends its body, delayed by
// the idle time and with its send time, to the idle queue; the copy reads
// the turns once when it comes back after the idle time.
func TestNotDueNotesTheTailAndSendsADelayedCopy(t *testing.T) {
	now := time.UnixMilli(1795989780000).UTC().Add(time.Second)
	role := memorytest.Answer{Operations: []memory.Operation{{Op: "SET", Key: "home_city", Value: "Porto", Evidence: "weather like in Porto"}}}
	f, send := idleFixture(t, 900*time.Second, &now, role)
	if got := failedIDs(f.invoke(t, context.Background(), event(t, "extractor-not-due.json"))); len(got) != 0 {
		t.Fatalf("failures = %v", got)
	}
	if got := f.outcomes(t)[notDue]; got != string(memory.OutcomeNoted) {
		t.Errorf("outcome = %q, want %q", got, memory.OutcomeNoted)
	}
	rec, _ := f.repo.Record(ana)
	if tail := rec.Tails["th-9"]; tail.TurnCount != 4 || tail.SentAt.UnixMilli() != 1795989780000 {
		t.Errorf("tail = %+v, want turn 4 sent at the SentTimestamp", tail)
	}
	if len(send.in) != 1 {
		t.Fatalf("%d copies sent, want 1", len(send.in))
	}
	in := send.in[0]
	if aws.ToString(in.QueueUrl) != idleURL || in.DelaySeconds != 900 || aws.ToString(in.MessageAttributes[SentAtAttribute].StringValue) != "1795989780000" {
		t.Errorf("copy sent to %s, delay %d, sentAt %s; want the idle queue, 900, the SentTimestamp",
			aws.ToString(in.QueueUrl), in.DelaySeconds, aws.ToString(in.MessageAttributes[SentAtAttribute].StringValue))
	}
	if f.model.Calls() != 0 {
		t.Error("a message that is not due called the model")
	}

	// Back after the idle time: one read.
	now = now.Add(900 * time.Second)
	if got := failedIDs(f.invoke(t, context.Background(), copyEvent(t, in))); len(got) != 0 {
		t.Fatalf("failures = %v", got)
	}
	if got := f.outcomes(t)["idle-copy-1"]; got != string(memory.OutcomeChanged) {
		t.Errorf("outcome of the copy = %q, want %q", got, memory.OutcomeChanged)
	}
	rec, _ = f.repo.Record(ana)
	if _, ok := rec.Tails["th-9"]; ok || factMap(rec.Facts)["home_city"] != "Porto" || f.model.Calls() != 1 {
		t.Errorf("after the copy: tails %v, facts %v, %d model calls; want no tail, home_city, 1 call", rec.Tails, rec.Facts, f.model.Calls())
	}
	// A duplicate copy reads nothing.
	f.invoke(t, context.Background(), copyEvent(t, in))
	if got := f.outcomes(t)["idle-copy-1"]; got != string(memory.OutcomeAlreadyRead) || f.model.Calls() != 1 {
		t.Errorf("duplicate copy: outcome %q, %d model calls; want %q, 1", got, f.model.Calls(), memory.OutcomeAlreadyRead)
	}
}

// TestIdleCopyWaitsOutALongIdleTime: over SQS's 900 s delay, a copy that
// comes back early is sent again with the time left.
func TestIdleCopyWaitsOutALongIdleTime(t *testing.T) {
	now := time.UnixMilli(1795989780000).UTC()
	f, send := idleFixture(t, 2000*time.Second, &now)
	f.invoke(t, context.Background(), event(t, "extractor-not-due.json"))
	if len(send.in) != 1 || send.in[0].DelaySeconds != MaxDelaySeconds {
		t.Fatalf("copies %d, first delay %d; want 1 delayed %d", len(send.in), send.in[0].DelaySeconds, MaxDelaySeconds)
	}
	now = now.Add(900 * time.Second)
	f.invoke(t, context.Background(), copyEvent(t, send.in[0]))
	if got := f.outcomes(t)["idle-copy-1"]; got != outcomeIdleWaiting {
		t.Errorf("outcome = %q, want %q", got, outcomeIdleWaiting)
	}
	if len(send.in) != 2 || send.in[1].DelaySeconds != 900 ||
		aws.ToString(send.in[1].MessageAttributes[SentAtAttribute].StringValue) != strconv.FormatInt(1795989780000, 10) {
		t.Errorf("copies %d; want a second one delayed 900 s with the original send time", len(send.in))
	}
	now = now.Add(900 * time.Second)
	f.invoke(t, context.Background(), copyEvent(t, send.in[1]))
	if len(send.in) != 3 || send.in[2].DelaySeconds != 200 {
		t.Errorf("copies %d; want a third one delayed the 200 s left", len(send.in))
	}
	if f.model.Calls() != 0 {
		t.Error("the model was called before the idle time")
	}
}

// TestIdleCopySendFailureIsRetried: a copy that cannot be sent fails the
// record, so that the message comes again; the tail is noted once.
func TestIdleCopySendFailureIsRetried(t *testing.T) {
	now := time.UnixMilli(1795989780000).UTC()
	f, send := idleFixture(t, 900*time.Second, &now)
	send.fail = memorytest.ErrInjected
	if got := failedIDs(f.invoke(t, context.Background(), event(t, "extractor-not-due.json"))); len(got) != 1 {
		t.Errorf("failures = %v, want the record", got)
	}
	if got := f.outcomes(t)[notDue]; got != outcomeQueueFailed {
		t.Errorf("outcome = %q, want %q", got, outcomeQueueFailed)
	}
}

// TestIdleReadOff: with IDLE_READ_SECONDS 0 a message that is not due is
// not_due and nothing is noted or sent.
func TestIdleReadOff(t *testing.T) {
	s, err := IdleFromEnv(func(k string) string { return map[string]string{EnvIdleReadSeconds: "0"}[k] })
	if err != nil || s.After != 0 {
		t.Fatalf("IdleFromEnv(0) = %+v, %v", s, err)
	}
	now := time.UnixMilli(1795989780000).UTC()
	f, send := idleFixture(t, s.After, &now)
	f.invoke(t, context.Background(), event(t, "extractor-not-due.json"))
	if got := f.outcomes(t)[notDue]; got != outcomeNotDue || len(send.in) != 0 || f.repo.Calls("Save") != 0 {
		t.Errorf("outcome %q, %d copies, %d saves; want not_due, none, none", got, len(send.in), f.repo.Calls("Save"))
	}
	for _, bad := range []map[string]string{{EnvIdleReadSeconds: "-1"}, {EnvIdleReadSeconds: "43201"}, {EnvIdleReadSeconds: "x"}, {EnvIdleReadSeconds: "60"}} {
		if _, err := IdleFromEnv(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("IdleFromEnv(%v) accepted", bad)
		}
	}
	if s, err := IdleFromEnv(func(k string) string {
		return map[string]string{EnvIdleQueueURL: idleURL, EnvIdleQueueARN: idleARN}[k]
	}); err != nil || s.After != DefaultIdleReadSeconds*time.Second {
		t.Errorf("IdleFromEnv() = %+v, %v; want the default", s, err)
	}
}
