// Package fakebedrock is a stand-in for Amazon Bedrock's Converse API that the
// local stack and the tests point the real bedrockruntime client at.
//
// It speaks the Converse wire protocol: POST /model/{url-escaped model
// ID}/converse with a JSON request, a JSON answer with
// output.message.content, stopReason, usage and metrics, and errors as an
// HTTP status, an X-Amzn-Errortype header and a {"message"} body. By
// default it answers with a deterministic rule-based extraction of the user
// turns (see [RuleOperations]), or, for an import call (the MEMORY_IMPORT
// prompt, see [IsImportPrompt]), a rule-based reading of the pasted memory
// list (see [ImportOperations]): a call of the tool the request forces, or,
// for a request without toolConfig, a JSON text {"operations":[…]}.
//
// Scripted steps, queued through [Server.Script] or POST /_control/script,
// replace the default answer one call at a time: faults (throttling, 5xx,
// access denied, a refused tool choice), slow answers, malformed tool
// input, other stop reasons and explicit operations. POST /_control/reset
// clears the script and the calls; GET /_control/calls reports the calls;
// POST /_control/refuse-tool-choice {"modelIds":[…]} makes those models
// refuse a forced tool choice, as some Bedrock models do.
// It also answers the control plane's GetFoundationModel,
// ListFoundationModels and GetInferenceProfile from a catalogue that
// [Server.AddModel] and [Server.AddProfile] fill (control.go).
// The stand-in records sizes and model IDs, never the text of a request.
package fakebedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Step is one scripted answer, used by the next call instead of the
// default one. The zero Step is the default rule-based answer.
type Step struct {
	// DelayMS delays the answer (or the error) by this many milliseconds,
	// or until the client gives up.
	DelayMS int `json:"delayMs,omitempty"`

	// Error, when not empty, is the error type of the answer, such as
	// ThrottlingException; Status is its HTTP status (by default the one
	// Bedrock uses for that type) and Message its message.
	Error   string `json:"error,omitempty"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message,omitempty"`

	// Operations, when not nil, are the operations of the answer instead
	// of the rule-based ones; an empty list is an answer with none.
	Operations []Operation `json:"operations,omitempty"`
	// Input, when not nil, is the tool input verbatim (or the text of the
	// answer when the request has no toolConfig): any JSON value, which
	// lets a test send input that does not match the tool's schema.
	Input json.RawMessage `json:"input,omitempty"`
	// ToolName, when not empty, replaces the name of the called tool.
	ToolName string `json:"toolName,omitempty"`
	// NoToolUse leaves the tool call out of the answer.
	NoToolUse bool `json:"noToolUse,omitempty"`
	// Text, when not empty, is a text block put before the tool call; when
	// the request has no toolConfig it is the whole answer.
	Text string `json:"text,omitempty"`
	// StopReason replaces the stop reason: by default tool_use when the
	// answer calls a tool and end_turn otherwise, or max_tokens, without
	// the answer's content, when the answer (at 4 bytes a token) is longer
	// than the request's maxTokens, as Bedrock stops a model there.
	StopReason string `json:"stopReason,omitempty"`
	// Usage, when not nil, replaces the computed token usage.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is the token usage of an answer, as the Converse API reports it.
type Usage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	TotalTokens           int `json:"totalTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens,omitempty"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens,omitempty"`
}

// Error types of the Converse API that steps use.
const (
	ErrThrottling         = "ThrottlingException"
	ErrServiceUnavailable = "ServiceUnavailableException"
	ErrInternalServer     = "InternalServerException"
	ErrModelNotReady      = "ModelNotReadyException"
	ErrModelTimeout       = "ModelTimeoutException"
	ErrAccessDenied       = "AccessDeniedException"
	ErrValidation         = "ValidationException"
	ErrResourceNotFound   = "ResourceNotFoundException"
)

// statusOf is the HTTP status Bedrock answers each error type with.
var statusOf = map[string]int{
	ErrThrottling:         http.StatusTooManyRequests,
	ErrServiceUnavailable: http.StatusServiceUnavailable,
	ErrInternalServer:     http.StatusInternalServerError,
	ErrModelNotReady:      http.StatusTooManyRequests,
	ErrModelTimeout:       http.StatusRequestTimeout,
	ErrAccessDenied:       http.StatusForbidden,
	ErrValidation:         http.StatusBadRequest,
	ErrResourceNotFound:   http.StatusNotFound,
}

// Throttle returns a step answering 429 ThrottlingException.
func Throttle() Step {
	return Step{Error: ErrThrottling, Message: "Too many requests, please wait before trying again."}
}

// Unavailable returns a step answering 503 ServiceUnavailableException.
func Unavailable() Step {
	return Step{Error: ErrServiceUnavailable, Message: "Service unavailable."}
}

// InternalError returns a step answering 500 InternalServerException.
func InternalError() Step {
	return Step{Error: ErrInternalServer, Message: "Internal server error."}
}

// AccessDenied returns a step answering 403 AccessDeniedException.
func AccessDenied() Step {
	return Step{Error: ErrAccessDenied, Message: "You don't have access to the model with the specified model ID."}
}

// ToolChoiceRefused returns a step answering the 400 ValidationException of
// a model that does not support a forced tool choice.
func ToolChoiceRefused() Step {
	return Step{Error: ErrValidation, Message: "This model doesn't support the toolConfig.toolChoice.tool field. Remove toolConfig.toolChoice.tool and try again."}
}

// Slow returns a step that gives the default answer after d.
func Slow(d time.Duration) Step { return Step{DelayMS: int(d / time.Millisecond)} }

// Answer returns a step answering with ops.
func Answer(ops ...Operation) Step {
	if ops == nil {
		ops = []Operation{}
	}
	return Step{Operations: ops}
}

// Call is what the stand-in recorded of one call: sizes and IDs, never
// text.
type Call struct {
	ModelID string `json:"modelId"`
	// At is when the call came; Done when it was answered (after any
	// scripted delay).
	At            time.Time `json:"at"`
	Done          time.Time `json:"done"`
	RequestBytes  int       `json:"requestBytes"`
	ResponseBytes int       `json:"responseBytes"`
	Status        int       `json:"status"`
	// ErrorType is the error type answered, "" on success.
	ErrorType string `json:"errorType,omitempty"`
	// Tool is the name of the forced tool, "" without toolConfig.
	Tool string `json:"tool,omitempty"`
	// MaxTokens and Temperature are the request's inference settings
	// (-1 when absent).
	MaxTokens   int     `json:"maxTokens"`
	Temperature float64 `json:"temperature"`
	// Scripted says a scripted step answered.
	Scripted bool `json:"scripted"`
}

// maxCalls bounds the calls kept for [Server.Calls].
const maxCalls = 200

// Server is the stand-in. Its zero value is not usable: make one with New
// or Start. It is safe for concurrent use.
type Server struct {
	mu     sync.Mutex
	script []Step
	refuse map[string]bool
	calls  []Call
	count  int
	active int
	nextID int
	// models and profiles are the control plane's catalogue (control.go):
	// model ID to provider, profile ID to its models.
	models   map[string]string
	profiles map[string][]string

	srv *http.Server
	url string
}

// New returns a stand-in that is not listening: serve its Handler, for
// instance with httptest.NewServer.
func New() *Server { return &Server{} }

// Start returns a stand-in serving on addr, which must be a 127.0.0.1
// address ("" or "127.0.0.1:0" picks a free port). Close stops it.
func Start(addr string) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("converse: bad address %q: %w", addr, err)
	}
	if host != "127.0.0.1" {
		return nil, fmt.Errorf("converse: the stand-in serves on 127.0.0.1 only, not %q", host)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("converse: listen: %w", err)
	}
	s := New()
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed after Close.
	return s, nil
}

// URL returns the base URL of a started stand-in, http://127.0.0.1:PORT,
// for the client's BaseEndpoint; "" for one made with New.
func (s *Server) URL() string { return s.url }

// Close stops a started stand-in and its pending answers.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Handler returns the stand-in as an http.Handler.
func (s *Server) Handler() http.Handler { return s }

// Script queues steps: each of the next calls takes the first step left.
func (s *Server) Script(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
}

// RefuseToolChoice makes the stand-in answer every request for one of
// modelIDs that forces a tool choice with the ValidationException of a
// model without that feature, as some Bedrock models do, until Reset. It
// lets the local stack show the JSON output mode.
func (s *Server) RefuseToolChoice(modelIDs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse == nil {
		s.refuse = make(map[string]bool)
	}
	for _, id := range modelIDs {
		s.refuse[id] = true
	}
}

func (s *Server) refuses(modelID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refuse[modelID]
}

// Pending returns the number of scripted steps not used yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Reset clears the script, the recorded calls, the models set by
// RefuseToolChoice and the control plane's catalogue (AddModel,
// AddProfile).
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.calls, s.count, s.refuse, s.models, s.profiles = nil, nil, 0, nil, nil, nil
}

// Calls returns the number of model calls since the last reset and the
// most recent ones (at most 200), oldest first.
func (s *Server) Calls() (int, []Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count, append([]Call(nil), s.calls...)
}

// Active returns the number of calls being answered now, a scripted delay
// included.
func (s *Server) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// ServeHTTP serves the Converse route, the control-plane reads of
// control.go and the control endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	if s.control(w, r, p) {
		return
	}
	switch {
	case strings.HasPrefix(p, "/model/") && strings.HasSuffix(p, "/converse"):
		if r.Method != http.MethodPost {
			writeError(w, http.StatusMethodNotAllowed, "UnknownOperationException", "use POST")
			return
		}
		id, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(p, "/model/"), "/converse"))
		if err != nil || id == "" || strings.Contains(id, "/converse") {
			writeError(w, http.StatusBadRequest, ErrValidation, "invalid model identifier")
			return
		}
		s.converse(w, r, id)
	case p == "/_control/script" && r.Method == http.MethodPost:
		var steps []Step
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&steps); err != nil {
			http.Error(w, "the body must be a JSON list of steps: "+err.Error(), http.StatusBadRequest)
			return
		}
		s.Script(steps...)
		writeJSON(w, http.StatusOK, map[string]int{"pending": s.Pending()})
	case p == "/_control/refuse-tool-choice" && r.Method == http.MethodPost:
		var body struct {
			ModelIDs []string `json:"modelIds"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil || len(body.ModelIDs) == 0 {
			http.Error(w, `the body must be {"modelIds":["…"]}`, http.StatusBadRequest)
			return
		}
		s.RefuseToolChoice(body.ModelIDs...)
		w.WriteHeader(http.StatusNoContent)
	case p == "/_control/reset" && r.Method == http.MethodPost:
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	case p == "/_control/calls" && r.Method == http.MethodGet:
		n, calls := s.Calls()
		writeJSON(w, http.StatusOK, map[string]any{"count": n, "calls": calls, "pending": s.Pending()})
	default:
		writeError(w, http.StatusNotFound, "UnknownOperationException", "no such route")
	}
}

// request is the part of a Converse request the stand-in reads.
type request struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content []contentInBody `json:"content"`
	} `json:"messages"`
	System          []contentInBody `json:"system"`
	InferenceConfig *struct {
		MaxTokens   *int     `json:"maxTokens"`
		Temperature *float64 `json:"temperature"`
	} `json:"inferenceConfig"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec *struct {
				Name        string `json:"name"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice *struct {
			Tool *struct {
				Name string `json:"name"`
			} `json:"tool"`
			Any  *struct{} `json:"any"`
			Auto *struct{} `json:"auto"`
		} `json:"toolChoice"`
	} `json:"toolConfig"`
}

type contentInBody struct {
	Text *string `json:"text"`
}

// converse answers one Converse request: a ValidationException for a
// request Bedrock refuses, the chat gateway's answer, or the next step of
// the script (the rule-based answer when there is none). Every request is
// recorded once.
func (s *Server) converse(w http.ResponseWriter, r *http.Request, modelID string) {
	start := time.Now()
	s.track(+1)
	defer s.track(-1)
	body, err := readAll(r, 8<<20)
	call := Call{ModelID: modelID, At: start.UTC(), RequestBytes: len(body), MaxTokens: -1, Temperature: -1}
	defer func() { s.record(call) }()
	req, msg := parseRequest(body, err)
	if msg != "" {
		call.fail(w, http.StatusBadRequest, ErrValidation, msg)
		return
	}
	call.MaxTokens, call.Temperature = req.inference()
	call.Tool = forcedTool(&req)
	if tc := req.ToolConfig; tc != nil && tc.ToolChoice != nil && tc.ToolChoice.Tool != nil && s.refuses(modelID) {
		refused := ToolChoiceRefused()
		call.fail(w, http.StatusBadRequest, refused.Error, refused.Message)
		return
	}
	// A chat gateway's request (see chat.go) takes no scripted step.
	if ans, ok := s.chatAnswer(body); ok {
		call.reply(w, ans)
		return
	}
	step, scripted := s.next()
	call.Scripted = scripted
	if !sleep(r.Context(), time.Duration(step.DelayMS)*time.Millisecond) {
		call.Status, call.ErrorType = 499, "ClientClosedRequest"
		return
	}
	if step.Error != "" {
		call.fail(w, step.status(), step.Error, step.Message)
		return
	}
	call.reply(w, s.answer(&req, step, call.Tool, body, time.Since(start)))
}

// track adds d to the count of requests being answered.
func (s *Server) track(d int) {
	s.mu.Lock()
	s.active += d
	s.mu.Unlock()
}

// parseRequest decodes a Converse request body read with err, and returns
// the message of the ValidationException Bedrock answers it with, "" when
// it is valid.
func parseRequest(body []byte, err error) (request, string) {
	var req request
	switch {
	case err != nil:
		return req, err.Error()
	case json.Unmarshal(body, &req) != nil:
		return req, "The request body is not valid JSON."
	}
	return req, invalid(&req)
}

// inference returns the request's maxTokens and temperature, -1 for each
// it does not set.
func (req *request) inference() (maxTokens int, temperature float64) {
	maxTokens, temperature = -1, -1
	if ic := req.InferenceConfig; ic != nil {
		if ic.MaxTokens != nil {
			maxTokens = *ic.MaxTokens
		}
		if ic.Temperature != nil {
			temperature = *ic.Temperature
		}
	}
	return maxTokens, temperature
}

// sleep waits d, and reports false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// status returns the HTTP status of the step's error: its own, or the one
// Bedrock answers the error type with, or 400.
func (st Step) status() int {
	if st.Status != 0 {
		return st.Status
	}
	if status := statusOf[st.Error]; status != 0 {
		return status
	}
	return http.StatusBadRequest
}

// fail writes the Converse error of the call and records its status, type
// and size in c.
func (c *Call) fail(w http.ResponseWriter, status int, errType, msg string) {
	c.Status, c.ErrorType = status, errType
	c.ResponseBytes = writeError(w, status, errType, msg)
}

// reply writes the answer of the call and records its status and size in
// c.
func (c *Call) reply(w http.ResponseWriter, ans any) {
	c.Status = http.StatusOK
	c.ResponseBytes = writeJSON(w, http.StatusOK, ans)
}

// invalid returns the message of the ValidationException Bedrock answers
// req with, "" when req is valid.
func invalid(req *request) string {
	if len(req.Messages) == 0 {
		return "The messages field is required."
	}
	if req.Messages[0].Role != "user" {
		return "A conversation must start with a user message. Try again with a conversation that starts with a user message."
	}
	if ic := req.InferenceConfig; ic != nil && ic.MaxTokens != nil && *ic.MaxTokens < 1 {
		return "The maximum tokens you requested must be at least 1."
	}
	tc := req.ToolConfig
	if tc == nil {
		return ""
	}
	if len(tc.Tools) == 0 {
		return "The toolConfig field must be defined when using toolUse and toolResult content blocks."
	}
	names := map[string]bool{}
	for _, t := range tc.Tools {
		if t.ToolSpec == nil || t.ToolSpec.Name == "" || len(t.ToolSpec.InputSchema.JSON) == 0 {
			return "Each tool must have a toolSpec with a name and an inputSchema."
		}
		var schema map[string]any
		if json.Unmarshal(t.ToolSpec.InputSchema.JSON, &schema) != nil {
			return "The tool input schema must be a JSON object."
		}
		names[t.ToolSpec.Name] = true
	}
	if ch := tc.ToolChoice; ch != nil && ch.Tool != nil && !names[ch.Tool.Name] {
		return "The tool named in toolConfig.toolChoice.tool is not in toolConfig.tools."
	}
	return ""
}

// forcedTool returns the tool the answer calls: the one toolChoice names,
// or else the first; "" when the request has no toolConfig.
func forcedTool(req *request) string {
	tc := req.ToolConfig
	if tc == nil || len(tc.Tools) == 0 {
		return ""
	}
	if tc.ToolChoice != nil && tc.ToolChoice.Tool != nil {
		return tc.ToolChoice.Tool.Name
	}
	return tc.Tools[0].ToolSpec.Name
}

func (s *Server) next() (Step, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		return Step{}, false
	}
	st := s.script[0]
	s.script = s.script[1:]
	return st, true
}

func (s *Server) record(c Call) {
	c.Done = time.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.calls = append(s.calls, c)
	if len(s.calls) > maxCalls {
		s.calls = s.calls[len(s.calls)-maxCalls:]
	}
}

// answer builds the Converse answer of a successful step.
func (s *Server) answer(req *request, step Step, tool string, body []byte, took time.Duration) map[string]any {
	input := step.Input
	if input == nil {
		ops := step.Operations
		if ops == nil {
			if system := systemText(req); IsImportPrompt(system) {
				ops = ImportOperations(userText(req))
			} else {
				ops = RuleOperations(userText(req), TodayOf(system, time.Now()))
			}
		}
		input, _ = json.Marshal(map[string]any{"operations": ops}) // Plain structs always marshal.
	}
	var content []map[string]any
	stop := "end_turn"
	if tool == "" {
		text := step.Text
		if text == "" && !step.NoToolUse {
			text = string(input)
		}
		content = append(content, map[string]any{"text": text})
	} else {
		if step.Text != "" {
			content = append(content, map[string]any{"text": step.Text})
		}
		if !step.NoToolUse {
			name := tool
			if step.ToolName != "" {
				name = step.ToolName
			}
			s.mu.Lock()
			s.nextID++
			id := "tooluse_standin" + strconv.Itoa(s.nextID)
			s.mu.Unlock()
			content = append(content, map[string]any{"toolUse": map[string]any{
				"toolUseId": id, "name": name, "input": input,
			}})
			stop = "tool_use"
		}
	}
	if step.StopReason != "" {
		stop = step.StopReason
	}
	if content == nil {
		content = []map[string]any{}
	}
	out, _ := json.Marshal(content) // Maps of strings and raw JSON always marshal.
	usage := Usage{InputTokens: tokens(len(body)), OutputTokens: tokens(len(out))}
	if step.Usage != nil {
		usage = *step.Usage
	}
	if limit, _ := req.inference(); limit > 0 && step.StopReason == "" && usage.OutputTokens > limit {
		// Bedrock stops the model at maxTokens: the answer is cut there,
		// its tool call unfinished.
		content, stop, usage.OutputTokens = []map[string]any{}, "max_tokens", limit
	}
	usage.TotalTokens = usage.InputTokens + usage.OutputTokens
	return map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage":      usage,
		"metrics":    map[string]any{"latencyMs": took.Milliseconds()},
	}
}

// BytesPerToken is the bytes the stand-in counts as one token.
const BytesPerToken = 4

// tokens is the stand-in's deterministic token count: a token per
// BytesPerToken bytes, at least one.
func tokens(n int) int { return n/BytesPerToken + 1 }

// userText joins the text blocks of the request's user messages.
func userText(req *request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		for _, c := range m.Content {
			if c.Text != nil {
				if b.Len() > 0 {
					b.WriteString("\n\n")
				}
				b.WriteString(*c.Text)
			}
		}
	}
	return b.String()
}

// systemText joins the text blocks of the request's system prompt.
func systemText(req *request) string {
	var b strings.Builder
	for _, c := range req.System {
		if c.Text != nil {
			b.WriteString(*c.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func readAll(r *http.Request, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("the request body could not be read after %d bytes", n)
	}
	return buf.Bytes(), nil
}

// writeError writes a Converse error: the status, the X-Amzn-Errortype
// header and a {"message"} body. It returns the body's size.
func writeError(w http.ResponseWriter, status int, errType, msg string) int {
	w.Header().Set("X-Amzn-Errortype", errType)
	return writeJSON(w, status, map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"message":"the stand-in could not encode its answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", "standin-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // The client may be gone; nothing to do.
	return len(b)
}
