package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
)

// gateway simulates an AI gateway: after every answer of a thread it sends
// one message through the producer, and the extractor's handler receives
// it as Lambda would. The message holds the turns since the last message
// that was due (the gateway runs the same isExtractDue rule) or, when
// whole is set, every turn of the thread, which the producer cuts to its
// size limit. When dueOnly is set, the messages that are not due are not
// sent: the handler would drop them before any read or model call.
type gateway struct {
	t       testing.TB
	invoker lambda.Handler
	store   *memory.Store
	prod    *producer.Producer
	scope   memory.Scope
	thread  string
	whole   bool
	dueOnly bool
	count   int
	pending []producer.Turn
	sent    int
	seq     int
}

func newGateway(tb testing.TB, h *Handler, store *memory.Store, sc memory.Scope, thread string) *gateway {
	return &gateway{t: tb, invoker: lambda.NewHandler(h.Handle), store: store,
		prod: producer.New(nil, "http://sqs.local/000000000000/extraction.fifo"), scope: sc, thread: thread}
}

// answer adds one call of turns to the thread and delivers its message
// (twice when redeliver is set, as SQS may).
func (g *gateway) answer(turns []producer.Turn, redeliver bool) {
	g.t.Helper()
	prev := g.count
	g.count += len(turns)
	g.pending = append(g.pending, turns...)
	due := g.store.IsExtractDue(prev, g.count)
	if g.whole {
		g.pending = newestWithin(g.pending, producer.DefaultMaxBytes)
	}
	if g.dueOnly && !due {
		return
	}
	in, err := g.prod.Build(producer.Message{TenantID: g.scope.TenantID, UserID: g.scope.UserID, ThreadID: g.thread,
		PreviousTurnCount: prev, TurnCount: g.count, Turns: g.pending})
	if err != nil {
		g.t.Fatal(err)
	}
	if due && !g.whole {
		g.pending = nil
	}
	for range 1 + btoi(redeliver) {
		g.deliver(in.MessageBody, aws.ToString(in.MessageGroupId))
	}
}

// newestWithin returns the newest turns up to and including the first,
// counting back, whose texts together pass maxBytes bytes: a producer
// would drop every older turn anyway (their JSON is longer than their
// text), so keeping them only costs time.
func newestWithin(turns []producer.Turn, maxBytes int) []producer.Turn {
	n := 0
	for i := len(turns) - 1; i >= 0; i-- {
		if n += len(turns[i].Text); n > maxBytes {
			return turns[i:]
		}
	}
	return turns
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (g *gateway) deliver(body *string, group string) {
	g.t.Helper()
	g.seq++
	ev := events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: "m-" + strconv.Itoa(g.seq), Body: aws.ToString(body),
		Attributes: map[string]string{"MessageGroupId": group, "ApproximateReceiveCount": "1",
			"SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)},
	}}}
	payload, err := json.Marshal(ev)
	if err != nil {
		g.t.Fatal(err)
	}
	out, err := g.invoker.Invoke(context.Background(), payload)
	if err != nil {
		g.t.Fatal(err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.BatchItemFailures) != 0 {
		g.t.Fatalf("delivery failed: %s (%v)", out, err)
	}
	g.sent++
}

// turnText returns a turn of about n characters that names its number.
func turnText(role string, i, n int) string {
	s := fmt.Sprintf("%s turn %d: ", role, i)
	return s + strings.Repeat("lorem ipsum ", (n-len(s))/12+1)[:n-len(s)]
}

func newFigureHandler(tb testing.TB, repo memory.Repository, model memory.Model, cfg memory.Config, opts ...memory.Option) (*Handler, *memory.Store) {
	tb.Helper()
	store, err := memory.New(repo, cfg, append([]memory.Option{memory.WithModel(model)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	h, err := NewHandler(store, WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	if err != nil {
		tb.Fatal(err)
	}
	return h, store
}

// TestFigureModelCallsPerThread is figure (a): the cheap-model calls of a
// simulated thread of T turns at extractEveryTurns N, the gateway sending
// one message per answer with 1 to 3 turns per call and every fifth message
// delivered twice. The calls are asserted equal to the messages that
// crossed a multiple of N (or ended the first answer), counted here
// apart from the store's rule, and within the bound ceil(T/N)+1; the
// table is printed with -v and BENCHMARKS.md's block model-calls holds it.
// The gateway of TestFigureModelCallsPerThread sends 1 to
// maxTurnsPerMessage turns a message, and every redeliverEvery-th message
// twice.
const (
	maxTurnsPerMessage = 3
	redeliverEvery     = 5
)

func TestFigureModelCallsPerThread(t *testing.T) {
	t.Logf("%6s %4s %9s %11s %12s %9s %14s", "T", "N", "messages", "deliveries", "model calls", "due", "ceil(T/N)+1")
	headline := "" // the default run, against mem0's calls
	table := "| T | N | messages | deliveries | model calls | ceil(T/N)+1 |\n|---:|---:|---:|---:|---:|---:|\n"
	for _, T := range []int{10, 100, 1000} {
		for _, N := range []int{1, 3, 6, 10, 25} {
			model := memorytest.NewModel()
			// The subject is the prompt, not evidence: the scripted facts quote nothing.
			h, store := newFigureHandler(t, memorytest.NewRepo(), model, memory.Config{ExtractEveryTurns: N, EvidenceCheckOff: true})
			g := newGateway(t, h, store, memory.Scope{TenantID: "acme", UserID: "u-1"}, "th-1")
			rng := rand.New(rand.NewPCG(uint64(T), uint64(N)))
			messages, due := 0, 0
			for g.count < T {
				k := min(1+rng.IntN(maxTurnsPerMessage), T-g.count)
				turns := make([]producer.Turn, k)
				for i := range turns {
					role := []string{"user", "assistant", "tool"}[(g.count+i)%3]
					turns[i] = producer.Turn{Role: role, Text: turnText(role, g.count+i+1, 80)}
				}
				messages++
				if prev := g.count; prev == 0 || (prev+k)/N > prev/N {
					due++
				}
				g.answer(turns, messages%redeliverEvery == 0)
			}
			bound := (T+N-1)/N + 1
			calls := model.Calls()
			t.Logf("%6d %4d %9d %11d %12d %9d %14d", T, N, messages, g.sent, calls, due, bound)
			table += fmt.Sprintf("| %d | %d | %d | %d | %d | %d |\n", T, N, messages, g.sent, calls, bound)
			if T == 1000 && N == memory.DefaultExtractEveryTurns {
				headline = fmt.Sprintf("1,000-turn thread, N=%d: **%d calls for %d messages** (bound ⌈T/N⌉+1 = %d; mem0: %s–%s)",
					N, calls, messages, bound, docblock.Thousands(messages), docblock.Thousands(2*messages))
			}
			if calls != due {
				t.Errorf("T=%d N=%d: %d model calls for %d due messages (%d deliveries)", T, N, calls, due, g.sent)
			}
			if calls > bound {
				t.Errorf("T=%d N=%d: %d model calls, over the bound %d", T, N, calls, bound)
			}
			if calls == 0 {
				t.Errorf("T=%d N=%d: no model call at all", T, N)
			}
		}
	}
	path := filepath.Join(httpapitest.Root(t), "BENCHMARKS.md")
	docblock.Check(t, path, "model-calls", table+"\nThe default run: "+headline+".")
}

// factModel answers every call with one to eight operations: SETs of keys
// drawn from a pool three times MaxFacts (so the cap keeps dropping the
// facts updated longest ago) and now and then a DELETE. Keys and values
// have varied lengths, up to and past MaxFactChars (the store cuts them),
// and some values hold characters JSON escapes (" & < >).
type factModel struct {
	*memorytest.Model
	rng      *rand.Rand
	keys     []string
	maxChars int
}

// The shape of factModel's answers: at most factModelOps operations, keys
// from a pool of keysPerFact × MaxFacts, each a keyPrefix-character
// label and a body of shortKeyMin to shortKeyMin+shortKeySpan-1
// characters (or, one time in 8, MaxFactChars/2 to 3×MaxFactChars/2-1),
// values of valueMin to 2×MaxFactChars-1 characters.
const (
	factModelOps = 8
	keysPerFact  = 3
	keyPrefix    = len("k00_")
	shortKeyMin  = 4
	shortKeySpan = 24
	valueMin     = 3
)

// factKeyChars returns the shortest and the longest key factModel draws
// under maxChars.
func factKeyChars(maxChars int) (lo, hi int) {
	return keyPrefix + shortKeyMin, keyPrefix + maxChars/2 + maxChars - 1
}

func newFactModel(seed uint64, cfg memory.Config) *factModel {
	m := &factModel{Model: memorytest.NewModel(), rng: rand.New(rand.NewPCG(seed, 1)), maxChars: cfg.MaxFactChars}
	for i := range keysPerFact * cfg.MaxFacts {
		n := shortKeyMin + m.rng.IntN(shortKeySpan)
		if m.rng.IntN(8) == 0 {
			n = cfg.MaxFactChars/2 + m.rng.IntN(cfg.MaxFactChars)
		}
		m.keys = append(m.keys, fmt.Sprintf("k%02d_", i)+strings.Repeat("abcdefgh_", n/9+1)[:n])
	}
	return m
}

func (m *factModel) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	ops := make([]memory.Operation, 1+m.rng.IntN(factModelOps))
	for i := range ops {
		key := m.keys[m.rng.IntN(len(m.keys))]
		if m.rng.IntN(10) == 0 {
			ops[i] = memory.Operation{Op: "DELETE", Key: key}
			continue
		}
		var n int
		switch r := m.rng.Float64(); {
		case r < 0.5:
			n = valueMin + m.rng.IntN(40-valueMin)
		case r < 0.85:
			n = 40 + m.rng.IntN(m.maxChars-40)
		default:
			n = m.maxChars + m.rng.IntN(m.maxChars)
		}
		ops[i] = memory.Operation{Op: "SET", Key: key, Value: words(m.rng, "", n)}
	}
	m.Push(memorytest.Answer{Operations: ops})
	return m.Model.Extract(ctx, req)
}

// vocabulary is what simulated turns and values are made of: mostly plain
// words, some outside ASCII, some that JSON escapes.
var vocabulary = strings.Fields(`the a to of and in is it you that for on with as this be are
	deploy lambda queue table function answer question please could would should error timeout
	retry config région café naïve Zürich 東京 日本語 Ελληνικά — “quoted” "plain" C++ & <div> a<b x>y
	func main() { return nil } SELECT * FROM users; 42 3.14 2026-12-01 user@example.com`)

// words returns label followed by words of the vocabulary, n runes in all
// (at least label).
func words(rng *rand.Rand, label string, n int) string {
	var b strings.Builder
	b.WriteString(label)
	c := utf8.RuneCountInString(label)
	for c < n {
		w := vocabulary[rng.IntN(len(vocabulary))]
		if c > 0 {
			w = " " + w
		}
		b.WriteString(w)
		c += utf8.RuneCountInString(w)
	}
	s := b.String()
	for c > max(n, utf8.RuneCountInString(label)) {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
		c--
	}
	return s
}

// band is a range of lengths, lo to hi (hi excluded), drawn while a draw
// of [0, 1) is below upTo and above the bands before it.
type band struct {
	upTo   float64
	lo, hi int
}

// drawLength draws a band of bands with one rng.Float64, then a length in
// it; the last band takes what the others leave.
func drawLength(rng *rand.Rand, bands []band) int {
	r := rng.Float64()
	b := bands[len(bands)-1]
	for _, c := range bands {
		if r < c.upTo {
			b = c
			break
		}
	}
	return between(rng, b.lo, b.hi)
}

// between draws a number from lo to hi, hi excluded.
func between(rng *rand.Rand, lo, hi int) int { return lo + rng.IntN(hi-lo) }

// The lengths of the simulated turns, which BENCHMARKS.md describes
// (TestBenchmarksDescribeTheSimulation): user turns and answers by band,
// and a tool result one call in toolEvery, of up to toolMax characters.
var (
	userBands      = []band{{0.70, 20, 200}, {0.93, 200, 1500}, {0.995, 2000, 30000}, {1, 100000, 400000}}
	assistantBands = []band{{0.60, 200, 1500}, {0.95, 1500, 6000}, {1, 6000, 20000}}
)

const (
	toolEvery = 7
	toolMax   = 8000
)

// promptThreadTurns is the length of TestFigurePromptSize's thread.
const promptThreadTurns = 1000

// callTurns returns the turns of one call of a simulated thread, the first
// numbered first: a user turn, sometimes a tool result, and the assistant's
// answer. Lengths are drawn from rng: questions mostly short, now and then
// a paste of a few thousand characters and rarely one of 100,000 to
// 400,000, most past the queue's size limit; tool results of up to 8,000;
// answers of a few hundred to a few thousand characters, a few much
// longer. Each turn begins "<role> turn <number>:".
func callTurns(rng *rand.Rand, first int) []producer.Turn {
	user := drawLength(rng, userBands)
	assistant := drawLength(rng, assistantBands)
	turns := []producer.Turn{{Role: "user", Text: words(rng, fmt.Sprintf("user turn %d:", first), user)}}
	if rng.IntN(toolEvery) == 0 {
		turns = append(turns, producer.Turn{Role: "tool", Text: words(rng, fmt.Sprintf("tool turn %d:", first+1), between(rng, 200, toolMax))})
	}
	n := first + len(turns)
	return append(turns, producer.Turn{Role: "assistant", Text: words(rng, fmt.Sprintf("assistant turn %d:", n), assistant)})
}

// promptBound is the largest prompt (system plus transcript, in runes)
// that the caps of cfg allow: the template without its {facts}
// placeholders; in each, MaxFacts lines `- "key": "value"` joined by
// newlines, the key of MaxFactChars runes that JSON never escapes (a
// canonical key has only letters, digits and _) and the value of
// MaxFactChars runes each escaped to at most 6 (\u003c for < > &, and
// U+2028, U+2029); and the transcript at TranscriptChars.
func promptBound(cfg memory.Config) int {
	slots := strings.Count(cfg.Prompt, "{facts}")
	template := utf8.RuneCountInString(memory.RenderPrompt(cfg.Prompt, nil, time.Time{})) - slots*utf8.RuneCountInString("(none)")
	line := len(`- "": ""`) + cfg.MaxFactChars + 6*cfg.MaxFactChars
	return template + slots*(cfg.MaxFacts*line+cfg.MaxFacts-1) + cfg.TranscriptChars
}

// promptChars is the size of a prompt: system plus transcript, in runes.
func promptChars(r memory.ModelRequest) int {
	return utf8.RuneCountInString(r.System) + utf8.RuneCountInString(r.Transcript)
}

// extraction is one model call of a simulated thread: the thread's turn
// count when it was sent, and the prompt.
type extraction struct {
	turns      int
	system     int
	transcript int
	facts      int
}

// TestFigurePromptSize is figure (b): the prompt (system plus transcript)
// of every extraction of a simulated 1,000-turn thread, at the default
// caps, for the two ways gateways send history: the turns since the last
// extraction, or the whole thread every time, cut only by the producer's
// size limit. Turns have varied lengths (see callTurns) and the model keeps
// setting facts of varied lengths up to the caps (see factModel). Every
// prompt is asserted within the bound the caps set (promptBound), and that
// bound is asserted reached by the worst case the caps allow, so it is the
// least one. It prints the prompt at turns 10, 100 and 1,000, the largest,
// the bound, and their ratios; BENCHMARKS.md's block prompt-size holds
// them.
func TestFigurePromptSize(t *testing.T) {
	cfg := memory.Config{}.WithDefaults()
	bound := promptBound(cfg)
	block := fmt.Sprintf("Bound from the caps: %s characters.\n\n", docblock.Thousands(bound)) +
		"| gateway sends | prompt at turn 10 / 100 / 1,000 | turn 1,000 / turn 10 | largest (extractions) | largest / bound | transcript at its cap |\n|---|---|---:|---|---:|---|\n"
	for _, mode := range []struct {
		name  string
		whole bool
	}{{"since-extraction", false}, {"whole-thread", true}} {
		t.Run(mode.name, func(t *testing.T) {
			model := newFactModel(7, cfg)
			// A clock a second ahead at each reading: which facts the cap drops
			// depends on their times, and must not depend on the machine's speed.
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			clock := func() time.Time { now = now.Add(time.Second); return now }
			// The subject is the prompt's size, not evidence: the scripted
			// facts quote nothing.
			h, store := newFigureHandler(t, memorytest.NewRepo(), model, memory.Config{EvidenceCheckOff: true}, memory.WithClock(clock))
			g := newGateway(t, h, store, memory.Scope{TenantID: "acme", UserID: "u-1"}, "th-1")
			g.whole, g.dueOnly = mode.whole, true // Figure (a) counts the messages not due.
			rng := rand.New(rand.NewPCG(2026, 12))
			var runs []extraction
			for len(runs) == 0 || runs[len(runs)-1].turns < promptThreadTurns {
				calls := model.Calls()
				g.answer(callTurns(rng, g.count+1), false)
				if model.Calls() == calls {
					continue
				}
				r := model.Requests()[calls]
				runs = append(runs, extraction{turns: g.count, system: utf8.RuneCountInString(r.System),
					transcript: utf8.RuneCountInString(r.Transcript), facts: strings.Count(r.System, "\n- \"")})
			}
			at := func(turn int) extraction { // The first extraction that read the thread's turn.
				i := sort.Search(len(runs), func(i int) bool { return runs[i].turns >= turn })
				return runs[i]
			}
			size := func(e extraction) int { return e.system + e.transcript }
			largest, longest, facts, full := runs[0], 0, 0, 0
			for _, e := range runs {
				if e.transcript >= cfg.TranscriptChars-66 { // Transcript keeps no cut turn of 64 runes or less.
					full++
				}
				if size(e) > size(largest) {
					largest = e
				}
				longest, facts = max(longest, e.transcript), max(facts, e.facts)
				if e.transcript > cfg.TranscriptChars || size(e) > bound {
					t.Errorf("extraction at turn %d: prompt %d chars (system %d + transcript %d), over the bound %d (transcript cap %d)",
						e.turns, size(e), e.system, e.transcript, bound, cfg.TranscriptChars)
				}
			}
			for _, turn := range []int{10, 100, 1000} {
				e := at(turn)
				t.Logf("prompt at turn %4d: %6d chars (system %d + transcript %d), extraction at turn count %d",
					turn, size(e), e.system, e.transcript, e.turns)
			}
			t.Logf("largest over %d extractions: %d chars (system %d + transcript %d) at turn count %d; bound from the caps: %d",
				len(runs), size(largest), largest.system, largest.transcript, largest.turns, bound)
			t.Logf("transcript at its cap of %d in %d of %d extractions", cfg.TranscriptChars, full, len(runs))
			t.Logf("ratio turn 1000 / turn 10: %.3f; largest / bound: %.3f", float64(size(at(1000)))/float64(size(at(10))), float64(size(largest))/float64(bound))
			block += fmt.Sprintf("| %s | %s / %s / %s | %.3f | %s (%d) | %.3f | %d of %d |\n", mode.name,
				docblock.Thousands(size(at(10))), docblock.Thousands(size(at(100))), docblock.Thousands(size(at(1000))),
				float64(size(at(1000)))/float64(size(at(10))), docblock.Thousands(size(largest)), len(runs),
				float64(size(largest))/float64(bound), full, len(runs))
			// The simulation must reach the caps, or the bound was never tested.
			if facts != cfg.MaxFacts {
				t.Errorf("at most %d facts in a prompt, want the cap %d", facts, cfg.MaxFacts)
			}
			if full == 0 {
				t.Errorf("longest transcript %d chars: the simulated thread never reached the cap of %d", longest, cfg.TranscriptChars)
			}
		})
	}
	t.Run("worst-case", func(t *testing.T) {
		// MaxFacts facts, keys and values at MaxFactChars, every value rune
		// escaped to 6; then a turn longer than the transcript budget.
		ops := make([]memory.Operation, cfg.MaxFacts)
		for i := range ops {
			ops[i] = memory.Operation{Op: "SET", Key: fmt.Sprintf("k%03d", i) + strings.Repeat("x", cfg.MaxFactChars), Value: strings.Repeat("<", cfg.MaxFactChars+1)}
		}
		// An answer holds at most MaxOperations of them: the facts come in
		// answers of that many, before the turn whose prompt is measured.
		model := memorytest.NewModel()
		turns := []string{}
		for rest := ops; len(rest) > 0; rest = rest[min(cfg.MaxOperations, len(rest)):] {
			model.Push(memorytest.Answer{Operations: rest[:min(cfg.MaxOperations, len(rest))]})
			turns = append(turns, "hello "+strconv.Itoa(len(turns)))
		}
		// The subject is the prompt's bound, not evidence: the facts quote nothing.
		store, err := memory.New(memorytest.NewRepo(), memory.Config{EvidenceCheckOff: true}, memory.WithModel(model))
		if err != nil {
			t.Fatal(err)
		}
		sc := memory.Scope{TenantID: "acme", UserID: "u-1"}
		for i, turn := range append(turns, strings.Repeat("a", 2*cfg.TranscriptChars)) {
			if _, err := store.Extract(context.Background(), memory.ExtractRequest{Scope: sc, ThreadID: "th-" + strconv.Itoa(i),
				TurnCount: 2, Turns: []memory.Turn{{Role: "user", Text: turn}}}); err != nil {
				t.Fatal(err)
			}
		}
		if got := promptChars(model.Requests()[len(turns)]); got != bound {
			t.Errorf("worst-case prompt %d chars, want the bound %d: the bound is not the least one, or a cap is not held", got, bound)
		}
	})
	docblock.Check(t, filepath.Join(httpapitest.Root(t), "BENCHMARKS.md"), "prompt-size", block)
}

// BenchmarkServiceOverhead is figure (c): the time the function spends on
// one due extraction apart from the model call (a zero-latency scripted
// model): decode, schema validation, isExtractDue, the repository's read
// and conditional write, logs and metrics. "dynamodb" goes through
// dynamorepo and the real SDK client to moto_server; "memory" is the same
// handler over the in-memory repository, and "dynamodb-repo-only" the
// repository's own read and write of the same records without the handler:
// the baselines measured in the same run. Run with -benchtime=300x for 300
// extractions; it reports p50 and p99.
func BenchmarkServiceOverhead(b *testing.B) {
	b.Run("dynamodb-repo-only", benchRepoOnly)
	for _, backend := range []string{"memory", "dynamodb"} {
		b.Run(backend, func(b *testing.B) {
			var repo memory.Repository = memorytest.NewRepo()
			if backend == "dynamodb" {
				repo = dynamorepo.New(dynamoClient(b), newTable(b))
			}
			answer := memorytest.Answer{Operations: []memory.Operation{
				{Op: "SET", Key: "name", Value: "Ana"}, {Op: "SET", Key: "home_city", Value: "Lisbon"},
			}}
			model := memorytest.NewModel()
			// The subject is the service's overhead, not evidence.
			h, _ := newFigureHandler(b, repo, model, memory.Config{EvidenceCheckOff: true})
			invoker := lambda.NewHandler(h.Handle)
			payloads := make([][]byte, b.N)
			prod := producer.New(nil, "http://sqs.local/0/extraction.fifo")
			for i := range payloads {
				// Each extraction is due: a new thread's first answer.
				in, err := prod.Build(producer.Message{TenantID: "acme", UserID: "u-bench", ThreadID: "th-" + strconv.Itoa(i),
					TurnCount: 2, Turns: []producer.Turn{{Role: "user", Text: turnText("user", 1, 300)}, {Role: "assistant", Text: turnText("assistant", 2, 700)}}})
				if err != nil {
					b.Fatal(err)
				}
				payloads[i], _ = json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-" + strconv.Itoa(i),
					Body: aws.ToString(in.MessageBody), Attributes: map[string]string{"MessageGroupId": "acme/u-bench", "ApproximateReceiveCount": "1"}}}})
				model.Push(answer)
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				out, err := invoker.Invoke(context.Background(), payloads[i])
				took = append(took, time.Since(start))
				if err != nil || !strings.Contains(string(out), `"batchItemFailures":[]`) {
					b.Fatalf("invoke: %s %v", out, err)
				}
			}
			b.StopTimer()
			if model.Calls() != b.N {
				b.Fatalf("model calls = %d, want %d", model.Calls(), b.N)
			}
			reportPercentiles(b, took)
		})
	}
}

// benchRepoOnly times what the repository alone does for one extraction
// through the real SDK client to moto_server: a strongly consistent read
// and a conditional write of the record with one more thread watermark.
func benchRepoOnly(b *testing.B) {
	repo := dynamorepo.New(dynamoClient(b), newTable(b))
	ctx := context.Background()
	sc := memory.Scope{TenantID: "acme", UserID: "u-bench"}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		rec, err := repo.Get(ctx, sc)
		if err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		rec.Facts = []memory.Fact{{Key: "home_city", Value: "Lisbon", UpdatedAt: now, SourceThreadID: "th-1"}, {Key: "name", Value: "Ana", UpdatedAt: now, SourceThreadID: "th-1"}}
		threads := map[string]memory.ThreadMark{"th-" + strconv.Itoa(i): {TurnCount: 2, At: now}}
		for k, v := range rec.Threads {
			if len(threads) < memory.DefaultMaxThreads {
				threads[k] = v
			}
		}
		rec.Threads = threads
		if _, _, err := repo.Save(ctx, sc, rec); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, took)
}

// reportPercentiles reports the p50 and p99 of took, in milliseconds.
func reportPercentiles(b *testing.B, took []time.Duration) {
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	p := func(q float64) float64 {
		return float64(took[min(len(took)-1, int(q*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(0.50), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}

// TestBenchmarksDescribeTheSimulation writes the block simulation of
// BENCHMARKS.md, the account of figure (b), from the simulation and the
// bound: each band of turn lengths with its share, the tool results, the
// model's operations, and the default caps the bound is made of.
func TestBenchmarksDescribeTheSimulation(t *testing.T) {
	var turns []string
	for _, bands := range [][]band{userBands, assistantBands} {
		var parts []string
		below := 0.0
		for _, b := range bands {
			parts = append(parts, fmt.Sprintf("%s of %s–%s", share(b.upTo-below), docblock.Thousands(b.lo), docblock.Thousands(b.hi)))
			below = b.upTo
		}
		turns = append(turns, strings.Join(parts, ", "))
	}
	keyLo, keyHi := factKeyChars(memory.DefaultMaxFactChars)
	block := strings.Join([]string{
		fmt.Sprintf("How (b) is simulated (seeded, so every run gives the same figures): each call of the thread is a user turn (%s characters), 1 time in %d a tool result of up to %s characters, and an answer (%s characters), with text outside ASCII and characters JSON escapes.",
			turns[0], toolEvery, docblock.Thousands(toolMax), turns[1]),
		fmt.Sprintf("The model sets or deletes 1–%d facts per call, drawn from %d keys of %d–%d characters, with values of %d–%d characters; the store cuts both to %d.",
			factModelOps, keysPerFact*memory.DefaultMaxFacts, keyLo, keyHi, valueMin, 2*memory.DefaultMaxFactChars-1, memory.DefaultMaxFactChars),
		fmt.Sprintf("The bound is the template (without `{facts}`), %d lines `- \"key\": \"value\"` with a %d-character key and a %d-character value whose every character is escaped to 6, %d newlines between them, and the %s-character transcript; the test asserts that the thread reaches %d facts.",
			memory.DefaultMaxFacts, memory.DefaultMaxFactChars, memory.DefaultMaxFactChars, memory.DefaultMaxFacts-1, docblock.Thousands(memory.DefaultTranscriptChars), memory.DefaultMaxFacts),
	}, "\n")
	docblock.Check(t, filepath.Join(httpapitest.Root(t), "BENCHMARKS.md"), "simulation", block)
}

// share writes p as the docs do, "7 in 10", over the smallest of a few
// round denominators that makes it whole.
func share(p float64) string {
	for _, d := range []int{10, 20, 100, 200, 1000} {
		if n := p * float64(d); math.Abs(n-math.Round(n)) < 1e-9 {
			return fmt.Sprintf("%d in %d", int(math.Round(n)), d)
		}
	}
	return fmt.Sprint(p)
}
