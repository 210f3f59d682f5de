// Command cost measures what one active user of usermemory costs a month
// on AWS, with the real code: it runs the memory store over the real
// DynamoDB repository (against moto_server, through the real SDK), the
// real Bedrock model adapter (over a stand-in of the Converse API that
// records each request) and the real producer, counts every DynamoDB
// request, measures the stored item, the prompt and every message, and
// prices them for a usage profile. It also turns the figures into the load
// that 10 thousand to 10 million daily users make and the daily users at
// which each limit binds, from template.yaml's parameters and a table of
// quotas and prices with their sources. docs/cost.md and docs/scale.md
// hold its output between markers; -write puts it there, and a test fails
// when they differ.
//
// Usage (moto_server is started for it by the script):
//
//	./scripts/with-moto.sh go run ./scripts/cost [-answers 20] [-threads 4] [-facts 30]
//	./scripts/with-moto.sh go run ./scripts/cost -write .   # the docs, at the default profile
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
	"github.com/usermemory/usermemory/producer"
)

// profile is the usage of one active user.
type profile struct {
	answersPerDay  int     // gateway messages: one per answer
	threadsPerDay  int     // threads the answers spread over
	facts          int     // facts the user has
	pageVisitsWeek float64 // memory page visits a week: one GET and one PUT each
	httpReads      bool    // the gateway reads the facts over HTTP before every call
	budget         bool    // a tenant daily budget is set: its counter is written
	userChars      int     // characters of a user turn
	assistantChars int     // characters of an assistant turn
	days           float64 // days a month
	// idleReadSeconds is the stack's IdleReadSeconds: the idle time after
	// which a thread's unread turns are read once; 0 switches it off.
	idleReadSeconds int
}

func main() {
	p := defaultProfile()
	flag.IntVar(&p.answersPerDay, "answers", p.answersPerDay, "answers a day (gateway messages)")
	flag.IntVar(&p.threadsPerDay, "threads", p.threadsPerDay, "threads a day the answers spread over")
	flag.IntVar(&p.facts, "facts", p.facts, "facts of the user")
	flag.Float64Var(&p.pageVisitsWeek, "page-visits", p.pageVisitsWeek, "memory page visits a week")
	flag.BoolVar(&p.httpReads, "http-reads", p.httpReads, "the gateway reads the facts through the HTTP API before every call (false: with the Go packages)")
	flag.BoolVar(&p.budget, "budget", p.budget, "a tenant daily budget is set (TenantDailyModelCalls > 0): its counter's writes are counted")
	flag.IntVar(&p.userChars, "user-chars", p.userChars, "characters of a user turn")
	flag.IntVar(&p.assistantChars, "assistant-chars", p.assistantChars, "characters of an assistant turn")
	flag.IntVar(&p.idleReadSeconds, "idle-read-seconds", p.idleReadSeconds, "IdleReadSeconds: the idle time after which a thread's unread turns are read once (0: off)")
	write := flag.String("write", "", "the repository's root: write docs/cost.md and docs/scale.md between their markers instead of printing")
	root := flag.String("root", ".", "the repository's root, for template.yaml")
	flag.Parse()
	if *write != "" {
		*root = *write
	}
	if err := run(context.Background(), p, *root, *write != ""); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
}

// defaultProfile is the profile docs/cost.md and docs/scale.md are
// written for.
func defaultProfile() profile {
	return profile{answersPerDay: 20, threadsPerDay: 4, facts: 30, pageVisitsWeek: 1, httpReads: true, budget: true,
		userChars: 300, assistantChars: 1200, days: 30, idleReadSeconds: defaultIdleReadSeconds}
}

func run(ctx context.Context, p profile, root string, write bool) error {
	endpoint := os.Getenv("USERMEMORY_AWS_ENDPOINT")
	if endpoint == "" {
		return fmt.Errorf("USERMEMORY_AWS_ENDPOINT is not set: run ./scripts/with-moto.sh go run ./scripts/cost")
	}
	docs, _, err := render(ctx, endpoint, p, root)
	if err != nil {
		return err
	}
	for _, name := range slicesSorted(docs) {
		if !write {
			fmt.Printf("# %s\n\n%s\n", name, docs[name])
			continue
		}
		path := filepath.Join(root, "docs", name)
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		doc, err := replaceGenerated(string(old), docs[name])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// requestCounter counts DynamoDB requests by operation.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) middleware(st *middleware.Stack) error {
	return st.Initialize.Add(middleware.InitializeMiddlewareFunc("count", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		c.mu.Lock()
		c.n[middleware.GetOperationName(ctx)]++
		c.mu.Unlock()
		return next.HandleInitialize(ctx, in)
	}), middleware.After)
}

func (c *requestCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.n
	c.n = map[string]int{}
	return out
}

// converse stands in for Bedrock's Converse API: it records the size of
// each request and answers with a tool call that sets one fact.
type converse struct {
	mu                                  sync.Mutex
	calls                               int
	maxTokens                           int
	systemChars, transcriptChars, tools int
	answerChars                         int
	// importIn and importOut sum the tokens of the import calls, counted
	// as the extraction's are: an import call is answered with the eval
	// stand-in's reading of the list (fakebedrock.ImportOperations).
	importIn, importOut float64
}

// standSnapshot is what the stand-in counted so far.
type standSnapshot struct {
	calls               int
	importIn, importOut float64
}

func (c *converse) snapshot() standSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return standSnapshot{calls: c.calls, importIn: c.importIn, importOut: c.importOut}
}

func (c *converse) Converse(_ context.Context, in *bedrockruntime.ConverseInput, _ ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if in.InferenceConfig != nil {
		c.maxTokens = int(aws.ToInt32(in.InferenceConfig.MaxTokens))
	}
	c.systemChars, c.transcriptChars = 0, 0
	var system strings.Builder
	for _, b := range in.System {
		if t, ok := b.(*brtypes.SystemContentBlockMemberText); ok {
			c.systemChars += len([]rune(t.Value))
			system.WriteString(t.Value)
		}
	}
	var transcript strings.Builder
	for _, m := range in.Messages {
		for _, b := range m.Content {
			if t, ok := b.(*brtypes.ContentBlockMemberText); ok {
				c.transcriptChars += len([]rune(t.Value))
				transcript.WriteString(t.Value)
			}
		}
	}
	c.tools = 0
	if in.ToolConfig != nil {
		for _, t := range in.ToolConfig.Tools {
			if spec, ok := t.(*brtypes.ToolMemberToolSpec); ok {
				schema, _ := spec.Value.InputSchema.(*brtypes.ToolInputSchemaMemberJson)
				var n int
				if schema != nil {
					b, _ := schema.Value.MarshalSmithyDocument()
					n = len(b)
				}
				c.tools += len(aws.ToString(spec.Value.Name)) + len(aws.ToString(spec.Value.Description)) + n
			}
		}
	}
	set := func(value string) map[string]any {
		return map[string]any{"operations": []any{map[string]any{"op": "SET", "key": "home_city", "value": value,
			"evidence": quote(transcript.String())}}}
	}
	answer := set(fmt.Sprintf("Lisbon %d", c.calls))
	sized, _ := json.Marshal(set("Lisbon 00")) // the same length at every call
	c.answerChars = len(sized)
	if fakebedrock.IsImportPrompt(system.String()) {
		answer = map[string]any{"operations": fakebedrock.ImportOperations(transcript.String())}
		b, _ := json.Marshal(answer)
		tokens := func(chars int) float64 { return math.Ceil(float64(chars) / charsPerToken) }
		c.importIn += tokens(c.systemChars) + tokens(c.transcriptChars) + tokens(c.tools)
		c.importOut += tokens(len(b)) + toolCallOverheadTokens
	}
	return &bedrockruntime.ConverseOutput{
		StopReason: brtypes.StopReasonToolUse,
		Output: &brtypes.ConverseOutputMemberMessage{Value: brtypes.Message{
			Role: brtypes.ConversationRoleAssistant,
			Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberToolUse{Value: brtypes.ToolUseBlock{
				ToolUseId: aws.String("t1"), Name: in.ToolConfig.Tools[0].(*brtypes.ToolMemberToolSpec).Value.Name,
				Input: document.NewLazyDocument(answer),
			}}},
		}},
		Usage: &brtypes.TokenUsage{InputTokens: aws.Int32(1), OutputTokens: aws.Int32(1), TotalTokens: aws.Int32(2)},
	}, nil
}

// quoteChars is the length of the evidence the stand-in quotes: a short
// clause of the user's, as the MEMORY_USER prompt asks for.
const quoteChars = 40

// quote returns the evidence of the stand-in's SET: the first quoteChars
// characters of the last user turn of the transcript, which the core's
// evidence check finds there.
func quote(transcript string) string {
	const who = "User: "
	i := strings.LastIndex(transcript, who)
	if i < 0 {
		return ""
	}
	turn, _, _ := strings.Cut(transcript[i+len(who):], "\n\n")
	if r := []rune(turn); len(r) > quoteChars {
		turn = string(r[:quoteChars])
	}
	return strings.TrimSpace(turn)
}

// sampleFacts returns n facts of typical length.
func sampleFacts(n int) [][2]string {
	base := [][2]string{
		{"name", "Ana"}, {"home_city", "Lisbon"}, {"preferred_language", "Portuguese"}, {"role", "nurse"},
		{"employer", "Hospital de Santa Maria"}, {"timezone", "Europe/Lisbon"}, {"diet", "vegetarian"},
		{"favourite_sport", "surfing"}, {"partner_name", "Rui"}, {"children", "two daughters"},
		{"pet", "a cat called Miau"}, {"answer_style", "short and direct"}, {"units", "metric"},
		{"hobby", "photography"}, {"native_language", "Portuguese"}, {"second_language", "English (fluent)"},
		{"shift_pattern", "nights, three a week"}, {"commute", "by train"}, {"allergy", "penicillin"},
		{"birthday_month", "March"}, {"favourite_food", "bacalhau"}, {"music", "fado and jazz"},
		{"current_project", "studying for a nursing master's"}, {"reading", "crime novels"},
		{"car", "none"}, {"coffee", "espresso, no sugar"}, {"travel_next", "Azores in June"},
		{"gym", "twice a week"}, {"phone", "Android"}, {"date_format", "DD/MM/YYYY"},
	}
	out := make([][2]string, n)
	for i := range n {
		out[i] = base[i%len(base)]
		if i >= len(base) {
			out[i][0] = fmt.Sprintf("%s_%d", out[i][0], i/len(base))
		}
	}
	return out
}

// text returns n characters of chat text.
func text(n int) string {
	s := strings.Repeat("Could you help me plan the week around my night shifts and the kids' school run? ", n/80+1)
	return s[:n]
}

// clockStart is where the store's clock starts. It moves one second at
// every call from there, so that the measured item is the same at every
// run: DynamoDB trims a number's trailing zeros (see dynamorepo.ItemSize),
// so a time stored in milliseconds would otherwise be a byte smaller at
// one run in ten. The start's milliseconds (…001) keep every stored time
// at its full 13 digits, as most times are.
var clockStart = time.Date(2026, 12, 1, 9, 0, 0, int(time.Millisecond), time.UTC)

// rig is the store under measure: its DynamoDB table, the counters of
// its requests (the budget gate's apart) and the Converse stand-in.
type rig struct {
	db            *dynamodb.Client
	table         string
	counter       *requestCounter
	budgetCounter *requestCounter
	stand         *converse
	cfg           memory.Config
	store         *memory.Store
	sc            memory.Scope
}

// newRig creates a table at endpoint and a store over it, with the
// extractor's budget gate when p sets a budget.
func newRig(ctx context.Context, endpoint string, p profile) (*rig, error) {
	client := func(c *requestCounter) *dynamodb.Client {
		return dynamodb.New(dynamodb.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String(endpoint),
			Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
			APIOptions:   []func(*middleware.Stack) error{c.middleware},
		})
	}
	r := &rig{counter: &requestCounter{n: map[string]int{}}, budgetCounter: &requestCounter{n: map[string]int{}},
		table: fmt.Sprintf("cost-%d", time.Now().UnixNano()), stand: &converse{},
		cfg: memory.Config{CheapModelID: "us.amazon.nova-micro-v1:0"}.WithDefaults(),
		sc:  memory.Scope{TenantID: "acme", UserID: "u-0123456789abcdef"}}
	r.db = client(r.counter)
	if err := dynamorepo.CreateTable(ctx, r.db, r.table); err != nil {
		return nil, err
	}
	opts := []memory.Option{memory.WithModel(bedrock.New(r.stand)), memory.WithClock(memorytest.StepClock(clockStart))}
	if p.budget {
		// The extractor's gate (functions/extractor), on its own client
		// so that its requests are counted apart.
		opts = append(opts, memory.WithUsageGate(dynamorepo.NewBudget(client(r.budgetCounter), r.table, 1_000_000)))
	}
	var err error
	r.store, err = memory.New(dynamorepo.New(r.db, r.table), r.cfg, append(setup.StoreOptions(), opts...)...)
	return r, err
}

// item returns the user's stored record, read uncounted.
func (r *rig) item(ctx context.Context) (map[string]types.AttributeValue, error) {
	r.counter.take()
	defer r.counter.take()
	out, err := r.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.table),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: r.sc.TenantID + "#" + r.sc.UserID}}})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// itemSize returns the size of the user's stored record, uncounted.
func (r *rig) itemSize(ctx context.Context) (int, error) {
	item, err := r.item(ctx)
	if err != nil {
		return 0, err
	}
	return dynamorepo.ItemSize(item), nil
}

// historySize returns the bytes the facts' histories (each fact's h) take
// in the user's stored record, uncounted: as DynamoDB counts a map's
// element, 1 byte, the name and the list.
func (r *rig) historySize(ctx context.Context) (int, error) {
	item, err := r.item(ctx)
	if err != nil {
		return 0, err
	}
	facts, _ := item["facts"].(*types.AttributeValueMemberM)
	if facts == nil {
		return 0, nil
	}
	n := 0
	for _, f := range facts.Value {
		if m, ok := f.(*types.AttributeValueMemberM); ok && m.Value["h"] != nil {
			n += 1 + dynamorepo.ItemSize(map[string]types.AttributeValue{"h": m.Value["h"]})
		}
	}
	return n, nil
}

// fill sets the user's facts by hand and measures the record, then runs a
// month of threads that fill the watermarks up to MaxThreads and measures
// it again.
func (r *rig) fill(ctx context.Context, p profile, in *reportInput) error {
	for _, kv := range sampleFacts(p.facts) {
		if _, err := r.store.Put(ctx, r.sc, memory.FactInput{Key: kv[0], Value: kv[1]}); err != nil {
			return err
		}
	}
	var err error
	if in.factsOnly, err = r.itemSize(ctx); err != nil {
		return err
	}
	if in.steady, err = r.fillThreads(ctx, false); err != nil {
		return err
	}
	if in.history, err = r.historySize(ctx); err != nil {
		return err
	}
	facts, err := r.store.GetFacts(ctx, r.sc)
	in.facts, in.maxThreads = len(facts), r.cfg.MaxThreads
	r.counter.take()
	return err
}

// fillThreads extracts one message in each of MaxThreads threads, counted
// or not, and returns the size of the record then.
func (r *rig) fillThreads(ctx context.Context, uncounted bool) (int, error) {
	for i := range r.cfg.MaxThreads {
		req := memory.ExtractRequest{Scope: r.sc, ThreadID: threadID(i), TurnCount: 2,
			Turns: []memory.Turn{{Role: memory.RoleUser, Text: "I live in Lisbon."}, {Role: memory.RoleAssistant, Text: "Noted."}}}
		if uncounted {
			req.TurnCount, req.Uncounted = 0, true
		}
		if _, err := r.store.Extract(ctx, req); err != nil {
			return 0, err
		}
	}
	return r.itemSize(ctx)
}

// day runs one day of answers, as a gateway sends them (producer.Build,
// the turns since the last extraction), through the store as the
// extractor runs it, and counts its requests and model calls.
func (r *rig) day(ctx context.Context, p profile, pr *producer.Producer, in *reportInput) error {
	callsBefore := r.stand.calls
	r.budgetCounter.take()
	d, err := oneDay(ctx, r.store, pr, r.sc, p)
	if err != nil {
		return err
	}
	in.msgBytes, in.idle.notDueBytes, in.idle.tails = d.msgBytes, d.notDueBytes, d.tails
	in.extractionsPerDay = r.stand.calls - callsBefore
	in.dayDynamo, in.budgetDynamo = r.counter.take(), r.budgetCounter.take()
	return nil
}

// pageVisit counts the requests of one GET of the facts (the gateway's
// read, the page's list) and one PUT (the page's edit).
func (r *rig) pageVisit(ctx context.Context, in *reportInput) error {
	if _, err := r.store.GetFacts(ctx, r.sc); err != nil {
		return err
	}
	in.getDynamo = r.counter.take()
	if _, err := r.store.Put(ctx, r.sc, memory.FactInput{Key: "home_city", Value: "Porto"}); err != nil {
		return err
	}
	in.putDynamo = r.counter.take()
	return nil
}

// prompt measures the prompt and the answer of the stand-in's last model
// call.
func (r *rig) prompt(in *reportInput) {
	tokens := func(chars int) float64 { return math.Ceil(float64(chars) / charsPerToken) }
	s := r.stand
	in.maxTokens = s.maxTokens
	in.systemChars, in.transcriptChars, in.toolChars = s.systemChars, s.transcriptChars, s.tools
	in.inTokens = tokens(s.systemChars) + tokens(s.transcriptChars) + tokens(s.tools)
	in.outTokens = tokens(s.answerChars) + toolCallOverheadTokens
}

// measure runs the store for profile p against the DynamoDB at endpoint
// and hands the configuration and what it measured to emit.
func measure(ctx context.Context, endpoint string, p profile, emit func(memory.Config, reportInput)) error {
	r, err := newRig(ctx, endpoint, p)
	if err != nil {
		return err
	}
	var in reportInput
	if err := r.fill(ctx, p, &in); err != nil {
		return err
	}
	// A fixed clock, as the store's: the message's sentAt has the same
	// length at every run.
	sent := producer.WithClock(func() time.Time { return clockStart })
	pr := producer.New(nopSQS{}, "https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo", sent)
	if err := r.day(ctx, p, pr, &in); err != nil {
		return err
	}
	if err := r.pageVisit(ctx, &in); err != nil {
		return err
	}
	r.prompt(&in)
	// After the day's figures and its prompt, so that none of them moves:
	// the idle reads of the threads the day left with turns unread.
	if err := r.idleReads(ctx, &in); err != nil {
		return err
	}
	if in.longBefore, in.longAfter, err = trimmed(pr, sent); err != nil {
		return err
	}
	// Last, so that no figure above moves: the same threads as uncounted
	// messages (a gateway that sends no turn counts), whose watermarks are
	// digests.
	if in.steadyDigests, err = r.fillThreads(ctx, true); err != nil {
		return err
	}
	if in.historyDigests, err = r.historySize(ctx); err != nil {
		return err
	}
	// Users of their own, so that no figure above moves: an import of
	// every gold list.
	if err := r.imports(ctx, p, &in.imports); err != nil {
		return err
	}
	emit(r.cfg, in)
	return nil
}

// dayRun is what one day of answers sent: the size of every message
// body, of those not due, and the extraction requests of the unread tails
// the threads were left with (what the idle read reads).
type dayRun struct {
	msgBytes, notDueBytes []int
	tails                 []memory.ExtractRequest
}

// oneDay sends one day of answers of profile p as a gateway sends them
// (producer.Build: the turns since the last extraction, and the turns
// extracted already as context turns), and runs each due message through
// store as the extractor does. A thread whose last message was not due is
// left with its unread tail, returned as the request that reads it.
func oneDay(ctx context.Context, store *memory.Store, pr *producer.Producer, sc memory.Scope, p profile) (dayRun, error) {
	perThread := p.answersPerDay / p.threadsPerDay
	var d dayRun
	for th := range p.threadsPerDay {
		id := threadID(1000 + th)
		// read are the turns extracted already, sent again as context
		// turns before the new ones (the producer keeps the newest within
		// memory.DefaultContextChars), as the gateway sends them.
		var read, pending []producer.Turn
		for k := 1; k <= perThread; k++ {
			pending = append(pending, producer.Turn{Role: "user", Text: text(p.userChars)}, producer.Turn{Role: "assistant", Text: text(p.assistantChars)})
			m := producer.Message{TenantID: sc.TenantID, UserID: sc.UserID, ThreadID: id, PreviousTurnCount: 2*k - 2, TurnCount: 2 * k,
				Turns: pending, ContextTurns: read}
			in, err := pr.Build(m)
			if err != nil {
				return dayRun{}, err
			}
			d.msgBytes = append(d.msgBytes, len(aws.ToString(in.MessageBody)))
			// The extractor's handler checks isExtractDue first: a message
			// that is not due calls no model (the idle read's note and copy
			// are priced apart, idleread.go).
			if !store.IsExtractDue(m.PreviousTurnCount, m.TurnCount) {
				d.notDueBytes = append(d.notDueBytes, len(aws.ToString(in.MessageBody)))
				continue
			}
			res, err := store.Extract(ctx, extractRequest(sc, m))
			if err != nil {
				return dayRun{}, err
			}
			if res.ModelCalls > 0 {
				// Extracted: the next message starts after these turns,
				// which become its context.
				read, pending = append(read, pending...), nil
			}
		}
		if len(pending) > 0 {
			// The thread's last message, as its delayed copy brings it
			// back to the idle read.
			d.tails = append(d.tails, extractRequest(sc, producer.Message{TenantID: sc.TenantID, UserID: sc.UserID, ThreadID: id,
				PreviousTurnCount: 2*perThread - 2, TurnCount: 2 * perThread, Turns: pending, ContextTurns: read}))
		}
	}
	return d, nil
}

// extractRequest is the request the extractor makes of message m.
func extractRequest(sc memory.Scope, m producer.Message) memory.ExtractRequest {
	req := memory.ExtractRequest{Scope: sc, ThreadID: m.ThreadID, PreviousTurnCount: m.PreviousTurnCount, TurnCount: m.TurnCount}
	for _, t := range m.Turns {
		req.Turns = append(req.Turns, memory.Turn{Role: t.Role, Text: t.Text})
	}
	for _, t := range m.ContextTurns {
		req.ContextTurns = append(req.ContextTurns, memory.Turn{Role: t.Role, Text: t.Text})
	}
	return req
}

// The long message of trimmed: turns of pasted text, sent whole.
const (
	longTurns     = 6
	longTurnChars = 30000
)

// trimmed measures the waste the producer trims: the body of a message
// whose turns are long (a pasted document) before (whole turns, through a
// producer without a transcript budget) and after (what the extractor
// reads, through pr).
func trimmed(pr *producer.Producer, sent producer.Option) (before, after int, err error) {
	long := producer.Message{TenantID: "acme", UserID: "u-0123456789abcdef", ThreadID: "th-long", PreviousTurnCount: longTurns - 2, TurnCount: longTurns}
	for i := range longTurns {
		long.Turns = append(long.Turns, producer.Turn{Role: []string{"user", "assistant"}[i%2], Text: text(longTurnChars)})
	}
	whole, err := producer.New(nopSQS{}, "https://q/1/q.fifo", producer.WithTranscriptChars(0), sent).Build(long)
	if err != nil {
		return 0, 0, err
	}
	cut, err := pr.Build(long)
	if err != nil {
		return 0, 0, err
	}
	return len(aws.ToString(whole.MessageBody)), len(aws.ToString(cut.MessageBody)), nil
}

// threadID returns the i-th thread ID, shaped as gateways name threads: a
// UUID, 36 characters.
func threadID(i int) string {
	return fmt.Sprintf("%08x-5f3a-4c1e-9b2d-%012x", 0x6e1d0000+i, 0x1f2e3d4c5b6a+i)
}

// nopSQS is a producer.API for Build only.
type nopSQS struct{}

func (nopSQS) SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	return nil, fmt.Errorf("cost: not sent")
}

type reportInput struct {
	factsOnly, steady, facts, maxThreads int
	steadyDigests                        int // steady, with the watermarks of uncounted messages
	// history and historyDigests are the bytes of steady and steadyDigests
	// that the facts' histories take: every extraction of the profile
	// changes home_city, which keeps its previous values.
	history, historyDigests         int
	dayDynamo, getDynamo, putDynamo map[string]int
	budgetDynamo                    map[string]int // the budget counter's requests in a day
	maxTokens                       int            // the maxTokens the adapter asked for
	extractionsPerDay               int
	msgBytes                        []int
	systemChars, transcriptChars    int
	toolChars                       int
	inTokens, outTokens             float64
	longBefore, longAfter           int
	idle                            idleInput   // the idle read's figures (idleread.go)
	imports                         importInput // an import's figures (imports.go)
}

func sortedOps(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	return b.String()
}
