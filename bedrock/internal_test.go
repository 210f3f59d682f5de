package bedrock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/usermemory/usermemory/memory"
)

// stub is an API that answers with a fixed tool call and checks that
// every call sets the Model's standard retryer.
type stub struct {
	t        *testing.T
	calls    int
	attempts int
}

func (s *stub) Converse(_ context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	s.calls++
	o := bedrockruntime.Options{RetryMaxAttempts: 5, Retryer: aws.NopRetryer{}}
	for _, f := range optFns {
		f(&o)
	}
	r, ok := o.Retryer.(*deadlineRetryer)
	if !ok || o.Retryer.MaxAttempts() != s.attempts || o.RetryMaxAttempts != 0 || len(o.APIOptions) != 1 {
		s.t.Errorf("call options: retryer %T of %d attempts, RetryMaxAttempts %d, %d API options; want the deadline retryer of %d, 0 and the attempt middleware",
			o.Retryer, o.Retryer.MaxAttempts(), o.RetryMaxAttempts, len(o.APIOptions), s.attempts)
	} else if _, ok := r.RetryerV2.(*retry.Standard); !ok {
		s.t.Errorf("the deadline retryer wraps %T, want the SDK's *retry.Standard", r.RetryerV2)
	}
	return &bedrockruntime.ConverseOutput{
		StopReason: types.StopReasonToolUse,
		Output: &types.ConverseOutputMemberMessage{Value: types.Message{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				Name:  aws.String(memory.OperationsToolName),
				Input: document.NewLazyDocument(map[string]any{"operations": []any{}}),
			}},
		}}},
	}, nil
}

// TestEveryCallSetsTheStandardRetryer checks, through the stub, that each
// call replaces the client's retryer by the SDK's standard retryer bounded
// by the Model's attempts.
func TestEveryCallSetsTheStandardRetryer(t *testing.T) {
	s := &stub{t: t, attempts: 3}
	m := New(s, WithMaxAttempts(3))
	req := memory.ModelRequest{ModelID: "m", Transcript: "User: hi", Tool: memory.OperationsTool(4, 100, true), MaxOperations: 4}
	for range 3 {
		ans, err := m.Extract(context.Background(), req)
		if err != nil {
			t.Fatalf("Extract: %v", err)
		}
		if ans.Operations == nil || len(ans.Operations) != 0 {
			t.Errorf("operations = %#v, want an empty list", ans.Operations)
		}
	}
	if s.calls != 3 {
		t.Errorf("%d calls for 3 extractions, want 3", s.calls)
	}
}

func TestStripFence(t *testing.T) {
	tests := map[string]string{
		`{"operations":[]}`:                         `{"operations":[]}`,
		"  {\"operations\":[]}\n":                   `{"operations":[]}`,
		"```json\n{\"operations\":[]}\n```":         `{"operations":[]}`,
		"```\n{\"operations\":[]}\n```\n":           `{"operations":[]}`,
		"```{\"operations\":[]}```":                 `{"operations":[]}`,
		"```JSON \n {\"operations\":[]} \n```":      `{"operations":[]}`,
		"Here it is: {\"operations\":[]}":           "Here it is: {\"operations\":[]}",
		"```json\n{\"operations\":[{\"op\":\"SET\"": `{"operations":[{"op":"SET"`,
	}
	for in, want := range tests {
		if got := stripFence(in); got != want {
			t.Errorf("stripFence(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBackoffStaysInBounds holds the SDK's backoff to the bounds the
// Model documents: up to min(DefaultMaxDelay, base·2^(n-1)), with base
// DefaultBaseDelay, or 1s for throttling.
func TestBackoffStaysInBounds(t *testing.T) {
	m := New(nil)
	for _, tt := range []struct {
		err  error
		base time.Duration
	}{
		{&smithy.GenericAPIError{Code: "InternalServerException", Fault: smithy.FaultServer}, DefaultBaseDelay},
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, time.Second},
	} {
		for n := 1; n <= 40; n++ {
			ceiling := min(tt.base<<min(n-1, 20), DefaultMaxDelay)
			var longest time.Duration
			for range 50 {
				d, err := m.retryer.RetryDelay(n, tt.err)
				if err != nil || d < 0 || d > ceiling {
					t.Fatalf("RetryDelay(%d, %v) = %v, %v; want in [0, %v]", n, tt.err, d, err, ceiling)
				}
				longest = max(longest, d)
			}
			if longest < ceiling/4 {
				t.Errorf("RetryDelay(%d, %v): longest of 50 draws %v, want a spread up to %v", n, tt.err, longest, ceiling)
			}
		}
	}
}

func TestNoClient(t *testing.T) {
	_, err := New(nil).Extract(context.Background(), memory.ModelRequest{ModelID: "m", Transcript: "x", Tool: memory.OperationsTool(1, 16, true)})
	if err == nil || errors.Is(err, memory.ErrMalformedAnswer) {
		t.Errorf("Extract without a client = %v, want a failed call", err)
	}
}
