// Package producer builds and sends the extraction message that an AI
// gateway written in Go sends to usermemory's FIFO queue after every answer
// of a thread: version 1 of schema/extraction-message.v1.json.
//
// A [Producer] validates the IDs and the turns, sets the version and the
// send time, leaves out what the extractor would not read (the turns
// before the newest [memory.DefaultTranscriptChars] characters of
// transcript, and tool turns, which it never transcribes; of the context
// turns, what [memory.ContextTurns] keeps within
// [memory.DefaultContextChars]), keeps the whole message within the SQS
// size limit by dropping the context turns first, then the oldest turns
// (and, when even the newest turn alone is over, cutting its text), and
// sends it with the FIFO group of the user and a
// deduplication ID derived from tenant, user, thread and turn count.
//
//	p := producer.New(sqs.NewFromConfig(cfg), queueURL)
//	err := p.Send(ctx, producer.Message{TenantID: "acme", UserID: "u-123",
//		ThreadID: "th-9", PreviousTurnCount: 0, TurnCount: 2, Turns: turns})
//
// A gateway that does not count turns, and calls Send only when its own
// rule says an extraction is due, sends an uncounted message (Uncounted
// set, no counts): the extractor takes it as due, and its watermark and
// deduplication ID come from the digest of the turns sent
// (memory.TurnsDigest, [DigestDeduplicationID]), so that the same turns
// sent again are read once.
//
//	err := p.Send(ctx, producer.Message{TenantID: "acme", UserID: "u-123",
//		ThreadID: "th-9", Uncounted: true, Turns: turns})
package producer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/schema"
)

// DefaultMaxBytes is the SQS limit of one message, body and attributes
// together: 256 KiB (schema.MaxMessageBytes). Queues configured for more
// take [WithMaxBytes].
const DefaultMaxBytes = schema.MaxMessageBytes

// API is the part of *sqs.Client a Producer calls.
type API interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// ErrInvalid is wrapped by the errors of Build and Send for a message that
// cannot be sent as it is: an invalid ID, turn count, role, model ID or
// trace value, or a queue URL that does not name a FIFO queue.
var ErrInvalid = errors.New("producer: invalid message")

// ErrTimeout is wrapped by the error of Send when SQS did not take the
// message within the send timeout (see [WithSendTimeout]): the message may
// or may not have been queued. Sending it again is safe: the FIFO queue
// drops a copy with the same deduplication ID within five minutes.
var ErrTimeout = errors.New("producer: SQS did not answer in time")

// DefaultSendTimeout bounds one Send, the SDK's attempts and backoff
// included, when the caller's context allows longer: a gateway's answer
// must not wait on a stalled queue.
const DefaultSendTimeout = 5 * time.Second

// ErrTooLarge is wrapped by the errors of Build and Send when the IDs,
// metadata and attributes alone leave no room for a turn within the limit.
var ErrTooLarge = errors.New("producer: message too large")

// Producer sends extraction messages to one FIFO queue. It is safe for
// concurrent use.
type Producer struct {
	client   API
	queueURL string
	maxBytes int
	// transcriptChars is the extractor's transcript budget; 0 sends the
	// turns whole.
	transcriptChars int
	attrs           map[string]sqstypes.MessageAttributeValue
	now             func() time.Time
	sendTimeout     time.Duration
}

// Option configures a [Producer].
type Option func(*Producer)

// WithClock sets the clock that stamps SentAt; the default is time.Now.
func WithClock(now func() time.Time) Option { return func(p *Producer) { p.now = now } }

// WithSendTimeout sets the most one Send may take; the default is
// [DefaultSendTimeout]. A caller's earlier deadline still applies.
func WithSendTimeout(d time.Duration) Option { return func(p *Producer) { p.sendTimeout = d } }

// WithMaxBytes sets the size limit of a whole message (body and
// attributes), for a queue whose maximum message size is not 256 KiB.
// Values below 1 KiB are raised to 1 KiB.
func WithMaxBytes(n int) Option {
	return func(p *Producer) { p.maxBytes = max(n, 1024) }
}

// WithTranscriptChars sets the transcript budget of the extractor the
// queue feeds (its TRANSCRIPT_CHARS, memory.Config.TranscriptChars), for
// an extractor configured otherwise than [memory.DefaultTranscriptChars].
// The producer sends only the turns that budget lets the extractor read.
// n < 1 sends the turns whole (up to the size limit).
func WithTranscriptChars(n int) Option {
	return func(p *Producer) { p.transcriptChars = max(n, 0) }
}

// WithAttributes adds string message attributes to every message (for
// instance a trace header); they count towards the size limit.
func WithAttributes(attrs map[string]string) Option {
	return func(p *Producer) {
		for k, v := range attrs {
			p.attrs[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
}

// New returns a Producer that sends to the FIFO queue at queueURL through
// client, an *sqs.Client in production.
func New(client API, queueURL string, opts ...Option) *Producer {
	p := &Producer{
		client:          client,
		queueURL:        queueURL,
		maxBytes:        DefaultMaxBytes,
		transcriptChars: memory.DefaultTranscriptChars,
		attrs:           map[string]sqstypes.MessageAttributeValue{},
		now:             time.Now,
		sendTimeout:     DefaultSendTimeout,
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Send builds the message (see [Producer.Build]) and sends it. Errors: one
// wrapping [ErrInvalid] or [ErrTooLarge] before anything is sent; one
// wrapping [ErrTimeout] when SQS did not answer within the send timeout
// (see [WithSendTimeout]) or the caller's deadline; the SQS client's
// error, wrapped.
func (p *Producer) Send(ctx context.Context, m Message) error {
	in, err := p.Build(m)
	if err != nil {
		return err
	}
	sendCtx, cancel := context.WithTimeout(ctx, p.sendTimeout)
	defer cancel()
	if _, err := p.client.SendMessage(sendCtx, in); err != nil {
		if sendCtx.Err() != nil && ctx.Err() != context.Canceled {
			return fmt.Errorf("%w: send to %s: %w", ErrTimeout, p.queueURL, err)
		}
		return fmt.Errorf("producer: send to %s: %w", p.queueURL, err)
	}
	return nil
}

// Build validates m and returns the SendMessage input Send would send:
// version 1, SentAt set to now when zero (UTC), the newest [MaxTurns] turns
// at most, of them only what the extractor reads (see [ForExtractor]),
// MessageGroupId [GroupID], MessageDeduplicationId [DeduplicationID], and
// a body whose size with the attributes is within the limit. To stay
// within it, the oldest turns are dropped first, never
// the newest; when the newest alone is over, its text is cut to fit, at a
// rune boundary, keeping its beginning and marking the cut with "…".
// The context turns are the newest that [memory.ContextTurns] keeps within
// [memory.DefaultContextChars], the extractor's default budget, and go
// first, oldest first, when the message is over the limit. Turn counts
// are left as they are: they count the thread, not the message, and
// context turns are never in them; nor are they in the deduplication ID.
// The deduplication ID of an uncounted message is [DigestDeduplicationID]
// of the turns the body carries, after all of the above.
//
// Errors: one wrapping [ErrInvalid] for a queue URL without ".fifo" or a
// message that [schema.ExtractionMessage.Validate] refuses (an ID that is
// not memory.ValidID, a negative or decreasing turn count, a turn count
// in an uncounted message, an unknown
// role, text that is not UTF-8, an invalid cheapModelId or Meta value),
// naming the rules broken; one wrapping [ErrTooLarge] when no turn fits.
func (p *Producer) Build(m Message) (*sqs.SendMessageInput, error) {
	m.Version = Version
	if m.SentAt.IsZero() {
		m.SentAt = p.now()
	}
	m.SentAt = m.SentAt.UTC()
	turns := m.Turns
	if len(turns) > MaxTurns {
		turns = turns[len(turns)-MaxTurns:]
	}
	m.Turns = turns
	if len(m.ContextTurns) > MaxTurns {
		m.ContextTurns = m.ContextTurns[len(m.ContextTurns)-MaxTurns:]
	}
	if err := p.check(m); err != nil {
		return nil, err
	}
	m.ContextTurns = contextTurns(m.ContextTurns)
	if p.transcriptChars > 0 {
		m.Turns = ForExtractor(turns, p.transcriptChars)
	} else {
		m.Turns = append(make([]Turn, 0, len(turns)), turns...)
	}
	body, sent, err := p.fit(m)
	if err != nil {
		return nil, err
	}
	dedup := DeduplicationID(m.TenantID, m.UserID, m.ThreadID, m.TurnCount)
	if m.Uncounted {
		dedup = DigestDeduplicationID(m.TenantID, m.UserID, m.ThreadID, memory.TurnsDigest(toMemory(sent)))
	}
	in := &sqs.SendMessageInput{
		QueueUrl:               aws.String(p.queueURL),
		MessageBody:            aws.String(string(body)),
		MessageGroupId:         aws.String(GroupID(m.TenantID, m.UserID)),
		MessageDeduplicationId: aws.String(dedup),
	}
	if len(p.attrs) > 0 {
		in.MessageAttributes = p.attrs
	}
	return in, nil
}

// check refuses a queue that is not FIFO and a message that
// schema.ExtractionMessage.Validate refuses, naming each rule it breaks.
func (p *Producer) check(m Message) error {
	if !strings.HasSuffix(p.queueURL, ".fifo") {
		return fmt.Errorf("%w: the queue URL must name a FIFO queue (ending in .fifo)", ErrInvalid)
	}
	if err := m.Validate(); err != nil {
		var inv *schema.InvalidError
		if errors.As(err, &inv) {
			return fmt.Errorf("%w: %s", ErrInvalid, inv.Explain())
		}
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

// size returns the SQS size of a message with body: the body plus, for
// each attribute, its name, data type and value.
func (p *Producer) size(body []byte) int {
	n := len(body)
	for k, v := range p.attrs {
		n += len(k) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue)) + len(v.BinaryValue)
	}
	return n
}

// fit returns the JSON of m with the oldest turns dropped, and the newest
// cut, as far as needed to fit the limit, and the turns it holds.
func (p *Producer) fit(m Message) ([]byte, []Turn, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, nil, fmt.Errorf("producer: encode: %w", err)
	}
	over := p.size(body) - p.maxBytes
	if over <= 0 {
		return body, m.Turns, nil
	}
	// Drop the context first, then the oldest turns, never the newest.
	hadContext := len(m.ContextTurns) > 0
	if m.ContextTurns, over, err = dropOldest(m.ContextTurns, over, 0); err != nil {
		return nil, nil, err
	}
	if hadContext && len(m.ContextTurns) == 0 {
		m.ContextTurns = nil // omitted
		over -= len(`,"contextTurns":[]`)
	}
	m.Turns, _, err = dropOldest(m.Turns, over, 1)
	if err != nil {
		return nil, nil, err
	}
	if body, err = json.Marshal(m); err != nil {
		return nil, nil, fmt.Errorf("producer: encode: %w", err)
	}
	if p.size(body) <= p.maxBytes {
		return body, m.Turns, nil
	}
	if len(m.Turns) == 0 {
		return nil, nil, fmt.Errorf("%w: %d bytes without any turn, over the limit of %d", ErrTooLarge, p.size(body), p.maxBytes)
	}
	return p.cutNewest(m)
}

// dropOldest drops the oldest of turns, keeping at least keep, until the
// bytes saved cover over; each saves its encoding and a comma. It returns
// the turns left and what is still over.
func dropOldest(turns []Turn, over, keep int) ([]Turn, int, error) {
	drop := 0
	for drop < len(turns)-keep && over > 0 {
		enc, err := json.Marshal(turns[drop])
		if err != nil {
			return nil, 0, fmt.Errorf("producer: encode: %w", err)
		}
		over -= len(enc) + 1
		drop++
	}
	return turns[drop:], over, nil
}

// contextTurns returns the context turns the extractor reads, in the
// schema's type: memory.TranscriptTurns within memory.DefaultContextChars;
// nil when none is left.
func contextTurns(turns []Turn) []Turn {
	kept := memory.TranscriptTurns(toMemory(turns), memory.DefaultContextChars)
	if len(kept) == 0 {
		return nil
	}
	return fromMemory(kept)
}

// cutNewest cuts the text of the only turn left to the longest beginning
// that fits, marked with "…", and returns the JSON and the turn cut.
func (p *Producer) cutNewest(m Message) ([]byte, []Turn, error) {
	text := m.Turns[0].Text
	encode := func(runes int) ([]byte, error) {
		m.Turns = []Turn{{Role: m.Turns[0].Role, Text: firstRunes(text, runes) + "…"}}
		return json.Marshal(m)
	}
	// The largest rune count whose encoding fits; 0 when none does.
	lo, hi := 0, utf8.RuneCountInString(text)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		body, err := encode(mid)
		if err != nil {
			return nil, nil, fmt.Errorf("producer: encode: %w", err)
		}
		if p.size(body) <= p.maxBytes {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	body, err := encode(lo)
	if err != nil {
		return nil, nil, fmt.Errorf("producer: encode: %w", err)
	}
	if lo == 0 || p.size(body) > p.maxBytes {
		return nil, nil, fmt.Errorf("%w: no room for a turn within the limit of %d bytes", ErrTooLarge, p.maxBytes)
	}
	return body, m.Turns, nil
}

// firstRunes returns the first n runes of s.
func firstRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// ForExtractor returns, in a new slice, the part of turns that an
// extractor with a transcript budget of maxChars characters reads: the
// turns memory.TranscriptTurns keeps, the one rule of what a transcript
// holds (tool turns and empty turns left out, texts trimmed, the turn
// that crosses the budget keeping the end of its text), so that
// memory.Transcript of the result, with maxChars, is memory.Transcript of
// turns. When no turn would be transcribed, the newest turn is kept, so
// that a message never goes without one.
func ForExtractor(turns []Turn, maxChars int) []Turn {
	kept := fromMemory(memory.TranscriptTurns(toMemory(turns), maxChars))
	if len(kept) == 0 && len(turns) > 0 {
		return []Turn{turns[len(turns)-1]}
	}
	return kept
}

// toMemory returns turns in the core's type.
func toMemory(turns []Turn) []memory.Turn {
	out := make([]memory.Turn, len(turns))
	for i, t := range turns {
		out[i] = memory.Turn{Role: t.Role, Text: t.Text}
	}
	return out
}

// fromMemory returns turns in the schema's type, never nil: no turn is
// "turns":[], not null.
func fromMemory(turns []memory.Turn) []Turn {
	out := make([]Turn, len(turns))
	for i, t := range turns {
		out[i] = Turn{Role: t.Role, Text: t.Text}
	}
	return out
}
