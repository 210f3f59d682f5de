// Package bedrock implements memory.Model, the cheap model of an
// extraction, over the Converse API of Amazon Bedrock Runtime.
//
// Start at [New]. The answer is structured by a forced tool call ([ToolFor]
// gives the tool per model family), or by a JSON text answer in
// [OutputJSON] mode for models that refuse a forced tool choice; either is
// decoded by memory.ParseOperations, and anything else is an error wrapping
// memory.ErrMalformedAnswer. Calls go through the SDK's standard retryer,
// with no retry that would outlast the caller's deadline ([Retryable] is
// the one classification of errors). The Model never logs the prompt or
// the answer. docs/extractor.md ("Outcomes and retry policy") says why
// it is built so.
package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/usermemory/usermemory/memory"
)

// API is the part of *bedrockruntime.Client that a Model calls.
type API interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// OutputMode says how the model is made to answer with structure.
type OutputMode string

// Output modes.
const (
	// OutputTool forces a call of the operations tool (the default).
	OutputTool OutputMode = "tool"
	// OutputJSON asks for a JSON text answer, for models that refuse a
	// forced tool choice.
	OutputJSON OutputMode = "json"
)

// ParseOutputMode returns the mode named s ("tool" or "json"), or an error.
func ParseOutputMode(s string) (OutputMode, error) {
	switch m := OutputMode(strings.ToLower(strings.TrimSpace(s))); m {
	case OutputTool, OutputJSON:
		return m, nil
	}
	return "", fmt.Errorf("bedrock: output mode must be tool or json, not %q", s)
}

// Defaults of a Model.
const (
	// DefaultMaxAttempts is the number of calls one Extract makes at most:
	// the first and three retries.
	DefaultMaxAttempts = 4
	// DefaultBaseDelay and DefaultMaxDelay bound the backoff before a
	// retry, the SDK's: a random wait up to min(DefaultMaxDelay,
	// base·2^(n-1)) after attempt n, where base is DefaultBaseDelay, or
	// 1s after a throttling error.
	DefaultBaseDelay = 200 * time.Millisecond
	DefaultMaxDelay  = 4 * time.Second
	// DefaultAttemptTimeout bounds one attempt: a hung call is abandoned
	// and retried, time permitting. An extraction answer of at most
	// MaxTokensUpperBound tokens takes well under it.
	DefaultAttemptTimeout = 20 * time.Second
	// DefaultDeadlineMargin is the time left before the caller's deadline
	// under which no retry starts: a retry needs time to be answered.
	DefaultDeadlineMargin = 1 * time.Second
	// FirstMaxTokens is the most maxTokens of a call's first request.
	// Bedrock reserves input + maxTokens of the tokens-per-minute quota
	// while a request runs, and an answer uses a few dozen tokens per
	// operation: asking first for this rather than for what the largest
	// answer needs lets the same quota admit more calls (docs/scale.md).
	FirstMaxTokens = 1024
	// MaxTokensUpperBound bounds the maxTokens asked for again when an answer
	// stopped at FirstMaxTokens (stop reason max_tokens): [MaxTokensFor]
	// the largest answer the request's caps admit. 4,096 is an output
	// every supported family accepts; memory.DefaultMaxOperations is the
	// most operations whose largest answer fits it.
	MaxTokensUpperBound = 4096
	// AnswerTokens is what an answer takes besides its tool input: the
	// tool call's frame, a short text a model may write before the call.
	AnswerTokens = 256
	// BytesPerToken and TokenMarginPercent turn the largest answer's
	// length into tokens: 4 bytes a token (the measure docs/extractor.md
	// and scripts/cost use; the stand-in counts so), plus 10 %. Text in a
	// script with more tokens a byte (CJK, Cyrillic) needs more: such an
	// answer at the caps stops at max_tokens and is refused as bad_answer.
	BytesPerToken      = 4
	TokenMarginPercent = 10
)

// ErrToolChoiceUnsupported is wrapped by the error of a call whose model
// refused the forced tool choice: set MODEL_OUTPUT_MODE=json (OutputJSON).
var ErrToolChoiceUnsupported = errors.New("bedrock: the model does not support a forced tool choice")

// ErrModelNotAllowed is wrapped by the error of a request that names a
// model outside the allow-list of [WithAllowedModels]; no call is made.
var ErrModelNotAllowed = errors.New("bedrock: the model is not allowed")

// Call describes one Extract for metrics and tests: IDs, counts and
// durations, never text.
type Call struct {
	ModelID string
	Mode    OutputMode
	// Attempts is the number of Converse calls made (0 when none was
	// needed); Retried lists the error code of each failed attempt that
	// was retried, such as ThrottlingException or "timeout".
	Attempts int
	Retried  []string
	// Duration is the time Extract took, backoff included.
	Duration time.Duration
	// StopReason is the last answer's stop reason, "" without an answer.
	StopReason string
	Usage      memory.Usage
	// Err is what Extract returned.
	Err error
}

// Model is the cheap model over Bedrock Converse. It is safe for
// concurrent use.
type Model struct {
	client         API
	mode           OutputMode
	maxTokens      int
	maxAttempts    int
	baseDelay      time.Duration
	maxDelay       time.Duration
	attemptTimeout time.Duration
	margin         time.Duration
	allowed        []string
	observe        func(Call)
	retryer        *awsretry.Standard
}

var _ memory.Model = (*Model)(nil)

// Option configures a Model.
type Option func(*Model)

// WithOutputMode sets how the model is made to answer; the default is
// OutputTool.
func WithOutputMode(m OutputMode) Option { return func(x *Model) { x.mode = m } }

// WithMaxTokens fixes maxTokens; by default a call asks for
// FirstMaxTokens, and once more for [MaxTokensFor] when the answer stopped
// there.
func WithMaxTokens(n int) Option { return func(x *Model) { x.maxTokens = n } }

// WithMaxAttempts sets the most Converse calls one Extract makes, first
// call included (at least 1); the default is DefaultMaxAttempts.
func WithMaxAttempts(n int) Option { return func(x *Model) { x.maxAttempts = max(n, 1) } }

// WithBackoff sets the base and the cap of the backoff between attempts;
// after a throttling error the SDK's base is 1s, still within the cap.
func WithBackoff(base, maxDelay time.Duration) Option {
	return func(x *Model) { x.baseDelay, x.maxDelay = base, maxDelay }
}

// WithAttemptTimeout bounds each attempt: one that takes longer is
// abandoned and retried, time permitting. The default is
// DefaultAttemptTimeout; zero leaves only the caller's deadline. Either
// way an attempt ends a little before the caller's deadline (100ms, or a tenth of the time left when less), so
// that Extract returns before it.
func WithAttemptTimeout(d time.Duration) Option { return func(x *Model) { x.attemptTimeout = d } }

// WithDeadlineMargin sets the time before the caller's deadline under
// which no retry starts; the default is DefaultDeadlineMargin.
func WithDeadlineMargin(d time.Duration) Option { return func(x *Model) { x.margin = d } }

// WithAllowedModels sets the model IDs a request may name; a request that
// names another fails with an error wrapping [ErrModelNotAllowed] before
// any call. No list (the default) allows every model.
func WithAllowedModels(ids ...string) Option {
	return func(x *Model) { x.allowed = slices.Clone(ids) }
}

// WithObserver sets a function called once at the end of every Extract
// with what it did, for metrics and tests.
func WithObserver(f func(Call)) Option { return func(x *Model) { x.observe = f } }

// New returns a Model that calls client, usually a *bedrockruntime.Client
// built once in main. Each call it makes replaces the client's retryer by
// the Model's: the SDK's standard retryer with the Model's attempts,
// backoff and [Retryable], whatever the client was built with, so that
// one Extract makes at most WithMaxAttempts attempts.
func New(client API, opts ...Option) *Model {
	m := &Model{
		client:         client,
		mode:           OutputTool,
		maxAttempts:    DefaultMaxAttempts,
		baseDelay:      DefaultBaseDelay,
		maxDelay:       DefaultMaxDelay,
		attemptTimeout: DefaultAttemptTimeout,
		margin:         DefaultDeadlineMargin,
	}
	for _, o := range opts {
		o(m)
	}
	m.retryer = m.newRetryer()
	return m
}

// Extract calls the model with req and returns its operations, not yet
// validated by the store, and the tokens the call used, which are filled
// also when the answer is malformed.
//
// Errors: one wrapping memory.ErrMalformedAnswer when the answer is not
// the expected structure (another stop reason, no call or another tool's,
// input that memory.ParseOperations refuses); one wrapping
// ErrToolChoiceUnsupported when the model refuses the forced tool choice;
// one wrapping ErrModelNotAllowed when req names a model outside the
// allow-list; the last attempt's error (a smithy.APIError such as
// AccessDeniedException, an *AttemptTimeoutError, or the context's error)
// when the call failed, after the retries it allows. [Retryable] says
// which of these may pass on a later try.
func (m *Model) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	start := time.Now()
	c := Call{ModelID: req.ModelID, Mode: m.mode}
	ans, err := m.extract(ctx, req, &c)
	c.Duration, c.Usage, c.Err = time.Since(start), ans.Usage, err
	if m.observe != nil {
		m.observe(c)
	}
	return ans, err
}

func (m *Model) extract(ctx context.Context, req memory.ModelRequest, c *Call) (memory.ModelAnswer, error) {
	if m.client == nil {
		return memory.ModelAnswer{}, errors.New("bedrock: no client")
	}
	if m.mode != OutputTool && m.mode != OutputJSON {
		return memory.ModelAnswer{}, fmt.Errorf("bedrock: unknown output mode %q", m.mode)
	}
	if req.ModelID == "" {
		return memory.ModelAnswer{}, errors.New("bedrock: no model ID")
	}
	if m.allowed != nil && !slices.Contains(m.allowed, req.ModelID) {
		return memory.ModelAnswer{}, fmt.Errorf("%w: %q is not in the allow-list (ALLOWED_MODEL_IDS)", ErrModelNotAllowed, cut(req.ModelID, 256))
	}
	if _, err := decodeSchema(req.Tool.InputSchema); err != nil {
		return memory.ModelAnswer{}, fmt.Errorf("bedrock: tool %s: %w", req.Tool.Name, err)
	}
	if strings.TrimSpace(req.Transcript) == "" {
		// Nothing to read: Converse refuses an empty message, and the
		// answer could only be "no change".
		return memory.ModelAnswer{Operations: []memory.Operation{}}, nil
	}
	in, err := m.input(req)
	if err != nil {
		return memory.ModelAnswer{}, err
	}
	out, err := m.converse(ctx, in, c)
	if err != nil {
		return memory.ModelAnswer{}, err
	}
	usage := usageOf(out.Usage)
	if need := MaxTokensFor(answerBytes(req)); m.maxTokens == 0 && out.StopReason == types.StopReasonMaxTokens &&
		aws.ToInt32(in.InferenceConfig.MaxTokens) < need {
		// The answer outgrew the first request's maxTokens: ask once
		// more for what the caps allow.
		in.InferenceConfig.MaxTokens = aws.Int32(need)
		if out, err = m.converse(ctx, in, c); err != nil {
			return memory.ModelAnswer{}, err
		}
		usage = addUsage(usage, usageOf(out.Usage))
	}
	ans := memory.ModelAnswer{Usage: usage}
	c.StopReason = string(out.StopReason)
	var input []byte
	if m.mode == OutputJSON {
		input, err = jsonAnswer(out)
	} else {
		input, err = toolAnswer(out, req.Tool.Name)
	}
	if err != nil {
		return ans, err
	}
	ops, err := memory.ParseOperations(input)
	if err != nil {
		// Not ParseOperations' text: a JSON error may quote a member name,
		// and the model may put anything in a name.
		return ans, malformed(`tool input is not {"operations":[{"op","key","value","evidence","validUntil","category"},…]} with string members`)
	}
	ans.Operations = ops
	return ans, nil
}

// maxTokensFor returns the maxTokens of a call's first request, whose
// largest valid answer is of n bytes: FirstMaxTokens, or less when that
// answer needs less.
func (m *Model) maxTokensFor(n int) int32 {
	if m.maxTokens > 0 {
		return int32(min(m.maxTokens, 1<<20))
	}
	return min(FirstMaxTokens, MaxTokensFor(n))
}

// MaxTokensFor returns the maxTokens that an answer of at most
// answerBytes bytes of tool input needs (memory.ModelRequest's
// MaxAnswerBytes): AnswerTokens + answerBytes / BytesPerToken, plus
// TokenMarginPercent, rounded up to a multiple of 64, at most
// MaxTokensUpperBound.
func MaxTokensFor(answerBytes int) int32 {
	answerBytes = min(max(answerBytes, 0), 1<<24)
	need := AnswerTokens + (answerBytes*(100+TokenMarginPercent)+BytesPerToken*100-1)/(BytesPerToken*100)
	need = (need + 63) / 64 * 64
	return int32(min(need, MaxTokensUpperBound))
}

// answerBytes returns the request's MaxAnswerBytes, or, for a request
// built without it, the largest answer of its MaxOperations at the
// default caps.
func answerBytes(req memory.ModelRequest) int {
	if req.MaxAnswerBytes > 0 {
		return req.MaxAnswerBytes
	}
	return len(memory.LargestAnswer(req.MaxOperations, memory.DefaultMaxFactChars))
}

// jsonInstruction is added to the system prompt in OutputJSON mode; %s is
// the schema of the answer.
const jsonInstruction = "\n\nNo tool is available in this conversation. Instead of calling a tool, " +
	"answer with only one JSON object of the form {\"operations\":[...]}, with no other text and no code fence. " +
	"It must match this JSON Schema:\n%s"

// input builds the Converse request.
func (m *Model) input(req memory.ModelRequest) (*bedrockruntime.ConverseInput, error) {
	system := req.System
	in := &bedrockruntime.ConverseInput{
		ModelId: aws.String(req.ModelID),
		Messages: []types.Message{{
			Role:    types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: req.Transcript}},
		}},
		InferenceConfig: &types.InferenceConfiguration{
			MaxTokens:   aws.Int32(m.maxTokensFor(answerBytes(req))),
			Temperature: aws.Float32(0),
		},
	}
	if m.mode == OutputJSON {
		system += fmt.Sprintf(jsonInstruction, compact(req.Tool.InputSchema))
	} else {
		tool, err := ToolFor(req.ModelID, req.Tool)
		if err != nil {
			return nil, err
		}
		in.ToolConfig = &types.ToolConfiguration{
			Tools:      []types.Tool{tool},
			ToolChoice: &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(req.Tool.Name)}},
		}
	}
	if system != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: system}}
	}
	return in, nil
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// converse makes the call through the Model's retryer, with the
// per-attempt middleware of this call, within ctx's deadline.
func (m *Model) converse(ctx context.Context, in *bedrockruntime.ConverseInput, c *Call) (*bedrockruntime.ConverseOutput, error) {
	var failed []string
	mw := &attemptMiddleware{m: m, call: c, failed: &failed}
	r := &deadlineRetryer{RetryerV2: m.retryer, margin: m.margin}
	r.deadline, _ = ctx.Deadline()
	out, err := m.client.Converse(ctx, in, func(o *bedrockruntime.Options) {
		o.Retryer = r
		o.RetryMaxAttempts = 0 // keep m.retryer's own bound
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Finalize.Insert(mw, "Retry", middleware.After)
		})
	})
	// Every failed attempt but a final failure was retried.
	c.Retried = failed
	if err != nil && len(failed) > 0 {
		c.Retried = failed[:len(failed)-1]
	}
	if len(c.Retried) == 0 {
		c.Retried = nil
	}
	if err == nil {
		return out, nil
	}
	if c.Attempts == 0 {
		c.Attempts = 1 // a client without the middleware stack, such as a test double
	}
	if m.mode == OutputTool && refusesToolChoice(err) {
		return nil, fmt.Errorf("%w: %s refused toolConfig.toolChoice; set MODEL_OUTPUT_MODE=json to use the JSON answer mode: %w",
			ErrToolChoiceUnsupported, aws.ToString(in.ModelId), err)
	}
	return nil, fmt.Errorf("bedrock: converse %s: %d attempt(s) of %d: %w", aws.ToString(in.ModelId), c.Attempts, m.maxAttempts, err)
}

// newRetryer returns the SDK's standard retryer with m's attempts, the
// SDK's exponential jitter backoff on m's base and cap, and the
// classification of [Retryable].
func (m *Model) newRetryer() *awsretry.Standard {
	return awsretry.NewStandard(func(o *awsretry.StandardOptions) {
		o.MaxAttempts = m.maxAttempts
		o.BaseDelay = m.baseDelay
		o.MaxBackoff = m.maxDelay
		o.Retryables = []awsretry.IsErrorRetryable{retryables}
	})
}

// deadlineRetryer is the Model's retryer for one call: it ends the
// retries when the wait it draws would leave less than margin before the
// caller's deadline, since a retry then could not be answered in time.
type deadlineRetryer struct {
	aws.RetryerV2
	deadline time.Time
	margin   time.Duration
}

// RetryDelay returns the wait before the attempt after attempt, or an
// error that ends the retries when the deadline leaves no time for it.
func (r *deadlineRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	wait, derr := r.RetryerV2.RetryDelay(attempt, err)
	if derr == nil && !r.deadline.IsZero() && time.Until(r.deadline)-wait < r.margin {
		return 0, &noTimeError{err: err}
	}
	return wait, derr
}

// noTimeError ends the retries of a call: the deadline leaves no time for
// another attempt.
type noTimeError struct{ err error }

func (e *noTimeError) Error() string {
	return "no time left before the deadline for a retry: " + e.err.Error()
}
func (e *noTimeError) Unwrap() error { return e.err }

// attemptMiddleware runs around each attempt, after the SDK's retry
// middleware: it counts the attempts, records the code of each failure,
// and bounds each attempt by the attempt timeout and a little before the
// caller's deadline. An attempt cut by that bound while the caller's
// context is live fails with an *AttemptTimeoutError.
type attemptMiddleware struct {
	m      *Model
	call   *Call
	failed *[]string
}

func (*attemptMiddleware) ID() string { return "usermemory.bedrock.Attempt" }

func (a *attemptMiddleware) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
	middleware.FinalizeOutput, middleware.Metadata, error,
) {
	a.call.Attempts++
	actx, cancel := a.m.attemptContext(ctx)
	defer cancel()
	out, md, err := next.HandleFinalize(actx, in)
	if err == nil {
		return out, md, nil
	}
	code := errorCode(err)
	if actx.Err() != nil && ctx.Err() == nil {
		err, code = &AttemptTimeoutError{Err: err}, "timeout"
	}
	*a.failed = append(*a.failed, code)
	return out, md, err
}

// AttemptTimeoutError is the error of an attempt that outlasted the
// attempt timeout (see [WithAttemptTimeout]) while the caller's context
// was still live. It is retryable.
type AttemptTimeoutError struct{ Err error }

func (e *AttemptTimeoutError) Error() string { return "attempt timed out: " + e.Err.Error() }
func (e *AttemptTimeoutError) Unwrap() error { return e.Err }

// Timeout reports true: the error is a timeout.
func (e *AttemptTimeoutError) Timeout() bool { return true }

// returnReserve is the time an attempt leaves before the caller's
// deadline (at most a tenth of the time left), so that Extract returns
// before the deadline rather than at it, and the caller can still report.
const returnReserve = 100 * time.Millisecond

// attemptContext returns the context of one attempt: it ends at the
// attempt timeout, if any, and a little before the caller's deadline.
func (m *Model) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	var end time.Time
	if dl, ok := ctx.Deadline(); ok {
		end = dl.Add(-min(returnReserve, time.Until(dl)/10))
	}
	if m.attemptTimeout > 0 {
		if t := time.Now().Add(m.attemptTimeout); end.IsZero() || t.Before(end) {
			end = t
		}
	}
	if end.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, end)
}

// retryables is the classification of [Retryable], in the SDK's terms:
// the first check with an answer decides, and no answer means permanent.
// Besides the SDK's defaults (connection errors, timeouts, HTTP 500, 502,
// 503, 504 and an unmodelled 429, its throttling and request-timeout
// codes) it retries the Bedrock Runtime codes of a quota that refills and
// of a model not yet ready or slow, any server fault, and HTTP 408 and
// any 5xx; and it never retries what no later try can mend.
var retryables = awsretry.IsErrorRetryables(append([]awsretry.IsErrorRetryable{
	awsretry.IsErrorRetryableFunc(permanent),
	awsretry.RetryableErrorCode{Codes: map[string]struct{}{
		"ServiceQuotaExceededException": {},
		"ServiceUnavailableException":   {},
		"InternalServerException":       {},
		"ModelNotReadyException":        {},
		"ModelTimeoutException":         {},
	}},
	awsretry.IsErrorRetryableFunc(serverFault),
}, awsretry.DefaultRetryables...))

// permanent answers false for the errors no later try can mend, true for
// timeouts, and unknown for the rest.
func permanent(err error) aws.Ternary {
	var timeout *AttemptTimeoutError
	switch {
	case err == nil, errors.Is(err, memory.ErrMalformedAnswer), errors.Is(err, ErrToolChoiceUnsupported),
		errors.Is(err, ErrModelNotAllowed), errors.Is(err, context.Canceled):
		return aws.FalseTernary
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeout):
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}

// serverFault answers true for an API error the service calls its own
// fault, or any HTTP 408 or 5xx, and unknown for the rest.
func serverFault(err error) aws.Ternary {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorFault() == smithy.FaultServer {
		return aws.TrueTernary
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusRequestTimeout || re.HTTPStatusCode() >= 500) {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}

// Retryable reports whether a call that failed with err may succeed when
// made again, now or later: throttling, a quota that refills, a server
// fault, HTTP 408, 429 or 5xx, a timeout (an attempt's, the caller's
// deadline, the network's), a connection that failed. It is the one
// classification of model errors: the Model's retryer retries what it
// reports, and the extractor hands the same failures back to the queue.
//
// Everything else is permanent: access denied, validation errors, an
// unknown model, a model that refuses the forced tool choice
// ([ErrToolChoiceUnsupported]), a model that is not allowed
// ([ErrModelNotAllowed]), an answer that is not the expected structure
// (memory.ErrMalformedAnswer), a cancelled call, no error.
func Retryable(err error) bool {
	return retryables.IsErrorRetryable(err) == aws.TrueTernary
}

// errorCode names a failed attempt for [Call].Retried: the AWS error
// code, the HTTP status, "timeout" or "connection".
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() != 0 {
		return fmt.Sprintf("HTTP %d", re.HTTPStatusCode())
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return "timeout"
	}
	return "connection"
}

// refusesToolChoice recognises the ValidationException of a model that
// does not support a forced tool choice.
func refusesToolChoice(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" &&
		strings.Contains(strings.ToLower(ae.ErrorMessage()), "toolchoice")
}

// toolAnswer returns the input of the answer's one call of the tool named
// name, or an error wrapping memory.ErrMalformedAnswer.
func toolAnswer(out *bedrockruntime.ConverseOutput, name string) ([]byte, error) {
	if out.StopReason != types.StopReasonToolUse {
		return nil, malformed("stop reason %q, not tool_use", out.StopReason)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, malformed("no message in the answer")
	}
	var use *types.ToolUseBlock
	for _, b := range msg.Value.Content {
		tu, ok := b.(*types.ContentBlockMemberToolUse)
		if !ok {
			continue
		}
		if aws.ToString(tu.Value.Name) != name {
			return nil, malformed("a call of the tool %q, not %q", cut(aws.ToString(tu.Value.Name), 64), name)
		}
		if use != nil {
			return nil, malformed("more than one call of the tool")
		}
		use = &tu.Value
	}
	if use == nil {
		return nil, malformed("no tool call in the answer")
	}
	input, err := toolInput(*use)
	if err != nil {
		return nil, malformed("%v", err)
	}
	return input, nil
}

// jsonAnswer returns the JSON object of a text answer, without a code
// fence, or an error wrapping memory.ErrMalformedAnswer.
func jsonAnswer(out *bedrockruntime.ConverseOutput) ([]byte, error) {
	if out.StopReason != types.StopReasonEndTurn && out.StopReason != types.StopReasonStopSequence {
		return nil, malformed("stop reason %q, not end_turn", out.StopReason)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, malformed("no message in the answer")
	}
	var b strings.Builder
	for _, c := range msg.Value.Content {
		if t, ok := c.(*types.ContentBlockMemberText); ok {
			b.WriteString(t.Value)
		}
	}
	text := stripFence(b.String())
	if text == "" {
		return nil, malformed("no text in the answer")
	}
	return []byte(text), nil
}

// stripFence removes white space and a Markdown code fence (```json … ```)
// around text.
func stripFence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") {
		return t
	}
	t = strings.TrimPrefix(t, "```")
	if i := strings.IndexByte(t, '\n'); i >= 0 && !strings.ContainsAny(t[:i], "{[") {
		t = t[i+1:] // the info string, such as json
	}
	t = strings.TrimSpace(t)
	t = strings.TrimSuffix(t, "```")
	return strings.TrimSpace(t)
}

func usageOf(u *types.TokenUsage) memory.Usage {
	if u == nil {
		return memory.Usage{}
	}
	return memory.Usage{
		InputTokens:      int(aws.ToInt32(u.InputTokens)),
		OutputTokens:     int(aws.ToInt32(u.OutputTokens)),
		CacheReadTokens:  int(aws.ToInt32(u.CacheReadInputTokens)),
		CacheWriteTokens: int(aws.ToInt32(u.CacheWriteInputTokens)),
	}
}

// addUsage returns the usage of two requests of one call.
func addUsage(a, b memory.Usage) memory.Usage {
	return memory.Usage{
		InputTokens:      a.InputTokens + b.InputTokens,
		OutputTokens:     a.OutputTokens + b.OutputTokens,
		CacheReadTokens:  a.CacheReadTokens + b.CacheReadTokens,
		CacheWriteTokens: a.CacheWriteTokens + b.CacheWriteTokens,
	}
}

// cut returns s cut to n bytes at most, at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

type malformedError struct{ msg string }

func (e *malformedError) Error() string { return "bedrock: malformed answer: " + e.msg }
func (e *malformedError) Unwrap() error { return memory.ErrMalformedAnswer }

func malformed(format string, args ...any) error {
	return &malformedError{msg: fmt.Sprintf(format, args...)}
}
