package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// TestStalledDependencyAnswers503 runs every kind of route on an operation
// that never answers (a stalled DynamoDB) and on one that fails with
// throttling after the SDK's retries: each answers 503 problem+json with
// CodeUnavailable, Retry-After and a userMessage, before the invocation's
// deadline; a write says it may have been applied and that a retry is
// safe. The document describes the answer.
func TestStalledDependencyAnswers503(t *testing.T) {
	spec := httpapitest.LoadSpec(t)
	stalled := func(ctx context.Context, _ httpapi.Request) (int, any, error) {
		<-ctx.Done()
		return 0, nil, &memory.Error{Code: memory.CodeRepository, Message: "repository failed", Err: ctx.Err()}
	}
	throttled := func(context.Context, httpapi.Request) (int, any, error) {
		return 0, nil, &memory.Error{Code: memory.CodeRepository, Message: "repository failed",
			Err: &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "Lisbon"}}
	}
	routes := []struct {
		key   string
		body  string
		write bool
	}{
		{"GET /v1/me/facts", "", false},
		{"PUT /v1/me/facts/{key}", `{"value":"Lisbon"}`, true},
		{"DELETE /v1/me/facts/{key}", "", true},
		{"DELETE /v1/me/facts", "", true},
	}
	for _, op := range []struct {
		name string
		op   httpapi.Op
	}{{"stall", stalled}, {"throttle", throttled}} {
		for _, rt := range routes {
			h, err := httpapi.New(httpapi.RequestConfig{}, nil, op.op, rt.key)
			if err != nil {
				t.Fatal(err)
			}
			var params map[string]string
			if strings.Contains(rt.key, "{key}") {
				params = map[string]string{"key": "city"}
			}
			req := httpapitest.NewEvent(rt.key, httpapitest.UserToken(), params, rt.body)
			// An invocation with 1.5 s left: the budget is its deadline
			// less the reserve, shorter than AnswerBound.
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			start := time.Now()
			resp, _ := h.Handle(ctx, req)
			took := time.Since(start)
			cancel()
			if took >= 1500*time.Millisecond {
				t.Errorf("%s %s: answered after %s, past the invocation's deadline", op.name, rt.key, took)
			}
			spec.Check(t, req, resp)
			var p httpapi.Problem
			if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
				t.Fatalf("%s %s: %v", op.name, rt.key, err)
			}
			if resp.StatusCode != 503 || p.Code != httpapi.CodeUnavailable || resp.Headers["content-type"] != httpapi.ProblemContentType ||
				resp.Headers["retry-after"] != "2" || p.UserMessage == "" {
				t.Errorf("%s %s: got %d %v %s", op.name, rt.key, resp.StatusCode, resp.Headers, resp.Body)
			}
			if strings.Contains(resp.Body, "Lisbon") || strings.Contains(resp.Body, "Throughput") {
				t.Errorf("%s %s: the body tells the cause: %s", op.name, rt.key, resp.Body)
			}
			if says := strings.Contains(p.UserMessage, "may or may not") && strings.Contains(p.UserMessage, "safe"); says != rt.write {
				t.Errorf("%s %s: userMessage %q; a write must say it may have been applied and a retry is safe, a read must not", op.name, rt.key, p.UserMessage)
			}
		}
	}
}

// TestAnswerBound checks that an operation gets at most AnswerBound, even
// when the invocation has much longer left.
func TestAnswerBound(t *testing.T) {
	var left time.Duration
	op := func(ctx context.Context, _ httpapi.Request) (int, any, error) {
		d, _ := ctx.Deadline()
		left = time.Until(d)
		return 204, nil, nil
	}
	h, err := httpapi.New(httpapi.RequestConfig{}, nil, op, "DELETE /v1/me/facts")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if resp, _ := h.Handle(ctx, httpapitest.NewEvent("DELETE /v1/me/facts", httpapitest.UserToken(), nil, "")); resp.StatusCode != 204 {
		t.Fatalf("got %d %s", resp.StatusCode, resp.Body)
	}
	if left > httpapi.AnswerBound || left < httpapi.AnswerBound-time.Second {
		t.Errorf("the operation had %s left; want AnswerBound (%s)", left, httpapi.AnswerBound)
	}
}

func TestUnavailable(t *testing.T) {
	live := context.Background()
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.DeadlineExceeded, true},
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, true},
		{&smithy.GenericAPIError{Code: "ConditionalCheckFailedException"}, false},
		{&memory.Error{Code: memory.CodeConflict, Err: context.DeadlineExceeded}, false},
		{&memory.Error{Code: memory.CodeEmptyFact}, false},
		{errors.New("a bug"), false},
	}
	for _, tt := range tests {
		if got := httpapi.IsUnavailable(live, tt.err); got != tt.want {
			t.Errorf("IsUnavailable(%v) = %t, want %t", tt.err, got, tt.want)
		}
	}
}
