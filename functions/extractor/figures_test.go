package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
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
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
)

// gateway simulates an AI gateway: after every answer of a thread it sends
// one message through the producer, with the turns since the last message
// that was due (it runs the same isExtractDue rule), and the extractor's
// handler receives it as Lambda would.
type gateway struct {
	t       testing.TB
	invoker lambda.Handler
	store   *memory.Store
	prod    *producer.Producer
	scope   memory.Scope
	thread  string
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
	in, err := g.prod.Build(producer.Message{TenantID: g.scope.TenantID, UserID: g.scope.UserID, ThreadID: g.thread,
		PreviousTurnCount: prev, TurnCount: g.count, Turns: g.pending})
	if err != nil {
		g.t.Fatal(err)
	}
	if g.store.IsExtractDue(prev, g.count) {
		g.pending = nil
	}
	for range 1 + btoi(redeliver) {
		g.deliver(in.MessageBody, aws.ToString(in.MessageGroupId))
	}
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

func newFigureHandler(tb testing.TB, repo memory.Repository, model memory.Model, cfg memory.Config) (*Handler, *memory.Store) {
	tb.Helper()
	store, err := memory.New(repo, cfg, memory.WithModel(model))
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
// delivered twice. The bound ceil(T/N)+1 is asserted; the table is
// printed with -v.
func TestFigureModelCallsPerThread(t *testing.T) {
	t.Logf("%6s %4s %9s %11s %12s %14s", "T", "N", "messages", "deliveries", "model calls", "ceil(T/N)+1")
	for _, T := range []int{10, 100, 1000} {
		for _, N := range []int{1, 3, 6, 10, 25} {
			model := memorytest.NewModel()
			h, store := newFigureHandler(t, memorytest.NewRepo(), model, memory.Config{ExtractEveryTurns: N})
			g := newGateway(t, h, store, memory.Scope{TenantID: "acme", UserID: "u-1"}, "th-1")
			rng := rand.New(rand.NewPCG(uint64(T), uint64(N)))
			messages := 0
			for g.count < T {
				k := min(1+rng.IntN(3), T-g.count)
				turns := make([]producer.Turn, k)
				for i := range turns {
					role := []string{"user", "assistant", "tool"}[(g.count+i)%3]
					turns[i] = producer.Turn{Role: role, Text: turnText(role, g.count+i+1, 80)}
				}
				messages++
				g.answer(turns, messages%5 == 0)
			}
			bound := (T+N-1)/N + 1
			calls := model.Calls()
			t.Logf("%6d %4d %9d %11d %12d %14d", T, N, messages, g.sent, calls, bound)
			if calls > bound {
				t.Errorf("T=%d N=%d: %d model calls, over the bound %d", T, N, calls, bound)
			}
			if calls == 0 {
				t.Errorf("T=%d N=%d: no model call at all", T, N)
			}
		}
	}
}

// saturatingModel answers every call with SETs of maxFacts keys whose
// values keep the same length, so that the stored facts are at the cap
// from the first extraction on and the prompt's fact part stays the same
// size: what changes with the thread is only its length.
type saturatingModel struct {
	*memorytest.Model
	keys int
	n    int
}

func (m *saturatingModel) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	m.n++
	ops := make([]memory.Operation, m.keys)
	for i := range ops {
		ops[i] = memory.Operation{Op: "SET", Key: fmt.Sprintf("fact_%02d", i), Value: fmt.Sprintf("value %02d of call %06d, padded to forty", i, m.n)}
	}
	m.Push(memorytest.Answer{Operations: ops})
	return m.Model.Extract(ctx, req)
}

// promptChars is the size of a prompt: system plus transcript, in runes.
func promptChars(r memory.ModelRequest) int {
	return utf8.RuneCountInString(r.System) + utf8.RuneCountInString(r.Transcript)
}

// TestFigurePromptSize is figure (b): the prompt of the extraction that
// reads turn 10 and of the one that reads turn 1,000 of a thread of calls
// of one user and one assistant turn, at the default caps, with the facts
// at the cap: their ratio is asserted ≤ 1.1. It also prints the smallest
// and largest prompt over the whole thread and the bound the caps set.
func TestFigurePromptSize(t *testing.T) {
	cfg := memory.Config{}.WithDefaults()
	model := &saturatingModel{Model: memorytest.NewModel(), keys: cfg.MaxFacts}
	h, store := newFigureHandler(t, memorytest.NewRepo(), model, memory.Config{})
	g := newGateway(t, h, store, memory.Scope{TenantID: "acme", UserID: "u-1"}, "th-1")
	for g.count < 1010 {
		g.answer([]producer.Turn{
			{Role: "user", Text: turnText("user", g.count+1, 300)},
			{Role: "assistant", Text: turnText("assistant", g.count+2, 700)},
		}, false)
	}
	var at10, at1000 memory.ModelRequest
	sizes := []int{}
	for _, r := range model.Requests() {
		if strings.Contains(r.Transcript, "turn 10:") {
			at10 = r
		}
		if strings.Contains(r.Transcript, "turn 1000:") {
			at1000 = r
		}
		if !strings.Contains(r.System, "(none)") { // The first extraction knows no fact yet.
			sizes = append(sizes, promptChars(r))
		}
	}
	if at10.System == "" || at1000.System == "" {
		t.Fatal("no extraction read turn 10 or turn 1000")
	}
	a, b := promptChars(at10), promptChars(at1000)
	ratio := float64(b) / float64(a)
	sort.Ints(sizes)
	// Each fact line is `- "key": "value"`, every rune escaped to at most 6.
	bound := len(memory.RenderTemplate(cfg.Template, nil)) + cfg.MaxFacts*(9+12*cfg.MaxFactChars) + cfg.TranscriptChars
	t.Logf("prompt at turn 10: %d chars (system %d + transcript %d)", a, utf8.RuneCountInString(at10.System), utf8.RuneCountInString(at10.Transcript))
	t.Logf("prompt at turn 1000: %d chars (system %d + transcript %d)", b, utf8.RuneCountInString(at1000.System), utf8.RuneCountInString(at1000.Transcript))
	t.Logf("ratio turn 1000 / turn 10: %.3f", ratio)
	t.Logf("over %d extractions with facts: min %d, max %d chars; bound from the caps: %d chars", len(sizes), sizes[0], sizes[len(sizes)-1], bound)
	if ratio > 1.1 || ratio < 1/1.1 {
		t.Errorf("prompt ratio turn 1000 / turn 10 = %.3f, outside [1/1.1, 1.1]", ratio)
	}
	if sizes[len(sizes)-1] > bound {
		t.Errorf("largest prompt %d chars, over the bound %d", sizes[len(sizes)-1], bound)
	}
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
			h, _ := newFigureHandler(b, repo, model, memory.Config{})
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
