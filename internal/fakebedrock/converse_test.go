package fakebedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
)

const (
	modelID  = "us.amazon.nova-micro-v1:0"
	toolName = "record_memory_operations"
	schema   = `{"type":"object","properties":{"operations":{"type":"array"}},"required":["operations"]}`
)

// start starts a stand-in for one test and returns it with the real
// client pointed at it; the client does not retry, so that every call is
// seen.
func start(t *testing.T) (*fakebedrock.Server, *bedrockruntime.Client) {
	t.Helper()
	s, err := fakebedrock.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	c := bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.URL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      aws.NopRetryer{},
	})
	return s, c
}

// input returns a Converse request with transcript as the user message;
// withTool adds the forced operations tool.
func input(transcript string, withTool bool) *bedrockruntime.ConverseInput {
	var sch map[string]any
	if err := json.Unmarshal([]byte(schema), &sch); err != nil {
		panic(err)
	}
	in := &bedrockruntime.ConverseInput{
		ModelId: aws.String(modelID),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Keep facts."}},
		Messages: []types.Message{{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: transcript}}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(1024), Temperature: aws.Float32(0)},
	}
	if withTool {
		in.ToolConfig = &types.ToolConfiguration{
			Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
				Name: aws.String(toolName), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(sch)},
			}}},
			ToolChoice: &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(toolName)}},
		}
	}
	return in
}

// toolUse returns the one tool use of an answer and its input as JSON.
func toolUse(t *testing.T, out *bedrockruntime.ConverseOutput) (types.ToolUseBlock, string) {
	t.Helper()
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		t.Fatalf("output = %T, want a message", out.Output)
	}
	for _, b := range msg.Value.Content {
		if tu, ok := b.(*types.ContentBlockMemberToolUse); ok {
			raw, err := tu.Value.Input.MarshalSmithyDocument()
			if err != nil {
				t.Fatalf("tool input: %v", err)
			}
			return tu.Value, string(raw)
		}
	}
	t.Fatalf("no tool use in %+v", msg.Value.Content)
	return types.ToolUseBlock{}, ""
}

func text(t *testing.T, out *bedrockruntime.ConverseOutput) string {
	t.Helper()
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		t.Fatalf("output = %T, want a message", out.Output)
	}
	var b strings.Builder
	for _, c := range msg.Value.Content {
		if tb, ok := c.(*types.ContentBlockMemberText); ok {
			b.WriteString(tb.Value)
		}
	}
	return b.String()
}

func TestDefaultAnswerIsAToolCall(t *testing.T) {
	s, c := start(t)
	out, err := c.Converse(context.Background(), input("User: Hi, I'm Ana from Lisbon, answer in Portuguese\n\nAssistant: Olá Ana!", true))
	if err != nil {
		t.Fatalf("Converse: %v", err)
	}
	if out.StopReason != types.StopReasonToolUse {
		t.Errorf("stop reason = %s, want tool_use", out.StopReason)
	}
	use, raw := toolUse(t, out)
	if aws.ToString(use.Name) != toolName || aws.ToString(use.ToolUseId) == "" {
		t.Errorf("tool use = %s (id %q), want %s with an ID", aws.ToString(use.Name), aws.ToString(use.ToolUseId), toolName)
	}
	want := `{"operations":[{"evidence":"I'm Ana from Lisbon","key":"name","op":"SET","value":"Ana"},` +
		`{"evidence":"I'm Ana from Lisbon","key":"home_city","op":"SET","value":"Lisbon"},` +
		`{"evidence":"answer in Portuguese","key":"preferred_language","op":"SET","value":"Portuguese"}]}`
	if raw != want {
		t.Errorf("tool input = %s, want %s", raw, want)
	}
	n, calls := s.Calls()
	if n != 1 || len(calls) != 1 {
		t.Fatalf("calls = %d %+v, want 1", n, calls)
	}
	cl := calls[0]
	if cl.ModelID != modelID || cl.Tool != toolName || cl.Status != 200 || cl.MaxTokens != 1024 || cl.Temperature != 0 || cl.Scripted {
		t.Errorf("call = %+v", cl)
	}
	u := out.Usage
	if aws.ToInt32(u.InputTokens) != int32(cl.RequestBytes/4+1) || aws.ToInt32(u.TotalTokens) != aws.ToInt32(u.InputTokens)+aws.ToInt32(u.OutputTokens) || aws.ToInt32(u.OutputTokens) < 10 {
		t.Errorf("usage = in %d out %d total %d, want in = %d bytes/4+1 and total = in+out",
			aws.ToInt32(u.InputTokens), aws.ToInt32(u.OutputTokens), aws.ToInt32(u.TotalTokens), cl.RequestBytes)
	}
	if out.Metrics == nil || out.Metrics.LatencyMs == nil {
		t.Errorf("metrics = %+v, want latencyMs", out.Metrics)
	}
}

func TestDefaultAnswerWithoutToolConfigIsJSONText(t *testing.T) {
	s, c := start(t)
	out, err := c.Converse(context.Background(), input("User: I work as a nurse", false))
	if err != nil {
		t.Fatalf("Converse: %v", err)
	}
	if out.StopReason != types.StopReasonEndTurn {
		t.Errorf("stop reason = %s, want end_turn", out.StopReason)
	}
	if got, want := text(t, out), `{"operations":[{"op":"SET","key":"role","value":"nurse","evidence":"I work as a nurse"}]}`; got != want {
		t.Errorf("text = %s, want %s", got, want)
	}
	if _, calls := s.Calls(); calls[0].Tool != "" {
		t.Errorf("call tool = %q, want none", calls[0].Tool)
	}
}

func TestScriptedSteps(t *testing.T) {
	s, c := start(t)
	s.Script(
		fakebedrock.Answer(fakebedrock.Operation{Op: "SET", Key: "time_zone", Value: "Europe/Lisbon"}),
		fakebedrock.Answer(),
		fakebedrock.Step{Input: json.RawMessage(`"not an object"`)},
		fakebedrock.Step{ToolName: "other_tool", Usage: &fakebedrock.Usage{InputTokens: 7, OutputTokens: 3, CacheReadInputTokens: 100}},
		fakebedrock.Step{StopReason: "max_tokens"},
		fakebedrock.Step{NoToolUse: true, Text: "Hello!"},
	)
	if s.Pending() != 6 {
		t.Fatalf("pending = %d, want 6", s.Pending())
	}
	ctx := context.Background()
	call := func() *bedrockruntime.ConverseOutput {
		t.Helper()
		out, err := c.Converse(ctx, input("User: I'm Ana", true))
		if err != nil {
			t.Fatalf("Converse: %v", err)
		}
		return out
	}

	if _, raw := toolUse(t, call()); raw != `{"operations":[{"key":"time_zone","op":"SET","value":"Europe/Lisbon"}]}` {
		t.Errorf("step 1 input = %s", raw)
	}
	if _, raw := toolUse(t, call()); raw != `{"operations":[]}` {
		t.Errorf("step 2 input = %s", raw)
	}
	if _, raw := toolUse(t, call()); raw != `"not an object"` {
		t.Errorf("step 3 input = %s", raw)
	}
	out := call()
	if use, _ := toolUse(t, out); aws.ToString(use.Name) != "other_tool" {
		t.Errorf("step 4 tool = %s", aws.ToString(use.Name))
	}
	if u := out.Usage; aws.ToInt32(u.InputTokens) != 7 || aws.ToInt32(u.OutputTokens) != 3 || aws.ToInt32(u.TotalTokens) != 10 || aws.ToInt32(u.CacheReadInputTokens) != 100 {
		t.Errorf("step 4 usage = %+v", u)
	}
	if out := call(); out.StopReason != types.StopReasonMaxTokens {
		t.Errorf("step 5 stop reason = %s", out.StopReason)
	}
	out = call()
	if out.StopReason != types.StopReasonEndTurn || text(t, out) != "Hello!" || len(out.Output.(*types.ConverseOutputMemberMessage).Value.Content) != 1 {
		t.Errorf("step 6 = %s %+v, want end_turn with the text only", out.StopReason, out.Output)
	}
	// The script is spent: the rules answer again.
	if _, raw := toolUse(t, call()); raw != `{"operations":[{"evidence":"I'm Ana","key":"name","op":"SET","value":"Ana"}]}` {
		t.Errorf("after the script, input = %s", raw)
	}
	n, calls := s.Calls()
	scripted := 0
	for _, c := range calls {
		if c.Scripted {
			scripted++
		}
	}
	if n != 7 || scripted != 6 || s.Pending() != 0 {
		t.Errorf("calls = %d (%d scripted), pending %d; want 7 (6), 0", n, scripted, s.Pending())
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		step   fakebedrock.Step
		code   string
		status int
	}{
		{fakebedrock.Throttle(), "ThrottlingException", 429},
		{fakebedrock.Unavailable(), "ServiceUnavailableException", 503},
		{fakebedrock.InternalError(), "InternalServerException", 500},
		{fakebedrock.AccessDenied(), "AccessDeniedException", 403},
		{fakebedrock.ToolChoiceRefused(), "ValidationException", 400},
		{fakebedrock.Step{Error: fakebedrock.ErrModelNotReady}, "ModelNotReadyException", 429},
		{fakebedrock.Step{Error: fakebedrock.ErrModelTimeout}, "ModelTimeoutException", 408},
		{fakebedrock.Step{Error: "BadGateway", Status: 502, Message: "bad gateway"}, "BadGateway", 502},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			s, c := start(t)
			s.Script(tt.step)
			_, err := c.Converse(context.Background(), input("User: I'm Ana", true))
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != tt.code {
				t.Fatalf("Converse error = %v, want %s", err, tt.code)
			}
			if tt.step.Message != "" && ae.ErrorMessage() != tt.step.Message {
				t.Errorf("message = %q, want %q", ae.ErrorMessage(), tt.step.Message)
			}
			var re *smithyhttp.ResponseError
			if !errors.As(err, &re) || re.HTTPStatusCode() != tt.status {
				t.Errorf("status = %v, want %d", err, tt.status)
			}
			if _, calls := s.Calls(); len(calls) != 1 || calls[0].ErrorType != tt.code || calls[0].Status != tt.status {
				t.Errorf("calls = %+v", calls)
			}
		})
	}
	// The SDK maps the modelled ones to their types.
	s, c := start(t)
	s.Script(fakebedrock.Throttle())
	_, err := c.Converse(context.Background(), input("User: hi", true))
	var te *types.ThrottlingException
	if !errors.As(err, &te) {
		t.Errorf("Converse error = %T %v, want *types.ThrottlingException", err, err)
	}
}

func TestSlowAnswer(t *testing.T) {
	s, c := start(t)
	s.Script(fakebedrock.Slow(150*time.Millisecond), fakebedrock.Slow(5*time.Second))
	begin := time.Now()
	if _, err := c.Converse(context.Background(), input("User: I'm Ana", true)); err != nil {
		t.Fatalf("Converse: %v", err)
	}
	if took := time.Since(begin); took < 150*time.Millisecond {
		t.Errorf("slow answer came after %v, want ≥ 150ms", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin = time.Now()
	_, err := c.Converse(ctx, input("User: I'm Ana", true))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Converse error = %v, want the deadline's", err)
	}
	if took := time.Since(begin); took > time.Second {
		t.Errorf("client gave up after %v", took)
	}
	// The stand-in stops waiting when the client goes away.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if n, calls := s.Calls(); n == 2 {
			if calls[1].Status != 499 {
				t.Errorf("abandoned call = %+v, want status 499", calls[1])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned call was not recorded within 2s")
		}
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		edit func(*bedrockruntime.ConverseInput)
	}{
		{"tool choice names no tool", func(in *bedrockruntime.ConverseInput) {
			in.ToolConfig.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("nope")}}
		}},
		{"conversation starts with the assistant", func(in *bedrockruntime.ConverseInput) {
			in.Messages[0].Role = types.ConversationRoleAssistant
		}},
		{"zero max tokens", func(in *bedrockruntime.ConverseInput) { in.InferenceConfig.MaxTokens = aws.Int32(0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := start(t)
			s.Script(fakebedrock.Answer()) // not used: validation comes first
			in := input("User: I'm Ana", true)
			tt.edit(in)
			_, err := c.Converse(context.Background(), in)
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" {
				t.Fatalf("Converse error = %v, want ValidationException", err)
			}
			if s.Pending() != 1 {
				t.Errorf("pending = %d, want the step kept", s.Pending())
			}
		})
	}
}

func TestControlEndpoint(t *testing.T) {
	s, c := start(t)
	post := func(path, body string) *http.Response {
		t.Helper()
		resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	scripted := `{"op":"SET","key":"home_city","value":"Paris","evidence":"the assistant's words","validUntil":"2026-12-04","category":"health"}`
	resp := post("/_control/script", `[{"error":"ThrottlingException"},{"operations":[{"op":"DELETE","key":"home_city"},`+scripted+`]},{"delayMs":1,"input":{"operations":[{"op":"X"}]}}]`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("script status = %d", resp.StatusCode)
	}
	var pending struct{ Pending int }
	if err := json.NewDecoder(resp.Body).Decode(&pending); err != nil || pending.Pending != 3 {
		t.Errorf("script answer = %+v, %v; want pending 3", pending, err)
	}
	if resp := post("/_control/script", `{"steps":[]}`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("script with an object: status %d, want 400", resp.StatusCode)
	}
	if resp := post("/_control/script", `[{"eror":"ThrottlingException"}]`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("script with an unknown field: status %d, want 400", resp.StatusCode)
	}

	ctx := context.Background()
	var te *types.ThrottlingException
	if _, err := c.Converse(ctx, input("User: I'm Ana", true)); !errors.As(err, &te) {
		t.Errorf("first call error = %v, want throttling", err)
	}
	out, err := c.Converse(ctx, input("User: I'm Ana", true))
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	// Scripted operations pass through as they are, new members and all,
	// even evidence that no user turn holds: the store is to refuse it.
	if _, raw := toolUse(t, out); raw != `{"operations":[{"key":"home_city","op":"DELETE"},`+
		`{"category":"health","evidence":"the assistant's words","key":"home_city","op":"SET","validUntil":"2026-12-04","value":"Paris"}]}` {
		t.Errorf("second call input = %s", raw)
	}
	out, err = c.Converse(ctx, input("User: I'm Ana", true))
	if err != nil {
		t.Fatalf("third call: %v", err)
	}
	if _, raw := toolUse(t, out); raw != `{"operations":[{"op":"X"}]}` {
		t.Errorf("third call input = %s", raw)
	}

	get, err := http.Get(s.URL() + "/_control/calls")
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	body, _ := io.ReadAll(get.Body)
	var report struct {
		Count   int
		Pending int
		Calls   []fakebedrock.Call
	}
	if err := json.Unmarshal(body, &report); err != nil {
		t.Fatalf("calls answer %s: %v", body, err)
	}
	if report.Count != 3 || len(report.Calls) != 3 || report.Pending != 0 || report.Calls[0].ErrorType != "ThrottlingException" || report.Calls[2].ModelID != modelID {
		t.Errorf("calls report = %+v", report)
	}
	if bytes.Contains(body, []byte("Ana")) || bytes.Contains(body, []byte("Paris")) {
		t.Errorf("calls report holds request text: %s", body)
	}

	if resp := post("/_control/reset", ""); resp.StatusCode != http.StatusNoContent {
		t.Errorf("reset status = %d, want 204", resp.StatusCode)
	}
	if n, calls := s.Calls(); n != 0 || len(calls) != 0 {
		t.Errorf("after reset: %d calls", n)
	}
}

func TestStartAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "localhost:0", "nonsense"} {
		if s, err := fakebedrock.Start(addr); err == nil {
			s.Close()
			t.Errorf("Start(%q) = nil error, want a refusal", addr)
		}
	}
	s, err := fakebedrock.Start("")
	if err != nil {
		t.Fatalf(`Start(""): %v`, err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || strings.HasSuffix(s.URL(), ":0") {
		t.Errorf("URL = %s, want a free 127.0.0.1 port", s.URL())
	}
}

func TestUnknownRoute(t *testing.T) {
	s, _ := start(t)
	resp, err := http.Get(s.URL() + "/model/x/invoke")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status = %d, want 404", resp.StatusCode)
	}
}

// withContext returns the transcript memory.ExtractionTranscript writes
// for context and new turns already transcribed.
func withContext(context, recent string) string {
	return memory.ContextHeading + "\n\n" + context + "\n\n" + memory.NewTurnsHeading + "\n\n" + recent
}

func TestWithContextIsTheStoresTranscript(t *testing.T) {
	got := withContext("Assistant: Shall I?", "User: yes")
	want := memory.ExtractionTranscript([]memory.Turn{{Role: memory.RoleAssistant, Text: "Shall I?"}},
		[]memory.Turn{{Role: memory.RoleUser, Text: "yes"}}, memory.DefaultContextChars, memory.DefaultTranscriptChars)
	if got != want {
		t.Errorf("withContext = %q, the store writes %q", got, want)
	}
}

// keysAndValues compares operations by op, key and value only; the rules'
// tests below hold the other members.
var keysAndValues = cmpopts.IgnoreFields(fakebedrock.Operation{}, "Evidence", "ValidUntil", "Category")

func TestRuleOperations(t *testing.T) {
	set := func(k, v string) fakebedrock.Operation { return fakebedrock.Operation{Op: "SET", Key: k, Value: v} }
	del := func(k string) fakebedrock.Operation { return fakebedrock.Operation{Op: "DELETE", Key: k} }
	tests := []struct {
		transcript string
		want       []fakebedrock.Operation
	}{
		{"User: I'm Ana", []fakebedrock.Operation{set("name", "Ana")}},
		{"User: my name is Ana", []fakebedrock.Operation{set("name", "Ana")}},
		{"User: Hi, I’m Ana from Lisbon, answer in Portuguese", []fakebedrock.Operation{set("name", "Ana"), set("home_city", "Lisbon"), set("preferred_language", "Portuguese")}},
		{"User: I live in Lisbon", []fakebedrock.Operation{set("home_city", "Lisbon")}},
		{"User: I'm from New York", []fakebedrock.Operation{set("home_city", "New York")}},
		{"User: I moved to Porto last week", []fakebedrock.Operation{set("home_city", "Porto")}},
		{"User: please reply in portuguese", []fakebedrock.Operation{set("preferred_language", "Portuguese")}},
		{"User: I speak Portuguese", []fakebedrock.Operation{set("preferred_language", "Portuguese")}},
		{"User: I work as a nurse", []fakebedrock.Operation{set("role", "nurse")}},
		{"User: I'm a software engineer at Acme", []fakebedrock.Operation{set("role", "software engineer")}},
		{"User: forget where I live", []fakebedrock.Operation{del("home_city")}},
		{"User: please forget my name", []fakebedrock.Operation{del("name")}},
		{"User: forget my language", []fakebedrock.Operation{del("preferred_language")}},
		{"User: I live in Lisbon\n\nAssistant: Nice!\n\nUser: Actually I moved to Porto", []fakebedrock.Operation{set("home_city", "Porto")}},
		{"User: I'm fine, thanks. I'm Portuguese", []fakebedrock.Operation{}},
		{"Assistant: I'm Claude from Lisbon, I live in Paris", []fakebedrock.Operation{}},
		{"User: what's the weather like?", []fakebedrock.Operation{}},
		{"User: reply in time please", []fakebedrock.Operation{}},
		{"I'm Ana", []fakebedrock.Operation{set("name", "Ana")}},
		{"", []fakebedrock.Operation{}},
		// A "yes" states what the assistant's question just before proposed.
		{"Assistant: Shall I keep answering in Portuguese from now on?\n\nUser: yes please", []fakebedrock.Operation{set("preferred_language", "Portuguese")}},
		{"Assistant: Shall I call you Ana?\n\nUser: Sure", []fakebedrock.Operation{set("name", "Ana")}},
		{"Assistant: Shall I keep answering in Portuguese?\n\nUser: no, English is fine", []fakebedrock.Operation{}},
		{"Assistant: I keep answering in Portuguese.\n\nUser: yes", []fakebedrock.Operation{}},
		{"Assistant: Shall I answer in Portuguese?\n\nUser: hmm\n\nUser: yes", []fakebedrock.Operation{}},
		// Context turns: read for the question a first new turn answers, never for facts.
		{withContext("User: I'm Ana from Lisbon\n\nAssistant: Shall I keep answering in Portuguese from now on?", "User: yes"),
			[]fakebedrock.Operation{set("preferred_language", "Portuguese")}},
		{withContext("User: I'm Ana from Lisbon, answer in Portuguese", "User: what's a good bakery?"), []fakebedrock.Operation{}},
		{withContext("Assistant: Shall I keep answering in Portuguese?\n\nUser: tell me more", "User: yes"), []fakebedrock.Operation{}},
		{withContext("Assistant: Shall I call you Ana?", "User: yes, and I live in Porto"),
			[]fakebedrock.Operation{set("name", "Ana"), set("home_city", "Porto")}},
	}
	for _, tt := range tests {
		got := fakebedrock.RuleOperations(tt.transcript, today)
		if diff := cmp.Diff(tt.want, got, keysAndValues); diff != "" {
			t.Errorf("RuleOperations(%q) (-want +got):\n%s", tt.transcript, diff)
		}
	}
}

func TestRefuseToolChoice(t *testing.T) {
	s, c := start(t)
	resp, err := http.Post(s.URL()+"/_control/refuse-tool-choice", "application/json", strings.NewReader(`{"modelIds":["`+modelID+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status = %d, want 204", resp.StatusCode)
	}
	ctx := context.Background()
	for range 2 {
		_, err := c.Converse(ctx, input("User: I'm Ana", true))
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" || !strings.Contains(ae.ErrorMessage(), "toolChoice") {
			t.Fatalf("forced tool choice: error %v, want the ValidationException about toolChoice", err)
		}
	}
	if _, err := c.Converse(ctx, input("User: I'm Ana", false)); err != nil {
		t.Errorf("without toolConfig: %v", err)
	}
	other := input("User: I'm Ana", true)
	other.ModelId = aws.String("anthropic.claude-3-haiku-20240307-v1:0")
	if _, err := c.Converse(ctx, other); err != nil {
		t.Errorf("another model: %v", err)
	}
	s.Reset()
	if _, err := c.Converse(ctx, input("User: I'm Ana", true)); err != nil {
		t.Errorf("after reset: %v", err)
	}
}

func TestActiveCallsAndDoneTimes(t *testing.T) {
	s, c := start(t)
	s.Script(fakebedrock.Slow(400 * time.Millisecond))
	done := make(chan error, 1)
	go func() {
		_, err := c.Converse(context.Background(), input("User: I'm Ana", true))
		done <- err
	}()
	for deadline := time.Now().Add(2 * time.Second); s.Active() != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Active = %d while a slow call is answered, want 1", s.Active())
		}
	}
	if n, _ := s.Calls(); n != 0 {
		t.Errorf("Calls = %d before the slow call is answered, want 0", n)
	}
	if err := <-done; err != nil {
		t.Fatalf("Converse: %v", err)
	}
	if a := s.Active(); a != 0 {
		t.Errorf("Active = %d after the answer, want 0", a)
	}
	_, calls := s.Calls()
	if len(calls) != 1 || calls[0].Done.Sub(calls[0].At) < 400*time.Millisecond {
		t.Errorf("calls = %+v, want one answered at least 400ms after it came", calls)
	}
}

// today is the day the rules' tests count end dates from: a Wednesday.
var today = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
