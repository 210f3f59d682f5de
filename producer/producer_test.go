package producer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
	"github.com/usermemory/usermemory/schema"
	"github.com/usermemory/usermemory/schema/schematest"
)

// newClient returns an SQS client for the moto_server of the environment
// (see motoserver.Endpoint): without one, t is skipped.
func newClient(t *testing.T) *sqs.Client {
	t.Helper()
	endpoint := motoserver.Endpoint(t)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

var queueSeq atomic.Int64

// newQueue creates a FIFO queue with explicit deduplication IDs, as the
// template declares it, and returns its URL.
func newQueue(t *testing.T, c *sqs.Client) string {
	t.Helper()
	name := fmt.Sprintf("producer-%d-%d.fifo", time.Now().UnixNano(), queueSeq.Add(1))
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{
		QueueName: aws.String(name),
		Attributes: map[string]string{
			"FifoQueue":                 "true",
			"ContentBasedDeduplication": "false",
			"MaximumMessageSize":        "262144",
		},
	})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	return aws.ToString(out.QueueUrl)
}

// receiveAll drains the queue, deleting what it reads.
func receiveAll(t *testing.T, c *sqs.Client, url string) []sqstypes.Message {
	t.Helper()
	var all []sqstypes.Message
	for {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(url),
			MaxNumberOfMessages:         10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			t.Fatalf("ReceiveMessage: %v", err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		for _, m := range out.Messages {
			all = append(all, m)
			if _, err := c.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("DeleteMessage: %v", err)
			}
		}
	}
}

// sendOne sends m through p and returns the one message the queue at url
// then holds.
func sendOne(t *testing.T, p *producer.Producer, c *sqs.Client, url string, m producer.Message) sqstypes.Message {
	t.Helper()
	if err := p.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := receiveAll(t, c, url)
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	return msgs[0]
}

func compiled(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := schematest.CompileExtractionMessageV1()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// checkBody validates body against the schema and decodes it.
func checkBody(t *testing.T, sch *jsonschema.Schema, body string) producer.Message {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("body does not validate against the schema: %v", err)
	}
	var m producer.Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("decode body: %v", err)
	}
	// The extractor's reader, which the schema package holds to the
	// library, reads the same message.
	got, err := schema.DecodeExtractionMessageV1([]byte(body))
	if err != nil {
		t.Fatalf("DecodeExtractionMessageV1: %v", err)
	}
	if !got.SentAt.Equal(m.SentAt) || !reflect.DeepEqual(got.Turns, m.Turns) || !reflect.DeepEqual(got.ContextTurns, m.ContextTurns) || got.TenantID != m.TenantID || got.TurnCount != m.TurnCount {
		t.Fatalf("DecodeExtractionMessageV1 = %+v, encoding/json reads %+v", got, m)
	}
	return m
}

func sample() producer.Message {
	return producer.Message{
		TenantID: "acme", UserID: "u-123", ThreadID: "th-9",
		PreviousTurnCount: 0, TurnCount: 2,
		Turns: []producer.Turn{
			{Role: "user", Text: "Hi, I'm Ana from Lisbon, answer in Portuguese"},
			{Role: "assistant", Text: "Olá Ana!"},
		},
		Meta: &producer.Meta{RequestID: "req-1", TraceID: "Root=1-abc;Sampled=1"},
	}
}

func TestSendSetsGroupDedupVersionAndSentAt(t *testing.T) {
	c := newClient(t)
	url := newQueue(t, c)
	at := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	p := producer.New(c, url, producer.WithClock(func() time.Time { return at }))
	msg := sendOne(t, p, c, url, sample())
	attrs := msg.Attributes
	if got, want := attrs["MessageGroupId"], "acme/u-123"; got != want {
		t.Errorf("MessageGroupId = %q, want %q", got, want)
	}
	if got, want := attrs["MessageDeduplicationId"], producer.DeduplicationID("acme", "u-123", "th-9", 2); got != want {
		t.Errorf("MessageDeduplicationId = %q, want %q", got, want)
	}
	m := checkBody(t, compiled(t), aws.ToString(msg.Body))
	if m.Version != 1 {
		t.Errorf("version = %d, want 1", m.Version)
	}
	if !m.SentAt.Equal(at) {
		t.Errorf("sentAt = %v, want %v", m.SentAt, at)
	}
	if len(m.Turns) != 2 || m.Turns[1].Text != "Olá Ana!" {
		t.Errorf("turns = %+v, want the two turns sent", m.Turns)
	}
}

func TestSameMessageTwiceIsDeliveredOnce(t *testing.T) {
	c := newClient(t)
	url := newQueue(t, c)
	p := producer.New(c, url)
	ctx := context.Background()
	for range 2 {
		if err := p.Send(ctx, sample()); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	next := sample()
	next.PreviousTurnCount, next.TurnCount = 2, 4
	if err := p.Send(ctx, next); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := receiveAll(t, c, url)
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2 (the duplicate dropped, the next turn count kept)", len(msgs))
	}
	sch := compiled(t)
	if a, b := checkBody(t, sch, aws.ToString(msgs[0].Body)), checkBody(t, sch, aws.ToString(msgs[1].Body)); a.TurnCount != 2 || b.TurnCount != 4 {
		t.Errorf("turn counts in order = %d, %d, want 2, 4", a.TurnCount, b.TurnCount)
	}
}

func TestTrimsOldestTurnsFirst(t *testing.T) {
	c := newClient(t)
	url := newQueue(t, c)
	// Trimming to the extractor's transcript is off: this is the size limit.
	p := producer.New(c, url, producer.WithTranscriptChars(0), producer.WithAttributes(map[string]string{"traceparent": strings.Repeat("t", 2000)}))
	m := sample()
	m.Turns = nil
	for i := range 6 {
		// 60,000 bytes each: six of them are well over 256 KiB.
		m.Turns = append(m.Turns, producer.Turn{Role: "user", Text: fmt.Sprintf("turn-%d ", i) + strings.Repeat("x", 60000-7)})
	}
	m.TurnCount = 6
	body := aws.ToString(sendOne(t, p, c, url, m).Body)
	if size := len(body) + len("traceparent") + len("String") + 2000; size > producer.DefaultMaxBytes {
		t.Errorf("message size %d, over %d", size, producer.DefaultMaxBytes)
	}
	got := checkBody(t, compiled(t), body)
	if len(got.Turns) != 4 {
		t.Fatalf("kept %d turns, want the 4 newest", len(got.Turns))
	}
	for i, turn := range got.Turns {
		if want := fmt.Sprintf("turn-%d ", i+2); !strings.HasPrefix(turn.Text, want) || len(turn.Text) != 60000 {
			t.Errorf("turn %d starts %q (len %d), want %q whole", i, turn.Text[:8], len(turn.Text), want)
		}
	}
	if got.TurnCount != 6 {
		t.Errorf("turnCount = %d, want 6 (counts are the thread's, not the message's)", got.TurnCount)
	}
}

func TestCutsNewestTurnWhenAloneOver(t *testing.T) {
	c := newClient(t)
	url := newQueue(t, c)
	p := producer.New(c, url, producer.WithTranscriptChars(0))
	m := sample()
	// Multi-byte runes and characters JSON escapes, so that the cut must
	// count encoded bytes at rune boundaries.
	long := "Olá <Ana> " + strings.Repeat("ção\"&", 80000)
	m.Turns = []producer.Turn{{Role: "user", Text: "older"}, {Role: "assistant", Text: long}}
	body := aws.ToString(sendOne(t, p, c, url, m).Body)
	if len(body) > producer.DefaultMaxBytes {
		t.Errorf("body %d bytes, over %d", len(body), producer.DefaultMaxBytes)
	}
	if len(body) < producer.DefaultMaxBytes-64 {
		t.Errorf("body %d bytes: the cut left more than 64 bytes of %d unused", len(body), producer.DefaultMaxBytes)
	}
	got := checkBody(t, compiled(t), body)
	if len(got.Turns) != 1 {
		t.Fatalf("kept %d turns, want only the newest", len(got.Turns))
	}
	text := got.Turns[0].Text
	if !utf8.ValidString(text) || !strings.HasSuffix(text, "…") || !strings.HasPrefix(long, strings.TrimSuffix(text, "…")) {
		t.Errorf("cut text is not a valid beginning of the turn marked with …: starts %q, ends %q", text[:12], text[len(text)-12:])
	}
}

type countingAPI struct{ calls int }

func (c *countingAPI) SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	c.calls++
	return &sqs.SendMessageOutput{}, nil
}

func TestInvalidInputIsRefusedBeforeSending(t *testing.T) {
	tests := []struct {
		name   string
		url    string
		change func(*producer.Message)
		want   error
	}{
		{"standard queue", "http://q/standard", func(*producer.Message) {}, producer.ErrInvalid},
		{"empty tenant", "", func(m *producer.Message) { m.TenantID = "" }, producer.ErrInvalid},
		{"tenant with slash", "", func(m *producer.Message) { m.TenantID = "acme/other" }, producer.ErrInvalid},
		{"user with hash", "", func(m *producer.Message) { m.UserID = "u#1" }, producer.ErrInvalid},
		{"user too long", "", func(m *producer.Message) { m.UserID = strings.Repeat("u", 129) }, producer.ErrInvalid},
		{"thread with space", "", func(m *producer.Message) { m.ThreadID = "th 9" }, producer.ErrInvalid},
		{"negative count", "", func(m *producer.Message) { m.PreviousTurnCount = -1 }, producer.ErrInvalid},
		{"count going back", "", func(m *producer.Message) { m.PreviousTurnCount, m.TurnCount = 5, 4 }, producer.ErrInvalid},
		{"unknown role", "", func(m *producer.Message) { m.Turns[0].Role = "system" }, producer.ErrInvalid},
		{"model ID with space", "", func(m *producer.Message) { m.CheapModelID = "nova micro" }, producer.ErrInvalid},
		{"request ID with newline", "", func(m *producer.Message) { m.Meta.RequestID = "a\nb" }, producer.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &countingAPI{}
			url := tt.url
			if url == "" {
				url = "http://q/000000000000/extraction.fifo"
			}
			m := sample()
			tt.change(&m)
			err := producer.New(api, url).Send(context.Background(), m)
			if !errors.Is(err, tt.want) {
				t.Errorf("Send error = %v, want %v", err, tt.want)
			}
			if api.calls != 0 {
				t.Errorf("SendMessage called %d times, want 0", api.calls)
			}
		})
	}
}

func TestTooLargeWithoutRoomForATurn(t *testing.T) {
	api := &countingAPI{}
	p := producer.New(api, "http://q/1/e.fifo", producer.WithMaxBytes(1024),
		producer.WithAttributes(map[string]string{"big": strings.Repeat("b", 900)}))
	err := p.Send(context.Background(), sample())
	if !errors.Is(err, producer.ErrTooLarge) {
		t.Errorf("Send error = %v, want ErrTooLarge", err)
	}
	if api.calls != 0 {
		t.Errorf("SendMessage called %d times, want 0", api.calls)
	}
}

func TestBuildKeepsNewestMaxTurns(t *testing.T) {
	m := sample()
	m.Turns = nil
	for i := range producer.MaxTurns + 5 {
		m.Turns = append(m.Turns, producer.Turn{Role: "user", Text: fmt.Sprint(i)})
	}
	// Trimming to the extractor's transcript is off: this is MaxTurns.
	in, err := producer.New(&countingAPI{}, "http://q/1/e.fifo", producer.WithTranscriptChars(0)).Build(m)
	if err != nil {
		t.Fatal(err)
	}
	got := checkBody(t, compiled(t), aws.ToString(in.MessageBody))
	if len(got.Turns) != producer.MaxTurns || got.Turns[0].Text != "5" {
		t.Errorf("kept %d turns starting at %q, want %d starting at \"5\"", len(got.Turns), got.Turns[0].Text, producer.MaxTurns)
	}
	if m.Turns[0].Text != "0" {
		t.Errorf("Build changed the caller's turns")
	}
}

func TestGroupIDStaysWithinSQSLimit(t *testing.T) {
	long := strings.Repeat("a", 128)
	tests := []struct {
		tenant, user string
	}{
		{"acme", "u-1"},
		{long, long},
		{long, "u"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		g := producer.GroupID(tt.tenant, tt.user)
		if len(g) > 128 || g == "" {
			t.Errorf("GroupID(%d bytes, %d bytes) = %d bytes, want 1 to 128", len(tt.tenant), len(tt.user), len(g))
		}
		if seen[g] {
			t.Errorf("GroupID %q repeats for another user", g)
		}
		seen[g] = true
	}
	if g := producer.GroupID("acme", "u-1"); g != "acme/u-1" {
		t.Errorf("GroupID(acme, u-1) = %q, want acme/u-1", g)
	}
	if a, b := producer.DeduplicationID("a", "b", "c", 1), producer.DeduplicationID("a", "b", "c1", 0); a == b || len(a) != 64 {
		t.Errorf("DeduplicationID: %q and %q must differ and be 64 hex characters", a, b)
	}
}

// TestSendsOnlyWhatTheExtractorReads checks, on generated threads (long
// and short turns, tool turns, blank turns, multi-byte runes, white space
// at a cut), that the turns sent make exactly the
// transcript the whole turns make, for the default budget and a small one,
// and that the message is no larger than needed.
func TestSendsOnlyWhatTheExtractorReads(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sch := compiled(t)
	pieces := []string{"word ", "ção ", "日本語 ", "   ", "\n", "\"q\" ", "😀", "x"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	roles := []string{"user", "assistant", "tool"}
	for _, budget := range []int{memory.DefaultTranscriptChars, memory.TranscriptCharsLowerBound} {
		p := producer.New(&countingAPI{}, "http://q/1/e.fifo", producer.WithTranscriptChars(budget))
		for i := range 300 {
			m := sample()
			m.Turns = nil
			for range 1 + r.IntN(12) {
				n := r.IntN(40)
				if r.IntN(4) == 0 {
					n = r.IntN(6000)
				}
				m.Turns = append(m.Turns, producer.Turn{Role: roles[r.IntN(3)], Text: text(n)})
			}
			in, err := p.Build(m)
			if err != nil {
				t.Fatalf("budget %d, thread %d: %v", budget, i, err)
			}
			got := checkBody(t, sch, aws.ToString(in.MessageBody))
			if want, sent := memory.Transcript(toMemory(m.Turns), budget), memory.Transcript(toMemory(got.Turns), budget); sent != want {
				t.Fatalf("budget %d, thread %d: the turns sent make the transcript\n%q\nwant\n%q", budget, i, sent, want)
			}
			if len(got.Turns) == 0 {
				t.Fatalf("budget %d, thread %d: no turn sent", budget, i)
			}
			// At most the budget's characters and the labels, gaps and cut
			// mark of the turns sent, unless only the newest turn is sent
			// for want of any transcribed one.
			chars := 0
			for _, tn := range got.Turns {
				chars += utf8.RuneCountInString(tn.Text)
			}
			if memory.Transcript(toMemory(got.Turns), budget) != "" && chars > budget+64 {
				t.Errorf("budget %d, thread %d: %d characters of turns sent", budget, i, chars)
			}
		}
	}
}

// TestTrimsToTheExtractorsTranscript: a thread of 200,000 characters goes
// as the newest 12,000 the extractor reads, not as 256 KiB.
func TestTrimsToTheExtractorsTranscript(t *testing.T) {
	m := sample()
	m.Turns = nil
	for i := range 40 {
		m.Turns = append(m.Turns, producer.Turn{Role: []string{"user", "assistant"}[i%2], Text: fmt.Sprintf("turn %d ", i) + strings.Repeat("lorem ipsum ", 5000/12)})
	}
	whole, err := producer.New(&countingAPI{}, "http://q/1/e.fifo", producer.WithTranscriptChars(0)).Build(m)
	if err != nil {
		t.Fatal(err)
	}
	trimmed, err := producer.New(&countingAPI{}, "http://q/1/e.fifo").Build(m)
	if err != nil {
		t.Fatal(err)
	}
	before, after := len(aws.ToString(whole.MessageBody)), len(aws.ToString(trimmed.MessageBody))
	t.Logf("40 turns of 5,000 characters: %d bytes whole, %d bytes trimmed to the extractor's transcript", before, after)
	if after > memory.DefaultTranscriptChars+2000 || before < 190000 {
		t.Errorf("message %d bytes whole, %d trimmed; want about 200,000 and at most %d", before, after, memory.DefaultTranscriptChars+2000)
	}
	got := checkBody(t, compiled(t), aws.ToString(trimmed.MessageBody))
	if memory.Transcript(toMemory(got.Turns), memory.DefaultTranscriptChars) != memory.Transcript(toMemory(m.Turns), memory.DefaultTranscriptChars) {
		t.Error("the trimmed message makes another transcript")
	}
}

func toMemory(ts []producer.Turn) []memory.Turn {
	out := make([]memory.Turn, len(ts))
	for i, t := range ts {
		out[i] = memory.Turn{Role: t.Role, Text: t.Text}
	}
	return out
}
