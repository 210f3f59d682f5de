package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/smithy-go"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// fixture is a handler over an in-memory repository and a scripted model,
// with its logs and metrics captured.
type fixture struct {
	h       *Handler
	repo    *memorytest.Repo
	model   *memorytest.Model
	logs    *syncBuffer
	metrics *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lines returns the JSON objects written, one a line.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line is not JSON: %v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

type fixtureOpts struct {
	cfg      memory.Config
	gate     memory.UsageGate
	storeOpt []memory.Option
	opts     []Option
}

func newFixture(t *testing.T, fo fixtureOpts, answers ...memorytest.Answer) *fixture {
	t.Helper()
	f := &fixture{repo: memorytest.NewRepo(), model: memorytest.NewModel(answers...), logs: &syncBuffer{}, metrics: &syncBuffer{}}
	storeOpts := append([]memory.Option{memory.WithModel(f.model)}, fo.storeOpt...)
	if fo.gate != nil {
		storeOpts = append(storeOpts, memory.WithUsageGate(fo.gate))
	}
	store, err := memory.New(f.repo, fo.cfg, storeOpts...)
	if err != nil {
		t.Fatal(err)
	}
	opts := append([]Option{
		WithLogger(slog.New(slog.NewJSONHandler(f.logs, nil))),
		WithMetrics(f.metrics),
	}, fo.opts...)
	f.h, err = NewHandler(store, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// invoke runs the handler the way the Lambda runtime does, on the JSON of
// an event, and returns the decoded response.
func (f *fixture) invoke(t *testing.T, ctx context.Context, payload []byte) events.SQSEventResponse {
	t.Helper()
	if _, ok := lambdacontext.FromContext(ctx); !ok {
		ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "lambda-req-1"})
	}
	out, err := lambda.NewHandler(f.h.Handle).Invoke(ctx, payload)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("response is not an SQSEventResponse: %v: %s", err, out)
	}
	return resp
}

// event reads a sample event of the events folder.
func event(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// editEvent decodes payload, lets change edit it and encodes it again.
func editEvent(t *testing.T, payload []byte, change func(*events.SQSEvent)) []byte {
	t.Helper()
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	change(&ev)
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func failedIDs(resp events.SQSEventResponse) []string {
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// outcomes returns the outcome logged for each message ID.
func (f *fixture) outcomes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range f.logs.lines(t) {
		id, _ := l["messageId"].(string)
		out[id], _ = l["outcome"].(string)
	}
	return out
}

var (
	ana   = memory.Scope{TenantID: "acme", UserID: "u-123"}
	bob   = memory.Scope{TenantID: "acme", UserID: "u-456"}
	cleo  = memory.Scope{TenantID: "globex", UserID: "u-789"}
	anaOK = memorytest.Answer{
		Operations: []memory.Operation{
			{Op: "SET", Key: "name", Value: "Ana", Evidence: "I'm Ana"},
			{Op: "SET", Key: "home_city", Value: "Lisbon", Evidence: "Ana from Lisbon"},
			{Op: "SET", Key: "preferred_language", Value: "Portuguese", Evidence: "answer in Portuguese"},
		},
		Usage: memory.Usage{InputTokens: 812, OutputTokens: 61, CacheReadTokens: 5},
	}
	firstID = "0b8f4c1e-1111-4a51-9a3e-000000000001"
)

func factMap(facts []memory.Fact) map[string]string {
	m := map[string]string{}
	for _, f := range facts {
		m[f.Key] = f.Value
	}
	return m
}

func TestFirstAnswerMergesFacts(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK)
	resp := f.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	if got := failedIDs(resp); len(got) != 0 {
		t.Fatalf("failures = %v, want none", got)
	}
	rec, ok := f.repo.Record(ana)
	if !ok {
		t.Fatal("nothing stored for acme/u-123")
	}
	want := map[string]string{"name": "Ana", "home_city": "Lisbon", "preferred_language": "Portuguese"}
	if got := factMap(rec.Facts); !reflect.DeepEqual(got, want) {
		t.Errorf("facts = %v, want %v", got, want)
	}
	if got := rec.Threads["th-9"].TurnCount; got != 2 {
		t.Errorf("watermark of th-9 = %d, want 2", got)
	}
	for _, fact := range rec.Facts {
		if fact.SourceThreadID != "th-9" || fact.SourceThreadTitle != "Moving to Lisbon" || fact.Origin != memory.OriginConversation {
			t.Errorf("fact %s has source %q titled %q, origin %q; want th-9, the message's threadTitle, conversation",
				fact.Key, fact.SourceThreadID, fact.SourceThreadTitle, fact.Origin)
		}
	}
	reqs := f.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model calls = %d, want 1", len(reqs))
	}
	if m := reqs[0].Meta; m.TenantID != "acme" || m.UserID != "u-123" || m.RequestID != "gw-req-0001" || m.Kind != memory.KindMemoryUser {
		t.Errorf("model meta = %+v, want acme/u-123, gateway request ID, MEMORY_USER", m)
	}
	if !strings.Contains(reqs[0].Transcript, "Ana from Lisbon") {
		t.Errorf("transcript lacks the user's turn: %q", reqs[0].Transcript)
	}
	if got := f.outcomes(t)[firstID]; got != string(memory.OutcomeChanged) {
		t.Errorf("logged outcome = %q, want changed", got)
	}
}

func TestNotDueIsAcknowledgedWithoutModelCall(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK)
	resp := f.invoke(t, context.Background(), event(t, "extractor-not-due.json"))
	if got := failedIDs(resp); len(got) != 0 {
		t.Errorf("failures = %v, want none", got)
	}
	if n := f.model.Calls(); n != 0 {
		t.Errorf("model calls = %d, want 0", n)
	}
	if n := f.repo.Calls("Get") + f.repo.Calls("Save"); n != 0 {
		t.Errorf("repository calls = %d, want 0", n)
	}
	if got := f.outcomes(t)["0b8f4c1e-2222-4a51-9a3e-000000000002"]; got != outcomeNotDue {
		t.Errorf("outcome = %q, want %q", got, outcomeNotDue)
	}
}

func TestExtractionDisabledIsAcknowledged(t *testing.T) {
	f := newFixture(t, fixtureOpts{cfg: memory.Config{ExtractionDisabled: true}}, anaOK)
	resp := f.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	if got := failedIDs(resp); len(got) != 0 || f.model.Calls() != 0 {
		t.Errorf("failures %v, model calls %d; want none and 0", got, f.model.Calls())
	}
	if got := f.outcomes(t)[firstID]; got != string(memory.OutcomeDisabled) {
		t.Errorf("outcome = %q, want disabled", got)
	}
}

func TestRedeliveredChangesNothing(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK, anaOK)
	f.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	before, _ := f.repo.Record(ana)
	saves := f.repo.Calls("Save")

	resp := f.invoke(t, context.Background(), event(t, "extractor-redelivered.json"))
	if got := failedIDs(resp); len(got) != 0 {
		t.Errorf("failures = %v, want none", got)
	}
	if n := f.model.Calls(); n != 1 {
		t.Errorf("model calls = %d, want 1 (none for the redelivery)", n)
	}
	if n := f.repo.Calls("Save"); n != saves {
		t.Errorf("saves = %d, want %d (no write for the redelivery)", n, saves)
	}
	after, _ := f.repo.Record(ana)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("record changed:\nbefore %+v\nafter  %+v", before, after)
	}
	lines := f.logs.lines(t)
	if got := lines[len(lines)-1]["outcome"]; got != string(memory.OutcomeDuplicate) {
		t.Errorf("outcome of the redelivery = %v, want duplicate", got)
	}
}

func TestBatchWithPoisonFailsOnlyThePoison(t *testing.T) {
	bobOK := memorytest.Answer{Operations: []memory.Operation{{Op: "SET", Key: "role", Value: "nurse", Evidence: "a nurse in Leeds"}}}
	cleoOK := memorytest.Answer{Operations: []memory.Operation{{Op: "SET", Key: "name", Value: "Cleo", Evidence: "Call me Cleo"}}}
	f := newFixture(t, fixtureOpts{}, bobOK, cleoOK)
	resp := f.invoke(t, context.Background(), event(t, "extractor-batch-with-poison.json"))
	if got, want := failedIDs(resp), []string{"5c1d-0002", "5c1d-0003"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	if rec, _ := f.repo.Record(bob); factMap(rec.Facts)["role"] != "nurse" {
		t.Errorf("bob's facts = %v, want role nurse", factMap(rec.Facts))
	}
	if rec, _ := f.repo.Record(cleo); factMap(rec.Facts)["name"] != "Cleo" {
		t.Errorf("cleo's facts = %v, want name Cleo", factMap(rec.Facts))
	}
	for _, s := range []memory.Scope{{TenantID: "acme", UserID: "u-999"}, {TenantID: "acme", UserID: "u-555"}} {
		if _, ok := f.repo.Record(s); ok {
			t.Errorf("a poison message wrote a record for %v", s)
		}
	}
	got := f.outcomes(t)
	if got["5c1d-0002"] != outcomeMalformed || got["5c1d-0003"] != outcomeMalformed {
		t.Errorf("outcomes = %v, want malformed for the poison", got)
	}
	// Members of invalid messages are untrusted: no tenant in logs or metrics.
	for _, l := range f.logs.lines(t) {
		if l["messageId"] == "5c1d-0003" && l["tenant"] != nil {
			t.Errorf("invalid message logged with tenant %v", l["tenant"])
		}
	}
}

func TestOversizedIsReportedWithoutWork(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK)
	resp := f.invoke(t, context.Background(), event(t, "extractor-oversized.json"))
	if got, want := failedIDs(resp), []string{"9f00-0001"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	if f.model.Calls() != 0 || f.repo.Calls("Get") != 0 {
		t.Errorf("model calls %d, repository reads %d; want 0 and 0", f.model.Calls(), f.repo.Calls("Get"))
	}
	if got := f.outcomes(t)["9f00-0001"]; got != outcomeOversized {
		t.Errorf("outcome = %q, want %q", got, outcomeOversized)
	}
}

func TestFailedRecordBlocksLaterRecordsOfItsGroup(t *testing.T) {
	cleoOK := memorytest.Answer{Operations: []memory.Operation{{Op: "SET", Key: "name", Value: "Cleo", Evidence: "Call me Cleo"}}}
	f := newFixture(t, fixtureOpts{}, cleoOK, anaOK)
	resp := f.invoke(t, context.Background(), event(t, "extractor-group-order.json"))
	if got, want := failedIDs(resp), []string{"7a00-0001", "7a00-0002"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	if n := f.model.Calls(); n != 1 {
		t.Errorf("model calls = %d, want 1 (the other group only)", n)
	}
	if _, ok := f.repo.Record(ana); ok {
		t.Errorf("the blocked record of acme/u-123 was processed")
	}
	got := f.outcomes(t)
	if got["7a00-0002"] != outcomeGroupBlocked || got["7a00-0003"] != string(memory.OutcomeChanged) {
		t.Errorf("outcomes = %v, want group_blocked then changed", got)
	}
}

func TestGroupIDMustMatchTheEnvelope(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK)
	payload := editEvent(t, event(t, "extractor-first-answer.json"), func(ev *events.SQSEvent) {
		ev.Records[0].Attributes["MessageGroupId"] = "acme/u-other"
	})
	resp := f.invoke(t, context.Background(), payload)
	if got := failedIDs(resp); !slices.Equal(got, []string{firstID}) {
		t.Errorf("failures = %v, want the record", got)
	}
	if _, ok := f.repo.Record(ana); ok || f.model.Calls() != 0 {
		t.Errorf("a record whose group names another user was processed")
	}
}

func throttled() error {
	return fmt.Errorf("bedrock: converse: %w", &smithy.OperationError{ServiceID: "Bedrock Runtime", OperationName: "Converse",
		Err: &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Too many requests, text: Lisbon", Fault: smithy.FaultClient}})
}

func denied() error {
	return &smithy.OperationError{ServiceID: "Bedrock Runtime", OperationName: "Converse",
		Err: &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no access", Fault: smithy.FaultClient}}
}

func TestModelFailureLeavesFactsAndFollowsRetryPolicy(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		receives  string
		wantRetry bool
		outcome   memory.Outcome
	}{
		{"throttled first receive", throttled(), "1", true, memory.OutcomeModelFailed},
		{"throttled, last retry given up", throttled(), "3", false, memory.OutcomeModelFailed},
		{"timeout", fmt.Errorf("bedrock: %w", context.DeadlineExceeded), "2", true, memory.OutcomeModelFailed},
		{"access denied", denied(), "1", false, memory.OutcomeModelFailed},
		{"bad answer", fmt.Errorf("bedrock: stop reason max_tokens: %w", memory.ErrMalformedAnswer), "1", false, memory.OutcomeBadAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{}, memorytest.Answer{Err: tt.err, Usage: memory.Usage{InputTokens: 700}})
			stored := memory.Record{
				Facts:   []memory.Fact{{Key: "name", Value: "Ana", UpdatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}},
				Threads: map[string]memory.ThreadMark{"th-1": {TurnCount: 4}},
			}
			f.repo.Put(ana, stored)
			before, _ := f.repo.Record(ana)
			payload := editEvent(t, event(t, "extractor-first-answer.json"), func(ev *events.SQSEvent) {
				ev.Records[0].Attributes["ApproximateReceiveCount"] = tt.receives
			})
			resp := f.invoke(t, context.Background(), payload)
			if got := len(resp.BatchItemFailures) == 1; got != tt.wantRetry {
				t.Errorf("reported as failed = %v, want %v", got, tt.wantRetry)
			}
			after, _ := f.repo.Record(ana)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("a model failure changed the record:\nbefore %+v\nafter  %+v", before, after)
			}
			line := f.logs.lines(t)[0]
			if line["outcome"] != string(tt.outcome) {
				t.Errorf("outcome = %v, want %v", line["outcome"], tt.outcome)
			}
			if line["reason"] == nil || line["inputTokens"] != float64(700) {
				t.Errorf("log line lacks the reason or the tokens spent: %v", line)
			}
			if strings.Contains(f.logs.String(), "Lisbon") {
				t.Errorf("the model error's message reached the logs: %s", f.logs.String())
			}
		})
	}
}

func TestRepositoryFailureIsRetried(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK)
	f.repo.Fail = memorytest.ErrInjected
	resp := f.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	if got := failedIDs(resp); !slices.Equal(got, []string{firstID}) {
		t.Errorf("failures = %v, want the record", got)
	}
	if f.model.Calls() != 0 {
		t.Errorf("model called %d times with a failing repository", f.model.Calls())
	}
	if got := f.outcomes(t)[firstID]; got != outcomeRepository {
		t.Errorf("outcome = %q, want %q", got, outcomeRepository)
	}
}

func TestConflictIsRetried(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK)
	f.repo.BeforeSave = func() {
		// Another writer wins every time.
		f.repo.Put(ana, memory.Record{Facts: []memory.Fact{{Key: "role", Value: "x"}}})
	}
	resp := f.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	if got := failedIDs(resp); !slices.Equal(got, []string{firstID}) {
		t.Errorf("failures = %v, want the record", got)
	}
	if f.model.Calls() != 1 {
		t.Errorf("model calls = %d, want 1 (conflicts re-merge, never re-ask)", f.model.Calls())
	}
	if got := f.outcomes(t)[firstID]; got != outcomeConflict {
		t.Errorf("outcome = %q, want %q", got, outcomeConflict)
	}
}

func TestMessageSentBeforeErasureWritesNothing(t *testing.T) {
	// The sample was sent at 22:00:00 (SentTimestamp and sentAt).
	erased := time.Date(2026, 11, 29, 22, 5, 0, 0, time.UTC)
	tests := []struct {
		name        string
		sqsSent     string // "" removes the attribute
		wantFenced  bool
		wantSentVia string
	}{
		{"queue timestamp before erasure", "1795989600000", true, "sqs"},
		{"queue timestamp after erasure wins over the body", fmt.Sprint(erased.Add(time.Minute).UnixMilli()), false, "sqs"},
		{"no queue timestamp: body's sentAt", "", true, "message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{}, anaOK)
			f.repo.Put(ana, memory.Record{ErasedAt: erased})
			payload := editEvent(t, event(t, "extractor-first-answer.json"), func(ev *events.SQSEvent) {
				if tt.sqsSent == "" {
					delete(ev.Records[0].Attributes, "SentTimestamp")
				} else {
					ev.Records[0].Attributes["SentTimestamp"] = tt.sqsSent
				}
			})
			resp := f.invoke(t, context.Background(), payload)
			if got := failedIDs(resp); len(got) != 0 {
				t.Errorf("failures = %v, want none", got)
			}
			rec, _ := f.repo.Record(ana)
			line := f.logs.lines(t)[0]
			if line["sentAtFrom"] != tt.wantSentVia {
				t.Errorf("sentAtFrom = %v, want %s", line["sentAtFrom"], tt.wantSentVia)
			}
			if tt.wantFenced {
				if len(rec.Facts) != 0 || len(rec.Threads) != 0 || f.model.Calls() != 0 {
					t.Errorf("fenced message wrote %d facts, %d watermarks, %d model calls; want none", len(rec.Facts), len(rec.Threads), f.model.Calls())
				}
				if line["outcome"] != string(memory.OutcomeFenced) {
					t.Errorf("outcome = %v, want fenced", line["outcome"])
				}
			} else if len(rec.Facts) != 3 {
				t.Errorf("message sent after the erasure stored %d facts, want 3", len(rec.Facts))
			}
		})
	}
}

// refusingGate is a usage gate whose budget is spent.
type refusingGate struct{ asked int }

func (g *refusingGate) Allow(context.Context, memory.CallMeta) bool           { g.asked++; return false }
func (g *refusingGate) Record(context.Context, memory.CallMeta, memory.Usage) {}

func TestBudgetRefusalIsASilentSkipWithAMetric(t *testing.T) {
	gate := &refusingGate{}
	f := newFixture(t, fixtureOpts{gate: gate}, anaOK)
	resp := f.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	if got := failedIDs(resp); len(got) != 0 {
		t.Errorf("failures = %v, want none (silent skip)", got)
	}
	if gate.asked != 1 || f.model.Calls() != 0 {
		t.Errorf("gate asked %d times, model called %d times; want 1 and 0", gate.asked, f.model.Calls())
	}
	if _, ok := f.repo.Record(ana); ok {
		t.Errorf("a refused extraction wrote a record")
	}
	m := f.metrics.lines(t)
	if len(m) != 1 || m[0]["outcome"] != string(memory.OutcomeRefused) || m[0]["tenant"] != "acme" || m[0]["Records"] != float64(1) {
		t.Errorf("metrics = %v, want one line for tenant acme, outcome refused", m)
	}
}

// clockModel advances a test clock on every call, as a slow model would.
type clockModel struct {
	memory.Model
	mu   *sync.Mutex
	now  *time.Time
	step time.Duration
}

func (m clockModel) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	m.mu.Lock()
	*m.now = m.now.Add(m.step)
	m.mu.Unlock()
	return m.Model.Extract(ctx, req)
}

func TestRecordsNotStartedInTimeAreReportedFailed(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	scripted := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{{Op: "SET", Key: "role", Value: "nurse", Evidence: "a nurse in Leeds"}}})
	f := newFixture(t, fixtureOpts{
		storeOpt: []memory.Option{memory.WithModel(clockModel{Model: scripted, mu: &mu, now: &now, step: 50 * time.Second})},
		opts:     []Option{WithClock(clock), WithSafetyMargin(15 * time.Second)},
	})
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(60*time.Second))
	defer cancel()
	resp := f.invoke(t, ctx, event(t, "extractor-batch-with-poison.json"))
	// The first record takes 50 of the 60 seconds: the other three are
	// not started and come back, poison or not.
	if got, want := failedIDs(resp), []string{"5c1d-0002", "5c1d-0003", "5c1d-0004"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	if scripted.Calls() != 1 {
		t.Errorf("model calls = %d, want 1", scripted.Calls())
	}
	if got := f.outcomes(t)["5c1d-0004"]; got != outcomeDeadline {
		t.Errorf("outcome of the last record = %q, want %q", got, outcomeDeadline)
	}
}

// panicModel panics, as a bug would.
type panicModel struct{}

func (panicModel) Extract(context.Context, memory.ModelRequest) (memory.ModelAnswer, error) {
	panic("bug")
}

func TestPanicFailsOnlyItsRecord(t *testing.T) {
	f := newFixture(t, fixtureOpts{storeOpt: []memory.Option{memory.WithModel(panicModel{})}})
	resp := f.invoke(t, context.Background(), event(t, "extractor-batch-with-poison.json"))
	if got, want := failedIDs(resp), []string{"5c1d-0001", "5c1d-0002", "5c1d-0003", "5c1d-0004"}; !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	if got := f.outcomes(t)["5c1d-0004"]; got != outcomeInternal {
		t.Errorf("outcome = %q, want %q", got, outcomeInternal)
	}
}

// TestNoContentInLogsOrMetrics runs every sample event with recognisable
// fact values and turn text and checks that none of them, and no user ID,
// reaches the logs or the metrics.
// noCalls is a repository whose every method panics (a nil interface):
// a record handled before any call never reaches it.
type noCalls struct{ memory.Repository }

// TestWrongGroupIsRefusedBeforeAnyCall holds events/extractor-wrong-group.json,
// the event on which scripts/bench-api.sh measures the extractor's
// start-up, to what that figure needs: the record is decoded and checked,
// then refused (its body names another user than its message group)
// before any call to DynamoDB, the model or SQS, with the idle read on as
// deployed. A call would reach the panicking repository, a model call or a
// send, and the outcome would not be malformed.
func TestWrongGroupIsRefusedBeforeAnyCall(t *testing.T) {
	model, send := memorytest.NewModel(anaOK), &sentCopies{}
	store, err := memory.New(noCalls{}, memory.Config{}, memory.WithModel(model))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := NewHandler(store, WithLogger(slog.New(slog.NewJSONHandler(logs, nil))),
		WithIdleRead(15*time.Minute, idleURL, idleARN, send))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{h: h, logs: logs, metrics: &syncBuffer{}}
	const id = "0b8f4c1e-2222-4a51-9a3e-000000000009"
	if got := failedIDs(f.invoke(t, context.Background(), event(t, "extractor-wrong-group.json"))); !slices.Equal(got, []string{id}) {
		t.Errorf("failures = %v, want [%s]", got, id)
	}
	if got := f.outcomes(t)[id]; got != outcomeMalformed {
		t.Errorf("outcome = %q, want %q", got, outcomeMalformed)
	}
	if n, sent := model.Calls(), len(send.in); n != 0 || sent != 0 {
		t.Errorf("model calls = %d, idle copies sent = %d; want none", n, sent)
	}
}

func TestNoContentInLogsOrMetrics(t *testing.T) {
	secret := memorytest.Answer{Operations: []memory.Operation{
		{Op: "SET", Key: "favourite_colour", Value: "zq-vermilion-7731"},
		{Op: "SET", Key: "pet", Value: "zq-hamster-named-Bolota"},
	}, Usage: memory.Usage{InputTokens: 10, OutputTokens: 3}}
	f := newFixture(t, fixtureOpts{}, secret, secret, secret, secret, memorytest.Answer{Err: throttled()})
	var forbidden []string
	for _, name := range []string{"extractor-first-answer.json", "extractor-not-due.json", "extractor-batch-with-poison.json",
		"extractor-group-order.json", "extractor-redelivered.json", "extractor-oversized.json"} {
		payload := event(t, name)
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Fatal(err)
		}
		for _, r := range ev.Records {
			var body struct {
				UserID string `json:"userId"`
				Turns  []struct {
					Text string `json:"text"`
				} `json:"turns"`
			}
			if json.Unmarshal([]byte(r.Body), &body) == nil {
				for _, turn := range body.Turns {
					if len(turn.Text) >= 8 { // Shorter ones ("ok") would match anything.
						forbidden = append(forbidden, turn.Text[:min(len(turn.Text), 40)])
					}
				}
				if body.UserID != "" {
					forbidden = append(forbidden, `"`+body.UserID+`"`, "/"+body.UserID)
				}
			}
		}
		f.invoke(t, context.Background(), payload)
	}
	forbidden = append(forbidden, "zq-vermilion", "zq-hamster", "unterminated", "hunter2", "Lisbon", "Portuguese")
	out := f.logs.String() + f.metrics.String()
	if len(f.logs.lines(t)) < 10 || len(f.metrics.lines(t)) < 10 {
		t.Fatalf("expected a log line and a metric line per record; got %d and %d", len(f.logs.lines(t)), len(f.metrics.lines(t)))
	}
	for _, s := range forbidden {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("logs or metrics contain %q", s)
		}
	}
	for _, l := range f.logs.lines(t) {
		if l["requestId"] != "lambda-req-1" || l["outcome"] == nil || l["durationMs"] == nil {
			t.Errorf("log line lacks requestId, outcome or durationMs: %v", l)
		}
	}
}

func TestMetricsAreEmbeddedMetricFormat(t *testing.T) {
	f := newFixture(t, fixtureOpts{}, anaOK)
	f.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	lines := f.metrics.lines(t)
	if len(lines) != 1 {
		t.Fatalf("metric lines = %d, want 1", len(lines))
	}
	l := lines[0]
	var aws struct {
		Timestamp         int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	}
	raw, _ := json.Marshal(l["_aws"])
	if err := json.Unmarshal(raw, &aws); err != nil || len(aws.CloudWatchMetrics) != 2 || aws.Timestamp == 0 {
		t.Fatalf("_aws = %s, want a timestamp and two metric directives", raw)
	}
	// The counts under [outcome], the screening counts under [kind]
	// alone: a tenant dimension would make one billed metric per tenant
	// and outcome, and the screening counts are only ever non-zero for
	// two outcomes. The tenant stays a plain member of the line (checked
	// below) for Logs Insights.
	for i, dims := range [][][]string{{{"outcome"}}, {{"kind"}}} {
		d := aws.CloudWatchMetrics[i]
		if d.Namespace != DefaultNamespace || !reflect.DeepEqual(d.Dimensions, dims) {
			t.Errorf("directive %d = %+v, want namespace %s and the dimension sets %v", i, d, DefaultNamespace, dims)
		}
		for _, m := range d.Metrics {
			if _, ok := l[m.Name].(float64); !ok {
				t.Errorf("metric %s has no numeric value in the line", m.Name)
			}
		}
		for _, dim := range d.Dimensions[0] {
			if _, ok := l[dim].(string); !ok {
				t.Errorf("dimension %s has no string value in the line", dim)
			}
		}
	}
	want := map[string]any{"tenant": "acme", "outcome": "changed", "ModelCalls": float64(1), "InputTokens": float64(812),
		"OutputTokens": float64(61), "CacheReadTokens": float64(5), "Records": float64(1), "Retried": float64(0)}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%s = %v, want %v", k, l[k], v)
		}
	}
}

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{throttled(), true},
		{denied(), false},
		{&smithy.GenericAPIError{Code: "InternalServerException", Fault: smithy.FaultServer}, true},
		{&smithy.GenericAPIError{Code: "ValidationException", Fault: smithy.FaultClient}, false},
		{&smithy.GenericAPIError{Code: "SomethingNew", Fault: smithy.FaultServer}, true},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{fmt.Errorf("x: %w", memory.ErrMalformedAnswer), false},
		{errors.New("memory: no model configured"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestGlassBoxCounts shows the counts of the SETs the core left out or
// kept pending, on the record line and as metrics, and that neither holds
// the evidence: the first answer's user said "Hi, I'm Ana from Lisbon,
// answer in Portuguese".
func TestGlassBoxCounts(t *testing.T) {
	answer := memorytest.Answer{Operations: []memory.Operation{
		{Op: "SET", Key: "name", Value: "Ana", Evidence: "I'm Ana"},
		{Op: "SET", Key: "home_city", Value: "Lisbon", Evidence: "I live in Lisbon"},                        // not said: unsupported
		{Op: "SET", Key: "preferred_language", Value: "Portuguese", Evidence: "vou responder em português"}, // the assistant's: unsupported
		{Op: "SET", Key: "card", Value: "4111 1111 1111 1111", Evidence: "I'm Ana"},                         // a secret
		{Op: "SET", Key: "trip", Value: "Paris", Evidence: "from Lisbon", ValidUntil: "2020-01-31"},         // ended
		{Op: "SET", Key: "religion", Value: "catholic", Evidence: "Ana from Lisbon", Category: "religion"},  // pending
	}}
	f := newFixture(t, fixtureOpts{}, answer)
	f.invoke(t, context.Background(), event(t, "extractor-first-answer.json"))
	lines := f.logs.lines(t)
	rec, metrics := lines[len(lines)-1], f.metrics.lines(t)[0]
	want := map[string]float64{"sets": 1, "unsupported": 2, "secrets": 1, "ended": 1, "pending": 1}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("record line: %s = %v, want %v", k, rec[k], v)
		}
		if m := strings.ToUpper(k[:1]) + k[1:]; metrics[m] != v {
			t.Errorf("metrics: %s = %v, want %v", m, metrics[m], v)
		}
	}
	if rec["outcome"] != "changed" {
		t.Errorf("outcome = %v, want changed", rec["outcome"])
	}
	for _, out := range []string{f.logs.String(), f.metrics.String()} {
		for _, said := range []string{"Ana", "Lisbon", "português", "catholic", "4111"} {
			if strings.Contains(out, said) {
				t.Errorf("the output holds %q: %s", said, out)
			}
		}
	}
}
