package producer_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/producer"
	"github.com/usermemory/usermemory/schema"
)

var updateVectors = flag.Bool("update", false, "rewrite the shared test vectors of testdata/producer-vectors from this producer")

// vectorsPath is the file of message vectors that the Go producer and the
// TypeScript client (clients/typescript) both build.
const vectorsPath = "../testdata/producer-vectors/messages.json"

// inlineBody is the largest body a vector spells out; a larger one is held
// by its size and SHA-256.
const inlineBody = 4096

// vectorFile is testdata/producer-vectors/messages.json.
type vectorFile struct {
	About    string          `json:"about"`
	Now      time.Time       `json:"now"`
	QueueURL string          `json:"queueUrl"`
	Messages []messageVector `json:"messages"`
}

// messageVector is one input of the producer and what comes out of it.
type messageVector struct {
	Name string `json:"name"`
	// QueueURL replaces the file's queue URL.
	QueueURL string `json:"queueUrl,omitempty"`
	// MaxBytes, TranscriptChars and Attributes are the producer's options
	// (WithMaxBytes, WithTranscriptChars, WithAttributes); absent, their
	// defaults.
	MaxBytes        int               `json:"maxBytes,omitempty"`
	TranscriptChars *int              `json:"transcriptChars,omitempty"`
	Attributes      map[string]string `json:"attributes,omitempty"`
	// Message is the message given to Build, without version; without
	// sentAt, the file's now is the clock.
	Message json.RawMessage `json:"message"`
	// Want is what Build returns, or Error why it refuses: "invalid"
	// (ErrInvalid) or "too_large" (ErrTooLarge).
	Want  *builtVector `json:"want,omitempty"`
	Error string       `json:"error,omitempty"`
}

// builtVector is a message as Build makes it.
type builtVector struct {
	GroupID         string `json:"groupId"`
	DeduplicationID string `json:"deduplicationId"`
	BodyBytes       int    `json:"bodyBytes"`
	BodySHA256      string `json:"bodySha256"`
	// Body is the body itself, when it is at most inlineBody bytes.
	Body string `json:"body,omitempty"`
}

// TestSharedVectors builds every message of the shared vectors and holds
// the result to the file, byte for byte; the TypeScript client's tests hold
// it to the same file. go test -update rewrites the file from
// vectorCases.
func TestSharedVectors(t *testing.T) {
	if *updateVectors {
		writeVectors(t)
	}
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Messages) < len(vectorCases()) {
		t.Fatalf("%s has %d vectors, want %d: run go test ./producer/ -run SharedVectors -update", vectorsPath, len(f.Messages), len(vectorCases()))
	}
	for _, v := range f.Messages {
		got, body, err := buildVector(f, v)
		if err == nil {
			m, err := schema.DecodeExtractionMessageV1([]byte(body))
			if err != nil {
				t.Errorf("%s: the extractor refuses the body: %v", v.Name, err)
			}
			// The deduplication ID of an uncounted message is that of the
			// digest the extractor takes of the turns it reads.
			if err == nil && m.Uncounted && got.DeduplicationID != producer.DigestDeduplicationID(m.TenantID, m.UserID, m.ThreadID, memoryDigest(m.Turns)) {
				t.Errorf("%s: deduplication ID %s, not that of the digest of the body's turns", v.Name, got.DeduplicationID)
			}
		}
		switch {
		case v.Error != "":
			if err == nil || errorName(err) != v.Error {
				t.Errorf("%s: error %v, want %s", v.Name, err, v.Error)
			}
		case err != nil:
			t.Errorf("%s: %v", v.Name, err)
		case v.Want == nil || *got != *v.Want:
			t.Errorf("%s:\n got %+v\nwant %+v", v.Name, got, v.Want)
		}
	}
}

// memoryDigest returns memory.TurnsDigest of turns.
func memoryDigest(turns []producer.Turn) string {
	out := make([]memory.Turn, len(turns))
	for i, t := range turns {
		out[i] = memory.Turn{Role: t.Role, Text: t.Text}
	}
	return memory.TurnsDigest(out)
}

// buildVector runs Build on the input of v and returns the result as the
// file holds it, and the body.
func buildVector(f vectorFile, v messageVector) (*builtVector, string, error) {
	var m producer.Message
	if err := json.Unmarshal(v.Message, &m); err != nil {
		if inv := (*schema.InvalidError)(nil); errors.As(err, &inv) {
			// One count without the other, which a Message cannot hold.
			return nil, "", fmt.Errorf("%w: %v", producer.ErrInvalid, err)
		}
		return nil, "", fmt.Errorf("vector input: %w", err)
	}
	opts := []producer.Option{producer.WithClock(func() time.Time { return f.Now })}
	if v.MaxBytes != 0 {
		opts = append(opts, producer.WithMaxBytes(v.MaxBytes))
	}
	if v.TranscriptChars != nil {
		opts = append(opts, producer.WithTranscriptChars(*v.TranscriptChars))
	}
	if v.Attributes != nil {
		opts = append(opts, producer.WithAttributes(v.Attributes))
	}
	queue := f.QueueURL
	if v.QueueURL != "" {
		queue = v.QueueURL
	}
	in, err := producer.New(nil, queue, opts...).Build(m)
	if err != nil {
		return nil, "", err
	}
	body := *in.MessageBody
	sum := sha256.Sum256([]byte(body))
	out := &builtVector{GroupID: *in.MessageGroupId, DeduplicationID: *in.MessageDeduplicationId,
		BodyBytes: len(body), BodySHA256: hex.EncodeToString(sum[:])}
	if len(body) <= inlineBody {
		out.Body = body
	}
	return out, body, nil
}

// errorName names an error of Build as the vectors do.
func errorName(err error) string {
	switch {
	case errors.Is(err, producer.ErrInvalid):
		return "invalid"
	case errors.Is(err, producer.ErrTooLarge):
		return "too_large"
	}
	return err.Error()
}

// writeVectors writes the vector file from vectorCases and this producer.
func writeVectors(t *testing.T) {
	t.Helper()
	f := vectorFile{
		About: "Shared test vectors of the extraction message: the Go producer (producer/vectors_test.go) and the " +
			"TypeScript client (clients/typescript/test/vectors.test.ts) build each message from its input and must " +
			"give exactly this body, group ID and deduplication ID, or refuse it with this error. " +
			"Written by: go test ./producer/ -run SharedVectors -update.",
		Now:      time.Date(2026, 12, 2, 9, 30, 15, 250_000_000, time.UTC),
		QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/usermemory-extraction.fifo",
	}
	for _, c := range vectorCases() {
		v := c.vector(t)
		got, _, err := buildVector(f, v)
		if err != nil {
			v.Error = errorName(err)
		} else {
			v.Want = got
		}
		f.Messages = append(f.Messages, v)
	}
	// One vector a line, so that a change shows as the lines it changes.
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for _, kv := range [][2]any{{"about", f.About}, {"now", f.Now}, {"queueUrl", f.QueueURL}} {
		fmt.Fprintf(&buf, "  %q: %s,\n", kv[0], compact(t, kv[1]))
	}
	buf.WriteString("  \"messages\": [")
	for i, v := range f.Messages {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n    ")
		buf.Write(compact(t, v))
	}
	buf.WriteString("\n  ]\n}\n")
	if err := os.WriteFile(vectorsPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// compact returns v as JSON on one line, with < > & as they are.
func compact(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}

// vectorCase is one input of the vectors, written in Go.
type vectorCase struct {
	name            string
	queueURL        string
	maxBytes        int
	transcriptChars *int
	attributes      map[string]string
	m               producer.Message
	// sentAt, when not empty, is the message's sentAt as written (with its
	// offset and digits); otherwise the message has none.
	sentAt string
	// extra holds members of the input as written, over those of m: what
	// the Go type cannot say, such as an empty threadTitle.
	extra map[string]any
}

// vector returns c as the file holds it: the message without version,
// and sentAt as written or left out.
func (c vectorCase) vector(t *testing.T) messageVector {
	t.Helper()
	raw, err := json.Marshal(c.m)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	delete(fields, "version")
	delete(fields, "sentAt")
	if c.sentAt != "" {
		fields["sentAt"] = c.sentAt
	}
	maps.Copy(fields, c.extra)
	return messageVector{Name: c.name, QueueURL: c.queueURL, MaxBytes: c.maxBytes, TranscriptChars: c.transcriptChars,
		Attributes: c.attributes, Message: json.RawMessage(compact(t, fields))}
}

func intp(n int) *int { return &n }

// turns returns turns alternating user and assistant, from the user.
func turns(texts ...string) []producer.Turn {
	out := make([]producer.Turn, len(texts))
	for i, s := range texts {
		out[i] = producer.Turn{Role: "user", Text: s}
		if i%2 == 1 {
			out[i].Role = "assistant"
		}
	}
	return out
}

// base returns a valid message of user ana in thread th-1.
func base(prev, count int, ts ...producer.Turn) producer.Message {
	if ts == nil {
		ts = []producer.Turn{} // an empty array, as a gateway sends it
	}
	return producer.Message{TenantID: "acme", UserID: "ana", ThreadID: "th-1", PreviousTurnCount: prev, TurnCount: count, Turns: ts}
}

func with(m producer.Message, f func(*producer.Message)) producer.Message { f(&m); return m }

// manyTurns returns n short turns, numbered.
func manyTurns(n int) []producer.Turn {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprint("turn ", i)
	}
	return turns(texts...)
}

// vectorCases lists the inputs of the vectors: the rules of Build, each at
// its edges.
func vectorCases() []vectorCase {
	ana := turns("Hi, I'm Ana from Lisbon, answer in Portuguese", "Olá Ana!")
	long := strings.Repeat("Não sei bem. 日本語も少し話します. ", 500) // 16,000 runes, multi-byte
	tool := producer.Turn{Role: "tool", Text: "search: 10 results"}
	cases := []vectorCase{
		{name: "the README's message", m: base(0, 2, ana...), sentAt: "2026-11-29T22:00:00Z"},
		{name: "no sentAt: the clock's time", m: base(0, 2, ana...)},
		{name: "sentAt with an offset and nanoseconds, written in UTC", m: base(0, 2, ana...), sentAt: "2026-11-29T23:00:00.123456780+01:00"},
		{name: "sentAt with a fraction of zeros", m: base(0, 2, ana...), sentAt: "2026-11-29T22:00:00.000-03:30"},
		{name: "the zero time means now", m: base(0, 2, ana...), sentAt: "0001-01-01T00:00:00Z"},
		{name: "characters Go escapes", m: base(4, 6, turns(
			"<b>Tom & Jerry</b> say \"hi\" \\ back\u2028line\u2029para\b\f\x01\x1f\x7f\ttab\r\n",
			"emoji 😀, שלום, مرحبا, 中文, e\u0301")...)},
		{name: "model ID and meta", m: with(base(0, 1, ana[0]), func(m *producer.Message) {
			m.CheapModelID = "us.amazon.nova-micro-v1:0"
			m.Meta = &producer.Meta{RequestID: "req-1", TraceID: "Root=1-5759e988-bd862e3fe1be46a994272793"}
		})},
		{name: "meta with one ID", m: with(base(0, 1, ana[0]), func(m *producer.Message) { m.Meta = &producer.Meta{TraceID: "t<1>&"} })},
		{name: "meta without IDs", m: with(base(0, 1, ana[0]), func(m *producer.Message) { m.Meta = &producer.Meta{} })},
		{name: "every character an ID may hold", m: with(base(0, 1, ana[0]), func(m *producer.Message) {
			m.TenantID, m.UserID, m.ThreadID = "A-z_0.9:@|+=", "user@example.com", "th|1+2=3"
		})},
		{name: "IDs of 128 characters: a hashed group ID", m: with(base(0, 1, ana[0]), func(m *producer.Message) {
			m.TenantID, m.UserID, m.ThreadID = strings.Repeat("t", 128), strings.Repeat("u", 128), strings.Repeat("h", 128)
		})},
		{name: "a group ID of exactly 128 characters", m: with(base(0, 1, ana[0]), func(m *producer.Message) {
			m.TenantID, m.UserID = strings.Repeat("t", 63), strings.Repeat("u", 64)
		})},
		{name: "the largest turn count", m: base(2147483646, 2147483647, ana...)},
		{name: "no new turn", m: base(3, 3, ana...)},
		{name: "no turn at all", m: base(3, 3)},
		{name: "no turn at all, turns whole", transcriptChars: intp(0), m: base(3, 3)},
		{name: "tool turns are not read", m: base(6, 9, ana[0], tool, ana[1])},
		{name: "only tool turns: the newest is kept", m: base(6, 8, tool, producer.Turn{Role: "tool", Text: "fetch: done"})},
		{name: "blank turns are not read; Go's white space", m: base(6, 10, turns(
			" \t\n", "\u00a0\u3000 kept, trimmed for counting only \u0085", "\ufeffa BOM is not white space to Go\ufeff", "\u2003")...)},
		{name: "turns whole with transcriptChars 0", transcriptChars: intp(0), m: base(6, 9, ana[0], tool, ana[1])},
		{name: "a small transcript budget cuts the crossing turn", transcriptChars: intp(200), m: base(6, 12, turns(
			"first turn, dropped", strings.Repeat("abcdé ", 30), "short", "newest: "+strings.Repeat("x", 40))...)},
		{name: "a crossing turn with 64 characters of room or less is dropped", transcriptChars: intp(150), m: base(6, 12, turns(
			strings.Repeat("older ", 20), "Assistant-sized answer "+strings.Repeat("y", 60))...)},
		{name: "the newest turn alone over the budget", transcriptChars: intp(100), m: base(0, 1, producer.Turn{Role: "user", Text: "  " + strings.Repeat("日本", 80) + "  "})},
		{name: "the default transcript budget", m: base(0, 3, turns("dropped: before the budget", "", long)...)},
		{name: "context turns within the context budget, trimmed", m: with(base(6, 8, ana...), func(m *producer.Message) {
			m.ContextTurns = []producer.Turn{{Role: "user", Text: "  Do you like cats? "}, tool, {Role: "assistant", Text: "Yes!\n"}, {Role: "user", Text: "   "}}
		})},
		{name: "a long context turn keeps its end", m: with(base(6, 8, ana...), func(m *producer.Message) {
			m.ContextTurns = turns("dropped", strings.Repeat("context é ", 100), strings.Repeat("Shall I answer in Portuguese? ", 30))
		})},
		{name: "context turns of only tools are left out", m: with(base(6, 8, ana...), func(m *producer.Message) {
			m.ContextTurns = []producer.Turn{tool}
		})},
		{name: "over the size limit: the context goes first", maxBytes: 1024, m: with(base(6, 8, turns(strings.Repeat("a", 300), strings.Repeat("b", 300))...), func(m *producer.Message) {
			m.ContextTurns = turns(strings.Repeat("c", 200), strings.Repeat("d", 200), strings.Repeat("e", 200))
		})},
		{name: "over the size limit: part of the context goes", maxBytes: 1200, m: with(base(6, 8, turns(strings.Repeat("a", 300), strings.Repeat("b", 300))...), func(m *producer.Message) {
			m.ContextTurns = turns(strings.Repeat("c", 200), strings.Repeat("d", 200), strings.Repeat("e", 200))
		})},
		{name: "over the size limit: the oldest turns go", maxBytes: 1024, m: base(6, 30, manyTurns(60)...)},
		{name: "over the size limit: the newest turn is cut", maxBytes: 1024, m: base(0, 2, turns(strings.Repeat("ü", 400), strings.Repeat("<é>", 400))...)},
		{name: "attributes count towards the size limit", maxBytes: 1024, attributes: map[string]string{"traceparent": strings.Repeat("0", 300)},
			m: base(0, 2, turns(strings.Repeat("a", 400), strings.Repeat("b", 400))...)},
		{name: "attributes leave no room for a turn", maxBytes: 1024, attributes: map[string]string{"x": strings.Repeat("0", 1100)}, m: base(0, 2, ana...)},
		{name: "the newest 2000 turns", transcriptChars: intp(0), m: base(0, 2003, manyTurns(2003)...)},
		{name: "a queue that is not FIFO", queueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/usermemory", m: base(0, 2, ana...)},
		{name: "a tenant with a slash", m: with(base(0, 2, ana...), func(m *producer.Message) { m.TenantID = "acme/evil" })},
		{name: "an empty user", m: with(base(0, 2, ana...), func(m *producer.Message) { m.UserID = "" })},
		{name: "a thread of 129 characters", m: with(base(0, 2, ana...), func(m *producer.Message) { m.ThreadID = strings.Repeat("h", 129) })},
		{name: "a negative count", m: base(-1, 2, ana...)},
		{name: "a count over the largest", m: base(0, 2147483648, ana...)},
		{name: "a count that goes back", m: base(4, 2, ana...)},
		{name: "an unknown role", m: base(0, 1, producer.Turn{Role: "system", Text: "hi"})},
		{name: "an unknown role in the context", m: with(base(0, 1, ana[0]), func(m *producer.Message) { m.ContextTurns = []producer.Turn{{Role: "bot", Text: "x"}} })},
		{name: "a model ID with a space", m: with(base(0, 1, ana[0]), func(m *producer.Message) { m.CheapModelID = "nova micro" })},
		{name: "a trace ID with a space", m: with(base(0, 1, ana[0]), func(m *producer.Message) { m.Meta = &producer.Meta{TraceID: "a b"} })},
	}
	cases = append(cases, titleCases(ana)...)
	cases = append(cases, randomCases(60)...)
	cases = append(cases, randomTitleCases(30)...)
	cases = append(cases, uncountedCases(ana, tool)...)
	return append(cases, randomUncountedCases(30)...)
}

// uncountedOf returns m without turn counts.
func uncountedOf(m producer.Message) producer.Message {
	m.PreviousTurnCount, m.TurnCount, m.Uncounted = 0, 0, true
	return m
}

// uncountedCases lists the inputs without turn counts: the body leaves
// both out, and the deduplication ID is DigestDeduplicationID of the
// turns the body carries, after the transcript budget and the size limit;
// one count alone is refused.
func uncountedCases(ana []producer.Turn, tool producer.Turn) []vectorCase {
	u := func(prev, count int, ts ...producer.Turn) producer.Message {
		return uncountedOf(base(prev, count, ts...))
	}
	return []vectorCase{
		{name: "uncounted: the reference's arguments", m: with(u(0, 0, ana...), func(m *producer.Message) {
			m.CheapModelID = "us.amazon.nova-micro-v1:0"
			m.Meta = &producer.Meta{RequestID: "req-1", TraceID: "Root=1-5759e988-bd862e3fe1be46a994272793"}
		}), sentAt: "2026-11-29T22:00:00Z"},
		{name: "uncounted: the same turns with a title, context and another time: the same deduplication ID",
			m: with(titled(u(0, 0, ana...), "Trip"), func(m *producer.Message) { m.ContextTurns = turns("Do you like cats?", "Yes!") })},
		{name: "uncounted: another thread, another deduplication ID", m: with(u(0, 0, ana...), func(m *producer.Message) { m.ThreadID = "th-2" })},
		{name: "uncounted: the turns in another order", m: u(0, 0, ana[1], ana[0])},
		{name: "uncounted: tool and blank turns are not sent, nor in the digest", m: u(0, 0, ana[0], tool, producer.Turn{Role: "user", Text: " \t"}, ana[1])},
		{name: "uncounted: texts trimmed before the digest", m: u(0, 0, turns("  Hi, I'm Ana from Lisbon, answer in Portuguese\n", "\u3000Olá Ana! ")...)},
		{name: "uncounted: only tool turns, the newest is kept", m: u(0, 0, tool, producer.Turn{Role: "tool", Text: "fetch: done"})},
		{name: "uncounted: a tool turn with no text", m: u(0, 0, producer.Turn{Role: "tool", Text: ""})},
		{name: "uncounted: the digest of what the transcript budget keeps", transcriptChars: intp(200), m: u(0, 0, turns(
			"first turn, dropped", strings.Repeat("abcdé ", 30), "short", "newest: "+strings.Repeat("x", 40))...)},
		{name: "uncounted: turns whole with transcriptChars 0", transcriptChars: intp(0), m: u(0, 0, ana[0], tool, ana[1])},
		{name: "uncounted: over the size limit, the oldest turns go", maxBytes: 1024, m: u(0, 0, manyTurns(60)...)},
		{name: "uncounted: over the size limit, the newest turn is cut", maxBytes: 1024, m: u(0, 0, turns(strings.Repeat("ü", 400), strings.Repeat("<é>", 400))...)},
		{name: "uncounted: no turn at all", m: u(0, 0)},
		{name: "uncounted: previousTurnCount alone", m: u(0, 0, ana...), extra: map[string]any{"previousTurnCount": 2}},
		{name: "uncounted: turnCount alone", m: u(0, 0, ana...), extra: map[string]any{"turnCount": 2}},
		{name: "uncounted: previousTurnCount 0 alone", m: u(0, 0, ana...), extra: map[string]any{"previousTurnCount": 0}},
		{name: "uncounted: an unknown role", m: u(0, 0, producer.Turn{Role: "system", Text: "hi"})},
		{name: "uncounted: an invalid thread", m: with(u(0, 0, ana...), func(m *producer.Message) { m.ThreadID = "th/1" })},
	}
}

// randomUncountedCases returns n uncounted messages drawn with a fixed
// seed as randomCases draws its messages.
func randomUncountedCases(n int) []vectorCase {
	cases := randomCasesSeeded(n, 30, "random uncounted ")
	for i := range cases {
		cases[i].m = uncountedOf(cases[i].m)
	}
	return cases
}

// titled returns m with the thread title title.
func titled(m producer.Message, title string) producer.Message {
	m.ThreadTitle = title
	return m
}

// titleCases lists the inputs with a threadTitle: sent as given (the
// extractor cleans it), after threadId, outside the deduplication ID, at
// most schema.MaxThreadTitleChars code points.
func titleCases(ana []producer.Turn) []vectorCase {
	sixty := strings.Repeat("😀", schema.MaxThreadTitleChars) // 60 runes, 240 bytes, 120 UTF-16 units
	return []vectorCase{
		{name: "a thread title: the same deduplication ID", m: titled(base(0, 2, ana...), "Trip to Lisbon"), sentAt: "2026-11-29T22:00:00Z"},
		{name: "an empty thread title is left out", m: base(0, 2, ana...), extra: map[string]any{"threadTitle": ""}},
		{name: "a thread title Go escapes, sent as given", m: titled(base(0, 2, ana...),
			" <b>Tom & Jerry</b> \"hi\" \\ \u2028\u2029\x01\x7f\tline\r\nnext ")},
		{name: "a thread title of only white space, sent as given", m: titled(base(0, 2, ana...), " \u00a0\u3000\n")},
		{name: "a thread title of 60 characters of 4 bytes", m: titled(base(0, 2, ana...), sixty)},
		{name: "a thread title of 61 characters of 4 bytes", m: titled(base(0, 2, ana...), sixty+"😀")},
		{name: "a thread title of 60 characters, combining marks counted", m: titled(base(0, 2, ana...), strings.Repeat("e\u0301", 30))},
		{name: "a thread title of 61 characters, combining marks counted", m: titled(base(0, 2, ana...), strings.Repeat("e\u0301", 30)+"!")},
		{name: "a thread title of 60 characters Go escapes", m: titled(base(0, 2, ana...), strings.Repeat("<\u2028&", 20))},
		{name: "a thread title of 60 ASCII characters and a BOM", m: titled(base(0, 2, ana...), strings.Repeat("a", 59)+"\ufeff")},
		{name: "a thread title and an invalid ID", m: titled(with(base(0, 2, ana...), func(m *producer.Message) { m.UserID = "" }), "Trip")},
		{name: "over the size limit: the title stays, the oldest turns go", maxBytes: 1024,
			m: titled(base(6, 30, manyTurns(60)...), strings.Repeat("日本", 30))},
		{name: "over the size limit: the title stays, the newest turn is cut", maxBytes: 1024,
			m: titled(base(0, 2, turns(strings.Repeat("ü", 400), strings.Repeat("<é>", 400))...), sixty)},
		{name: "a thread title with context, model ID and meta", m: with(titled(base(6, 8, ana...), "Férias 🏖 <2027>"), func(m *producer.Message) {
			m.ContextTurns = turns("Do you like cats?", "Yes!")
			m.CheapModelID = "us.amazon.nova-micro-v1:0"
			m.Meta = &producer.Meta{RequestID: "req-1"}
		})},
	}
}

// randomTitleCases returns n messages whose thread titles are drawn with a
// fixed seed from tricky pieces, from 0 to 70 characters: valid up to 60,
// refused beyond.
func randomTitleCases(n int) []vectorCase {
	r := rand.New(rand.NewPCG(60, 2026))
	pieces := []string{"a", " ", "\t", "\n", "é", "e\u0301", "日", "😀", "<", "&", ">", "\u2028", "\u0085", "\u00a0",
		"\ufeff", "\"", "\\", "\x01", "\x7f", "\ufffd"}
	cases := make([]vectorCase, n)
	for i := range cases {
		want := r.IntN(71)
		var b strings.Builder
		for utf8.RuneCountInString(b.String()) < want {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		title := firstRunes(b.String(), want)
		m := titled(base(r.IntN(20), 20+r.IntN(20), turns("I live in Porto", "Noted")...), title)
		c := vectorCase{name: fmt.Sprint("random title ", i+1), m: m}
		if r.IntN(2) == 0 {
			c.maxBytes = 1024 + r.IntN(500)
		}
		cases[i] = c
	}
	return cases
}

// firstRunes returns the first n runes of s.
func firstRunes(s string, n int) string {
	rs := []rune(s)
	return string(rs[:min(n, len(rs))])
}

// randomCases returns n messages drawn with a fixed seed from tricky
// pieces of text (white space Go trims and JavaScript does not, and the
// reverse; characters of 1 to 4 UTF-8 bytes; characters Go escapes),
// with random roles, context turns, transcript budgets and size limits:
// what the hand-written cases may have missed.
func randomCases(n int) []vectorCase { return randomCasesSeeded(n, 18, "random ") }

// randomCasesSeeded is randomCases with the seed seed and names that
// start with name.
func randomCasesSeeded(n int, seed uint64, name string) []vectorCase {
	r := rand.New(rand.NewPCG(seed, 2026))
	pieces := []string{"a", "Ana ", " ", "\t", "\n", "é", "日本", "😀", "<", "&", "\u2028", "\u0085", "\u00a0",
		"\ufeff", "\u3000", "\"", "\\", "\x01", strings.Repeat("x", 70)}
	roles := []string{"user", "assistant", "tool"}
	text := func() string {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	draw := func(k int) []producer.Turn {
		out := make([]producer.Turn, k)
		for i := range out {
			out[i] = producer.Turn{Role: roles[r.IntN(len(roles))], Text: text()}
		}
		return out
	}
	cases := make([]vectorCase, n)
	for i := range cases {
		ts := draw(1 + r.IntN(8))
		m := base(r.IntN(20), 20+r.IntN(20), ts...)
		if r.IntN(2) == 0 {
			m.ContextTurns = draw(r.IntN(6))
		}
		c := vectorCase{name: fmt.Sprint(name, i+1), m: m}
		if r.IntN(2) == 0 {
			c.transcriptChars = intp([]int{0, 80, 150, 300, 600}[r.IntN(5)])
		}
		if r.IntN(2) == 0 {
			c.maxBytes = 1024 + r.IntN(1500)
		}
		cases[i] = c
	}
	return cases
}
