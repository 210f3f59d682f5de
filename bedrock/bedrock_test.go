package bedrock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
)

const modelID = "us.amazon.nova-micro-v1:0"

// newClient returns the real Bedrock Runtime client pointed at url, with
// static dummy credentials.
func newClient(url string) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// standIn serves a Converse stand-in for one test and returns it with its
// URL.
func standIn(t *testing.T) (*fakebedrock.Server, string) {
	t.Helper()
	s := fakebedrock.New()
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, hs.URL
}

// observed collects the Calls a Model reports.
type observed struct {
	mu    sync.Mutex
	calls []bedrock.Call
}

func (o *observed) observe(c bedrock.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, c)
}

func (o *observed) last(t *testing.T) bedrock.Call {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.calls) == 0 {
		t.Fatal("the observer was not called")
	}
	return o.calls[len(o.calls)-1]
}

// newModel returns a Model over the stand-in, with a fast backoff, and
// the observer of its calls.
func newModel(url string, opts ...bedrock.Option) (*bedrock.Model, *observed) {
	o := &observed{}
	opts = append([]bedrock.Option{bedrock.WithBackoff(5*time.Millisecond, 20*time.Millisecond), bedrock.WithObserver(o.observe)}, opts...)
	return bedrock.New(newClient(url), opts...), o
}

func request(transcript string) memory.ModelRequest {
	return memory.ModelRequest{
		ModelID:       modelID,
		System:        "You keep facts about the user.",
		Transcript:    transcript,
		Tool:          memory.OperationsTool(8, 200, true),
		MaxOperations: 8,
		Meta:          memory.CallMeta{Kind: memory.KindMemoryUser, TenantID: "acme", UserID: "u-1"},
	}
}

const anaTranscript = "User: Hi, I'm Ana from Lisbon, answer in Portuguese\n\nAssistant: Olá Ana!"

var anaOps = []memory.Operation{
	{Op: "SET", Key: "name", Value: "Ana", Evidence: "I'm Ana from Lisbon"},
	{Op: "SET", Key: "home_city", Value: "Lisbon", Evidence: "I'm Ana from Lisbon"},
	{Op: "SET", Key: "preferred_language", Value: "Portuguese", Evidence: "answer in Portuguese"},
}

func calls(t *testing.T, s *fakebedrock.Server) []fakebedrock.Call {
	t.Helper()
	_, c := s.Calls()
	return c
}

// wire is one request as an httptest server received it.
type wire struct {
	method, path, auth, contentType string
	body                            map[string]any
}

// wireServer answers every request with answer and records it.
func wireServer(t *testing.T, answer string) (*httptest.Server, func() wire) {
	t.Helper()
	var mu sync.Mutex
	var got wire
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = wire{method: r.Method, path: r.URL.EscapedPath(), auth: r.Header.Get("Authorization"), contentType: r.Header.Get("Content-Type")}
		if err := json.Unmarshal(b, &got.body); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(hs.Close)
	return hs, func() wire { mu.Lock(); defer mu.Unlock(); return got }
}

func TestRequestOnTheWire(t *testing.T) {
	const answer = `{"output":{"message":{"role":"assistant","content":[{"text":"ok"},{"toolUse":{"toolUseId":"t1","name":"record_memory_operations","input":{"operations":[{"op":"SET","key":"name","value":"Ana"}]}}}]}},` +
		`"stopReason":"tool_use","usage":{"inputTokens":120,"outputTokens":30,"totalTokens":150,"cacheReadInputTokens":7,"cacheWriteInputTokens":3},"metrics":{"latencyMs":12}}`
	hs, got := wireServer(t, answer)
	const arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-micro-v1:0"
	req := request("User: I'm Ana")
	req.ModelID = arn
	ans, err := bedrock.New(newClient(hs.URL)).Extract(context.Background(), req)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if diff := cmp.Diff([]memory.Operation{{Op: "SET", Key: "name", Value: "Ana"}}, ans.Operations); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	if want := (memory.Usage{InputTokens: 120, OutputTokens: 30, CacheReadTokens: 7, CacheWriteTokens: 3}); ans.Usage != want {
		t.Errorf("usage = %+v, want %+v", ans.Usage, want)
	}

	w := got()
	if w.method != http.MethodPost {
		t.Errorf("method = %s, want POST", w.method)
	}
	if want := "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.amazon.nova-micro-v1%3A0/converse"; w.path != want {
		t.Errorf("path = %s, want %s", w.path, want)
	}
	if !strings.HasPrefix(w.auth, "AWS4-HMAC-SHA256 ") {
		t.Errorf("Authorization = %q, want a SigV4 signature", w.auth)
	}
	// A Nova profile: the top level of the schema holds only what Nova
	// supports there.
	var schema map[string]any
	if err := json.Unmarshal(req.Tool.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	delete(schema, "additionalProperties")
	want := map[string]any{
		"system":   []any{map[string]any{"text": req.System}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"text": req.Transcript}}}},
		"inferenceConfig": map[string]any{
			"maxTokens":   float64(1024),
			"temperature": float64(0),
		},
		"toolConfig": map[string]any{
			"tools": []any{map[string]any{"toolSpec": map[string]any{
				"name":        memory.OperationsToolName,
				"description": req.Tool.Description,
				"inputSchema": map[string]any{"json": schema},
			}}},
			"toolChoice": map[string]any{"tool": map[string]any{"name": memory.OperationsToolName}},
		},
	}
	if diff := cmp.Diff(want, w.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestJSONModeOnTheWire(t *testing.T) {
	const answer = "{\"output\":{\"message\":{\"role\":\"assistant\",\"content\":[{\"text\":\"```json\\n{\\\"operations\\\":[{\\\"op\\\":\\\"DELETE\\\",\\\"key\\\":\\\"home_city\\\"}]}\\n```\"}]}}," +
		`"stopReason":"end_turn","usage":{"inputTokens":90,"outputTokens":12,"totalTokens":102},"metrics":{"latencyMs":3}}`
	hs, got := wireServer(t, answer)
	req := request("User: forget where I live")
	ans, err := bedrock.New(newClient(hs.URL), bedrock.WithOutputMode(bedrock.OutputJSON)).Extract(context.Background(), req)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if diff := cmp.Diff([]memory.Operation{{Op: "DELETE", Key: "home_city"}}, ans.Operations); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	if want := (memory.Usage{InputTokens: 90, OutputTokens: 12}); ans.Usage != want {
		t.Errorf("usage = %+v, want %+v", ans.Usage, want)
	}
	w := got()
	if _, ok := w.body["toolConfig"]; ok {
		t.Errorf("JSON mode sent a toolConfig: %v", w.body["toolConfig"])
	}
	sys, _ := w.body["system"].([]any)
	if len(sys) != 1 {
		t.Fatalf("system = %v, want one block", w.body["system"])
	}
	text, _ := sys[0].(map[string]any)["text"].(string)
	if !strings.HasPrefix(text, req.System) || !strings.Contains(text, `{"operations":[...]}`) || !strings.Contains(text, `"enum":["SET","DELETE"]`) {
		t.Errorf("system text does not keep the prompt and add the JSON instruction with the schema:\n%s", text)
	}
	// The JSON mode asks for the same members as the tool: the schema in
	// the instruction is the tool's, whole.
	i := strings.Index(text, `{"type":"object"`)
	if i < 0 {
		t.Fatalf("no schema in the system text:\n%s", text)
	}
	var schema any
	if err := json.Unmarshal([]byte(text[i:]), &schema); err != nil {
		t.Fatalf("the schema in the system text: %v", err)
	}
	items, _ := walk(schema, "properties", "operations", "items").(map[string]any)
	checkOperationMembers(t, items)
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name   string
		maxOps int
		opts   []bedrock.Option
		want   int
	}{
		{"few operations", 8, nil, bedrock.FirstMaxTokens},
		{"many operations: the first request still asks for FirstMaxTokens", 100, nil, bedrock.FirstMaxTokens},
		{"one operation: what its largest answer needs", 1, nil, int(bedrock.MaxTokensFor(len(memory.LargestAnswer(1, 200))))},
		{"fixed by option", 100, []bedrock.Option{bedrock.WithMaxTokens(300)}, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, url := standIn(t)
			m, _ := newModel(url, tt.opts...)
			req := request(anaTranscript)
			req.MaxOperations = tt.maxOps
			req.Tool = memory.OperationsTool(tt.maxOps, 200, true)
			if _, err := m.Extract(context.Background(), req); err != nil {
				t.Fatalf("Extract: %v", err)
			}
			c := calls(t, s)
			if len(c) != 1 || c[0].MaxTokens != tt.want || c[0].Temperature != 0 {
				t.Errorf("calls = %+v, want one with maxTokens %d and temperature 0", c, tt.want)
			}
		})
	}
}

// TestMaxTokensAskedAgain checks that an answer that stopped at
// FirstMaxTokens is asked for once more with MaxTokensFor the request's
// operations, its usage counted with the first's, and that a request whose
// operations need no more is not repeated.
func TestMaxTokensAskedAgain(t *testing.T) {
	if bedrock.FirstMaxTokens > 1024 {
		t.Fatalf("FirstMaxTokens %d: the default stays at most 1,024", bedrock.FirstMaxTokens)
	}
	for _, tt := range []struct {
		maxOps int
		want   []int
	}{
		{20, []int{1024, int(bedrock.MaxTokensFor(len(memory.LargestAnswer(20, memory.DefaultMaxFactChars))))}},
		{100, []int{1024, bedrock.MaxTokensUpperBound}},
		{4, []int{1024}},
	} {
		s, url := standIn(t)
		m, o := newModel(url)
		req := request(anaTranscript)
		req.MaxOperations, req.Tool = tt.maxOps, memory.OperationsTool(tt.maxOps, 200, true)
		s.Script(fakebedrock.Step{StopReason: "max_tokens"})
		ans, err := m.Extract(context.Background(), req)
		c := calls(t, s)
		var got []int
		for _, x := range c {
			got = append(got, x.MaxTokens)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%d operations: maxTokens of the requests %v, want %v", tt.maxOps, got, tt.want)
		}
		if len(tt.want) == 1 {
			if err == nil {
				t.Errorf("%d operations: a max_tokens stop was accepted", tt.maxOps)
			}
			continue
		}
		if err != nil || len(ans.Operations) == 0 {
			t.Fatalf("%d operations: Extract = %+v, %v; want the second answer", tt.maxOps, ans, err)
		}
		if last := o.last(t); last.Attempts != 2 || ans.Usage.InputTokens <= last.Usage.InputTokens/2 {
			t.Errorf("%d operations: call %+v, usage %+v: want 2 attempts and both requests' tokens", tt.maxOps, last, ans.Usage)
		}
	}
}

func TestDefaultAnswerThroughStandIn(t *testing.T) {
	s, url := standIn(t)
	m, o := newModel(url)
	ans, err := m.Extract(context.Background(), request(anaTranscript))
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if diff := cmp.Diff(anaOps, ans.Operations); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	c := o.last(t)
	if c.Attempts != 1 || c.StopReason != "tool_use" || c.Usage != ans.Usage || ans.Usage.InputTokens == 0 || ans.Usage.OutputTokens == 0 {
		t.Errorf("call = %+v, want 1 attempt, tool_use and the answer's non-zero usage", c)
	}
	if got := calls(t, s); len(got) != 1 || got[0].ModelID != modelID || got[0].Tool != memory.OperationsToolName {
		t.Errorf("stand-in calls = %+v, want one of %s forcing %s", got, modelID, memory.OperationsToolName)
	}
}

func TestMalformedAnswers(t *testing.T) {
	usage := &fakebedrock.Usage{InputTokens: 321, OutputTokens: 45}
	tests := []struct {
		name string
		step fakebedrock.Step
	}{
		{"max_tokens", fakebedrock.Step{StopReason: "max_tokens"}},
		{"malformed_tool_use", fakebedrock.Step{StopReason: "malformed_tool_use"}},
		{"guardrail_intervened", fakebedrock.Step{StopReason: "guardrail_intervened", NoToolUse: true, Text: "blocked"}},
		{"content_filtered", fakebedrock.Step{StopReason: "content_filtered", NoToolUse: true}},
		{"end_turn with text and no tool use", fakebedrock.Step{NoToolUse: true, Text: "Nice to meet you!"}},
		{"end_turn with a tool use", fakebedrock.Step{StopReason: "end_turn"}},
		{"tool_use without a tool use block", fakebedrock.Step{NoToolUse: true, StopReason: "tool_use", Text: "calling"}},
		{"another tool", fakebedrock.Step{ToolName: "remember_user_fact"}},
		{"input not an object", fakebedrock.Step{Input: json.RawMessage(`"SET name Ana"`)}},
		{"operations not an array", fakebedrock.Step{Input: json.RawMessage(`{"operations":"none"}`)}},
		{"no operations", fakebedrock.Step{Input: json.RawMessage(`{}`)}},
		{"extra field", fakebedrock.Step{Input: json.RawMessage(`{"operations":[{"op":"SET","key":"name","value":"Ana","why":"said so"}]}`)}},
		{"extra member named by content", fakebedrock.Step{Input: json.RawMessage(`{"operations":[],"Ana said so":1}`)}},
		{"operation not an object", fakebedrock.Step{Input: json.RawMessage(`{"operations":["SET name Ana"]}`)}},
		{"value not a string", fakebedrock.Step{Input: json.RawMessage(`{"operations":[{"op":"SET","key":"age","value":41}]}`)}},
		{"evidence not a string", fakebedrock.Step{Input: json.RawMessage(`{"operations":[{"op":"SET","key":"name","value":"Ana","evidence":["I'm Ana"]}]}`)}},
		{"validUntil not a string", fakebedrock.Step{Input: json.RawMessage(`{"operations":[{"op":"SET","key":"name","value":"Ana","evidence":"I'm Ana","validUntil":41}]}`)}},
		{"category not a string", fakebedrock.Step{Input: json.RawMessage(`{"operations":[{"op":"SET","key":"name","value":"Ana","evidence":"I'm Ana","category":{"name":"health"}}]}`)}},
		// An unknown op, a missing key or value, too many operations: the
		// store refuses them (TestStoreRefusesWhatTheSchemaRefuses), and a
		// key or value over maxLength is cut there, not refused.
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, url := standIn(t)
			m, o := newModel(url)
			step := tt.step
			step.Usage = usage
			s.Script(step)
			// Four operations fit in FirstMaxTokens: a max_tokens stop is
			// not asked for again (TestMaxTokensAskedAgain).
			req := request(anaTranscript)
			req.MaxOperations, req.Tool = 4, memory.OperationsTool(4, 200, true)
			ans, err := m.Extract(context.Background(), req)
			if !errors.Is(err, memory.ErrMalformedAnswer) {
				t.Fatalf("Extract error = %v, want one wrapping memory.ErrMalformedAnswer", err)
			}
			if ans.Operations != nil {
				t.Errorf("operations = %v, want none", ans.Operations)
			}
			if ans.Usage.InputTokens != 321 || ans.Usage.OutputTokens != 45 {
				t.Errorf("usage = %+v, want the call's 321/45", ans.Usage)
			}
			if c := o.last(t); c.Attempts != 1 || !errors.Is(c.Err, memory.ErrMalformedAnswer) {
				t.Errorf("call = %+v, want 1 attempt (a malformed answer is not retried)", c)
			}
			if strings.Contains(err.Error(), "Ana") || strings.Contains(err.Error(), "said so") || strings.Contains(err.Error(), "Nice to meet") || strings.Contains(err.Error(), "41") {
				t.Errorf("error %q carries answer text", err)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name        string
		steps       []fakebedrock.Step
		wantRetried []string
	}{
		{"throttling then success", []fakebedrock.Step{fakebedrock.Throttle(), fakebedrock.Throttle()}, []string{"ThrottlingException", "ThrottlingException"}},
		{"5xx then success", []fakebedrock.Step{fakebedrock.Unavailable(), fakebedrock.InternalError()}, []string{"ServiceUnavailableException", "InternalServerException"}},
		{"model not ready then success", []fakebedrock.Step{{Error: fakebedrock.ErrModelNotReady}}, []string{"ModelNotReadyException"}},
		{"unmodeled 502 then success", []fakebedrock.Step{{Error: "BadGateway", Status: 502}}, []string{"BadGateway"}},
		{"quota then success", []fakebedrock.Step{{Error: "ServiceQuotaExceededException", Status: 400}}, []string{"ServiceQuotaExceededException"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, url := standIn(t)
			m, o := newModel(url)
			s.Script(tt.steps...)
			start := time.Now()
			ans, err := m.Extract(context.Background(), request(anaTranscript))
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if diff := cmp.Diff(anaOps, ans.Operations); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			c := o.last(t)
			want := len(tt.steps) + 1
			if n, _ := s.Calls(); c.Attempts != want || n != want {
				t.Errorf("attempts = %d, stand-in calls = %d, want %d each (the SDK must not retry on its own)", c.Attempts, n, want)
			}
			if diff := cmp.Diff(tt.wantRetried, c.Retried); diff != "" {
				t.Errorf("retried (-want +got):\n%s", diff)
			}
			t.Logf("%d attempts in %v", c.Attempts, took)
		})
	}
}

func TestRetriesAreBounded(t *testing.T) {
	s, url := standIn(t)
	m, o := newModel(url, bedrock.WithMaxAttempts(3))
	s.Script(fakebedrock.Throttle(), fakebedrock.Throttle(), fakebedrock.Throttle(), fakebedrock.Throttle(), fakebedrock.Throttle())
	start := time.Now()
	_, err := m.Extract(context.Background(), request(anaTranscript))
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ThrottlingException" {
		t.Fatalf("Extract error = %v, want the ThrottlingException", err)
	}
	if errors.Is(err, memory.ErrMalformedAnswer) {
		t.Errorf("a failed call reported as a malformed answer: %v", err)
	}
	if n, _ := s.Calls(); o.last(t).Attempts != 3 || n != 3 || s.Pending() != 2 {
		t.Errorf("attempts = %d, stand-in calls = %d, pending = %d; want 3, 3, 2", o.last(t).Attempts, n, s.Pending())
	}
	t.Logf("gave up after 3 attempts in %v", time.Since(start))
}

func TestFinalErrorsAreNotRetried(t *testing.T) {
	tests := []struct {
		step fakebedrock.Step
		code string
	}{
		{fakebedrock.AccessDenied(), "AccessDeniedException"},
		{fakebedrock.Step{Error: fakebedrock.ErrValidation, Message: "Malformed input request."}, "ValidationException"},
		{fakebedrock.Step{Error: fakebedrock.ErrResourceNotFound, Message: "Model not found."}, "ResourceNotFoundException"},
		{fakebedrock.Step{Error: "ModelErrorException", Status: 424}, "ModelErrorException"},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			s, url := standIn(t)
			m, o := newModel(url)
			s.Script(tt.step, fakebedrock.Answer())
			_, err := m.Extract(context.Background(), request(anaTranscript))
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != tt.code {
				t.Fatalf("Extract error = %v, want %s", err, tt.code)
			}
			if errors.Is(err, bedrock.ErrToolChoiceUnsupported) || errors.Is(err, memory.ErrMalformedAnswer) {
				t.Errorf("error %v classified wrongly", err)
			}
			if n, _ := s.Calls(); o.last(t).Attempts != 1 || n != 1 {
				t.Errorf("attempts = %d, stand-in calls = %d, want 1 each", o.last(t).Attempts, n)
			}
		})
	}
}

func TestTimeoutWithinDeadline(t *testing.T) {
	s, url := standIn(t)
	m, o := newModel(url)
	s.Script(fakebedrock.Slow(5 * time.Second))
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := m.Extract(ctx, request(anaTranscript))
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Extract error = %v, want the deadline's", err)
	}
	if took >= deadline || ctx.Err() != nil {
		t.Errorf("Extract took %v with a %v deadline: it must return before it", took, deadline)
	}
	if o.last(t).Attempts != 1 {
		t.Errorf("attempts = %d, want 1", o.last(t).Attempts)
	}
	t.Logf("returned after %v with a %v deadline", took, deadline)
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	s, url := standIn(t)
	m, o := newModel(url, bedrock.WithAttemptTimeout(150*time.Millisecond))
	s.Script(fakebedrock.Slow(3 * time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	ans, err := m.Extract(ctx, request(anaTranscript))
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if diff := cmp.Diff(anaOps, ans.Operations); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	c := o.last(t)
	if c.Attempts != 2 || !cmp.Equal(c.Retried, []string{"timeout"}) {
		t.Errorf("call = %+v, want 2 attempts after a timeout", c)
	}
	t.Logf("%d attempts in %v", c.Attempts, time.Since(start))
}

func TestNoRetryPastTheDeadline(t *testing.T) {
	for range 5 {
		s, url := standIn(t)
		m, o := newModel(url, bedrock.WithBackoff(time.Second, time.Second), bedrock.WithDeadlineMargin(100*time.Millisecond))
		steps := make([]fakebedrock.Step, 20)
		for i := range steps {
			steps[i] = fakebedrock.Throttle()
		}
		s.Script(steps...)
		ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
		start := time.Now()
		_, err := m.Extract(ctx, request(anaTranscript))
		took := time.Since(start)
		// Backoffs of up to 1s do not all fit in 600ms less the margin:
		// Extract gives up when the next one does not, before the deadline.
		if err == nil || ctx.Err() != nil {
			t.Errorf("Extract = %v after %v (ctx %v), want an error before the 600ms deadline", err, took, ctx.Err())
		}
		cancel()
		t.Logf("%d attempts in %v", o.last(t).Attempts, took)
	}
}

func TestToolChoiceRefused(t *testing.T) {
	s, url := standIn(t)
	m, o := newModel(url)
	s.Script(fakebedrock.ToolChoiceRefused())
	_, err := m.Extract(context.Background(), request(anaTranscript))
	if !errors.Is(err, bedrock.ErrToolChoiceUnsupported) {
		t.Fatalf("Extract error = %v, want ErrToolChoiceUnsupported", err)
	}
	if !strings.Contains(err.Error(), "MODEL_OUTPUT_MODE=json") {
		t.Errorf("error %q does not say to set MODEL_OUTPUT_MODE=json", err)
	}
	if o.last(t).Attempts != 1 {
		t.Errorf("attempts = %d, want 1", o.last(t).Attempts)
	}

	// The fallback mode works with the same model.
	m, _ = newModel(url, bedrock.WithOutputMode(bedrock.OutputJSON))
	ans, err := m.Extract(context.Background(), request(anaTranscript))
	if err != nil {
		t.Fatalf("JSON mode Extract: %v", err)
	}
	if diff := cmp.Diff(anaOps, ans.Operations); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	if c := calls(t, s); c[len(c)-1].Tool != "" {
		t.Errorf("JSON mode forced the tool %q", c[len(c)-1].Tool)
	}
}

func TestJSONMode(t *testing.T) {
	tests := []struct {
		name    string
		step    fakebedrock.Step
		want    []memory.Operation
		wantErr bool
	}{
		{"rule answer", fakebedrock.Step{}, anaOps, false},
		{"fenced", fakebedrock.Step{Text: "```json\n{\"operations\":[{\"op\":\"SET\",\"key\":\"role\",\"value\":\"nurse\"}]}\n```"},
			[]memory.Operation{{Op: "SET", Key: "role", Value: "nurse"}}, false},
		{"empty list", fakebedrock.Step{Text: ` {"operations":[]} `}, []memory.Operation{}, false},
		{"glass-box members", fakebedrock.Step{Text: `{"operations":[{"op":"SET","key":"current_city","value":"Paris","evidence":"I'm in Paris until Friday",` +
			`"validUntil":"2026-12-04","category":"health"}]}`},
			[]memory.Operation{{Op: "SET", Key: "current_city", Value: "Paris", Evidence: "I'm in Paris until Friday", ValidUntil: "2026-12-04", Category: "health"}}, false},
		{"evidence not a string", fakebedrock.Step{Text: `{"operations":[{"op":"SET","key":"k","value":"v","evidence":1}]}`}, nil, true},
		{"prose", fakebedrock.Step{Text: "I will remember that your name is Ana."}, nil, true},
		{"schema violation", fakebedrock.Step{Text: `{"operations":[{"op":"SET","key":"k","value":"v","why":"x"}]}`}, nil, true},
		{"trailing text", fakebedrock.Step{Text: `{"operations":[]} I hope this helps`}, nil, true},
		{"max_tokens", fakebedrock.Step{StopReason: "max_tokens", Text: `{"operations":[`}, nil, true},
		{"empty", fakebedrock.Step{NoToolUse: true}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, url := standIn(t)
			m, _ := newModel(url, bedrock.WithOutputMode(bedrock.OutputJSON))
			s.Script(tt.step)
			if tt.step.StopReason == "max_tokens" {
				s.Script(tt.step) // the second request, for MaxTokensFor the operations, stops there too
			}
			ans, err := m.Extract(context.Background(), request(anaTranscript))
			if tt.wantErr {
				if !errors.Is(err, memory.ErrMalformedAnswer) {
					t.Fatalf("Extract error = %v, want one wrapping memory.ErrMalformedAnswer", err)
				}
				if ans.Usage.InputTokens == 0 {
					t.Errorf("usage = %+v, want the call's", ans.Usage)
				}
				return
			}
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if diff := cmp.Diff(tt.want, ans.Operations); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsageIncludesCache(t *testing.T) {
	s, url := standIn(t)
	m, _ := newModel(url)
	s.Script(fakebedrock.Step{Usage: &fakebedrock.Usage{InputTokens: 10, OutputTokens: 5, CacheReadInputTokens: 800, CacheWriteInputTokens: 40}})
	ans, err := m.Extract(context.Background(), request(anaTranscript))
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if want := (memory.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 800, CacheWriteTokens: 40}); ans.Usage != want {
		t.Errorf("usage = %+v, want %+v", ans.Usage, want)
	}
}

func TestBadRequestsMakeNoCall(t *testing.T) {
	tests := []struct {
		name string
		edit func(*memory.ModelRequest)
	}{
		{"no model ID", func(r *memory.ModelRequest) { r.ModelID = "" }},
		{"schema not JSON", func(r *memory.ModelRequest) { r.Tool.InputSchema = json.RawMessage(`{"type":`) }},
		{"schema not an object", func(r *memory.ModelRequest) { r.Tool.InputSchema = json.RawMessage(`["operations"]`) }},
		{"no schema", func(r *memory.ModelRequest) { r.Tool.InputSchema = nil }},
		// The schema is sent to the model, not compiled here: one that
		// Bedrock cannot use comes back as its ValidationException, a
		// final error (TestFinalErrorsAreNotRetried).
	}
	for _, tt := range tests {
		for _, mode := range []bedrock.OutputMode{bedrock.OutputTool, bedrock.OutputJSON} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				s, url := standIn(t)
				m, _ := newModel(url, bedrock.WithOutputMode(mode))
				req := request(anaTranscript)
				tt.edit(&req)
				_, err := m.Extract(context.Background(), req)
				if err == nil || errors.Is(err, memory.ErrMalformedAnswer) {
					t.Errorf("Extract error = %v, want a failed call", err)
				}
				if n, _ := s.Calls(); n != 0 {
					t.Errorf("stand-in calls = %d, want 0", n)
				}
			})
		}
	}
}

func TestEmptyTranscriptMakesNoCall(t *testing.T) {
	s, url := standIn(t)
	m, o := newModel(url)
	ans, err := m.Extract(context.Background(), request(" \n "))
	if err != nil || ans.Operations == nil || len(ans.Operations) != 0 {
		t.Fatalf("Extract = %+v, %v; want no operations, no error", ans, err)
	}
	if n, _ := s.Calls(); n != 0 || o.last(t).Attempts != 0 {
		t.Errorf("stand-in calls = %d, attempts = %d, want 0", n, o.last(t).Attempts)
	}
}

func TestConcurrentExtract(t *testing.T) {
	s, url := standIn(t)
	m, _ := newModel(url)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.Extract(context.Background(), request(anaTranscript))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Extract: %v", err)
		}
	}
	if n, _ := s.Calls(); n != 8 {
		t.Errorf("stand-in calls = %d, want 8", n)
	}
}

func TestParseOutputMode(t *testing.T) {
	for in, want := range map[string]bedrock.OutputMode{"tool": bedrock.OutputTool, " JSON ": bedrock.OutputJSON} {
		if got, err := bedrock.ParseOutputMode(in); err != nil || got != want {
			t.Errorf("ParseOutputMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := bedrock.ParseOutputMode("text"); err == nil {
		t.Error("ParseOutputMode(text) = nil error")
	}
}

// TestToolSchemaPerModelFamily sends the extraction through each family's
// model IDs and checks, on the wire, the top-level keywords of the tool's
// input schema: Nova (and any model of no known family) gets only type,
// properties and required; Anthropic the whole schema.
func TestToolSchemaPerModelFamily(t *testing.T) {
	const answer = `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"record_memory_operations","input":{"operations":[]}}}]}},` +
		`"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`
	nova := []string{"properties", "required", "type"}
	full := []string{"additionalProperties", "properties", "required", "type"}
	families := []struct {
		family   bedrock.Family
		want     []string
		modelIDs []string
	}{
		{bedrock.FamilyNova, nova, []string{
			"amazon.nova-micro-v1:0", "us.amazon.nova-micro-v1:0", "eu.amazon.nova-lite-v1:0", "apac.amazon.nova-pro-v1:0",
			"global.amazon.nova-2-lite-v1:0", "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.amazon.nova-micro-v1:0",
		}},
		{bedrock.FamilyAnthropic, full, []string{
			"anthropic.claude-3-haiku-20240307-v1:0", "us.anthropic.claude-3-5-haiku-20241022-v1:0",
			"global.anthropic.claude-haiku-4-5-20251001-v1:0",
			"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
		}},
		{bedrock.FamilyOther, nova, []string{
			"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3", "meta.llama3-8b-instruct-v1:0",
		}},
	}
	for _, fam := range families {
		for _, id := range fam.modelIDs {
			t.Run(id, func(t *testing.T) {
				if got := bedrock.FamilyOf(id); got != fam.family {
					t.Errorf("FamilyOf = %q, want %q", got, fam.family)
				}
				hs, got := wireServer(t, answer)
				req := request("User: hi")
				req.ModelID = id
				if _, err := bedrock.New(newClient(hs.URL)).Extract(context.Background(), req); err != nil {
					t.Fatalf("Extract: %v", err)
				}
				tools, _ := w(got().body, "toolConfig", "tools").([]any)
				if len(tools) != 1 {
					t.Fatalf("tools = %v, want one", tools)
				}
				schema, _ := w(tools[0], "toolSpec", "inputSchema", "json").(map[string]any)
				var keys []string
				for k := range schema {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				if !cmp.Equal(keys, fam.want) {
					t.Errorf("top-level schema keywords %q, want %q", keys, fam.want)
				}
				items := w(schema, "properties", "operations", "items").(map[string]any)
				if items["additionalProperties"] != false {
					t.Errorf("operation items lost additionalProperties:false: %v", items)
				}
				checkOperationMembers(t, items)
			})
		}
	}
}

// checkOperationMembers checks that the schema of an operation, as sent,
// asks for the glass-box members: evidence required, of at most
// memory.MaxEvidenceChars characters; validUntil a string; category one of
// memory.Categories, by a nested enum, which every family takes.
func checkOperationMembers(t *testing.T, items map[string]any) {
	t.Helper()
	if req, _ := items["required"].([]any); !slices.Contains(req, any("evidence")) {
		t.Errorf("operation required = %v, want evidence among them", items["required"])
	}
	if got := w(items, "properties", "evidence", "maxLength"); got != float64(memory.MaxEvidenceChars) {
		t.Errorf("evidence maxLength = %v, want %d", got, memory.MaxEvidenceChars)
	}
	if got := w(items, "properties", "validUntil", "type"); got != "string" {
		t.Errorf("validUntil type = %v, want string", got)
	}
	var enum []string
	cats, _ := w(items, "properties", "category", "enum").([]any)
	for _, c := range cats {
		enum = append(enum, c.(string))
	}
	if !slices.Equal(enum, memory.Categories) {
		t.Errorf("category enum = %v, want %v", enum, memory.Categories)
	}
}

// w walks nested JSON objects.
func w(v any, path ...string) any { return walk(v, path...) }

// walk walks nested JSON objects, for a test where w names a wire.
func walk(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func TestAllowedModels(t *testing.T) {
	s, url := standIn(t)
	m, o := newModel(url, bedrock.WithAllowedModels(modelID))
	req := request(anaTranscript)
	req.ModelID = "us.anthropic.claude-3-haiku-20240307-v1:0"
	_, err := m.Extract(context.Background(), req)
	if !errors.Is(err, bedrock.ErrModelNotAllowed) || bedrock.Retryable(err) {
		t.Fatalf("Extract error = %v, want ErrModelNotAllowed, permanent", err)
	}
	if n, _ := s.Calls(); n != 0 || o.last(t).Attempts != 0 {
		t.Errorf("%d calls, %d attempts for a model not allowed, want none", n, o.last(t).Attempts)
	}
	if _, err := m.Extract(context.Background(), request(anaTranscript)); err != nil {
		t.Fatalf("Extract with the allowed model: %v", err)
	}
}

// TestRetryableIsTheOneClassification holds Retryable to the errors the
// Model meets on the wire: what its retryer retried is retryable, what it
// gave up at once is not, and so are the errors that never reach the wire.
func TestRetryableIsTheOneClassification(t *testing.T) {
	for _, tt := range []struct {
		step fakebedrock.Step
		want bool
	}{
		{fakebedrock.Throttle(), true},
		{fakebedrock.Unavailable(), true},
		{fakebedrock.InternalError(), true},
		{fakebedrock.Step{Error: fakebedrock.ErrModelNotReady}, true},
		{fakebedrock.Step{Error: "BadGateway", Status: 502}, true},
		{fakebedrock.Step{Error: "ServiceQuotaExceededException", Status: 400}, true},
		{fakebedrock.AccessDenied(), false},
		{fakebedrock.Step{Error: fakebedrock.ErrValidation, Message: "Malformed input request."}, false},
		{fakebedrock.Step{Error: fakebedrock.ErrResourceNotFound, Message: "Model not found."}, false},
		{fakebedrock.ToolChoiceRefused(), false},
	} {
		s, url := standIn(t)
		m, o := newModel(url, bedrock.WithMaxAttempts(2))
		s.Script(tt.step, tt.step)
		_, err := m.Extract(context.Background(), request(anaTranscript))
		if err == nil {
			t.Fatalf("%+v: no error", tt.step)
		}
		if got := bedrock.Retryable(err); got != tt.want {
			t.Errorf("%+v: Retryable(%v) = %v, want %v", tt.step, err, got, tt.want)
		}
		if want := map[bool]int{true: 2, false: 1}[tt.want]; o.last(t).Attempts != want {
			t.Errorf("%+v: %d attempts, want %d", tt.step, o.last(t).Attempts, want)
		}
	}
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("x: %w", memory.ErrMalformedAnswer), false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{fmt.Errorf("x: %w", context.Canceled), false},
		{&bedrock.AttemptTimeoutError{Err: errors.New("slow")}, true},
		{&smithy.GenericAPIError{Code: "SomethingNew", Fault: smithy.FaultServer}, true},
		{&smithy.GenericAPIError{Code: "SomethingNew", Fault: smithy.FaultClient}, false},
		{errors.New("memory: no model configured"), false},
	} {
		if got := bedrock.Retryable(tt.err); got != tt.want {
			t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
