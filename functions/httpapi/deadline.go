package httpapi

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/usermemory/usermemory/memory"
)

// Bounds of a request, after the Amazon Builders' Library's "Timeouts,
// retries and backoff with jitter": every call gets a timeout shorter
// than its caller's remaining time, and retries go inside that budget.
const (
	// AnswerBound is the most time a request's operation may take: its
	// DynamoDB calls, their attempts and the backoff between them. When it
	// runs out, the request answers 503 with [CodeUnavailable] instead of
	// waiting for the function's timeout. docs/api.md and api/openapi.yaml
	// document it.
	AnswerBound = 3 * time.Second
	// answerReserve is kept from the invocation's deadline, when that comes
	// before AnswerBound, to write the answer and the log line.
	answerReserve = 500 * time.Millisecond
	// RetryAfterSeconds is the Retry-After of a 503: the time a client
	// should wait before it tries again, adding its own jitter.
	RetryAfterSeconds = 2
)

// CodeUnavailable: a dependency (DynamoDB) did not answer within the
// request's bound, or kept failing with throttling or server errors
// through the SDK's retries (with Retry-After and a userMessage). A
// write answered so may or may not have been applied; PUT and DELETE are
// idempotent, so trying again is safe.
const CodeUnavailable int64 = 5380000000213

// User messages of a 503.
const (
	unavailableRead  = "Your memory can't be reached right now. Please try again in a moment."
	unavailableWrite = "Your memory can't be reached right now, so this change may or may not have been saved. Trying again is safe."
)

// withBudget returns ctx bounded by AnswerBound from now and by the
// invocation's deadline less answerReserve, whichever comes first.
func withBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	end := time.Now().Add(AnswerBound)
	if d, ok := ctx.Deadline(); ok && d.Add(-answerReserve).Before(end) {
		end = d.Add(-answerReserve)
	}
	return context.WithDeadline(ctx, end)
}

// IsUnavailable reports whether err, returned by an operation run within
// ctx, means that a dependency did not answer rather than that the
// request is wrong: ctx's deadline passed, or the error is one the AWS
// SDK's standard retryer retries (throttling, a 5xx, a broken or timed-out
// connection) and that outlasted its retries. A 4xx *memory.Error (a bad
// request, a conflict) is never one.
func IsUnavailable(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if s := StatusOf(err); s >= 400 && s < 500 {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return true
	}
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// unavailable returns the 503 error of a request whose dependency did not
// answer; write says whether the request writes. The cause stays in Err,
// for the log only.
func unavailable(write bool, cause error) *memory.Error {
	e := &memory.Error{Code: CodeUnavailable,
		Message: "the service could not answer in time: a dependency is slow or unavailable; retry after the Retry-After delay",
		Err:     cause}
	e.UserMessage = unavailableRead
	if write {
		e.Message = "the service could not answer in time: the write may or may not have been applied; it is idempotent, so retry it after the Retry-After delay"
		e.UserMessage = unavailableWrite
	}
	return e
}

// retryAfter is the Retry-After header value of a 503.
var retryAfter = strconv.Itoa(RetryAfterSeconds)
