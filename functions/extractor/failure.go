package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/memory"
)

// Transient reports whether a failed model call may succeed when tried
// again later. It is bedrock.Retryable, the one classification of model
// errors: the model's retryer retries the same failures within the call,
// and a transient failure that outlasts those retries is handed back to
// the queue. Everything else is permanent, and so are answers that were
// not the expected structure.
func Transient(err error) bool { return bedrock.Retryable(err) }

// errorClass names the kind of err for the logs without its message: the
// messages of SDK and model errors may echo what was sent (turn text,
// fact values). It gives the memory code, the AWS service, operation and
// error code, the HTTP status, or the Go type of the cause.
func errorClass(err error) string {
	if err == nil {
		return ""
	}
	out := ""
	if c := memory.ErrorCode(err); c != 0 {
		out = "memory:" + strconv.FormatInt(c, 10) + " "
	}
	var op *smithy.OperationError
	if errors.As(err, &op) {
		out += op.Service() + "." + op.Operation() + " "
	}
	var api smithy.APIError
	var resp *smithyhttp.ResponseError
	switch {
	case errors.Is(err, bedrock.ErrToolChoiceUnsupported):
		out += "tool_choice_unsupported: set MODEL_OUTPUT_MODE=json"
	case errors.Is(err, bedrock.ErrModelNotAllowed):
		out += "model_not_allowed: the message's cheapModelId is not in ALLOWED_MODEL_IDS"
	case errors.Is(err, memory.ErrMalformedAnswer):
		out += "malformed_answer"
	case errors.Is(err, context.DeadlineExceeded):
		out += "deadline_exceeded"
	case errors.Is(err, context.Canceled):
		out += "canceled"
	case errors.As(err, &api):
		out += api.ErrorCode()
		if errors.As(err, &resp) {
			out += " http:" + strconv.Itoa(resp.HTTPStatusCode())
		}
	case errors.As(err, &resp):
		out += "http:" + strconv.Itoa(resp.HTTPStatusCode())
	default:
		out += fmt.Sprintf("%T", innermost(err))
	}
	return out
}

// innermost returns the last error of err's chain (the first of a join).
func innermost(err error) error {
	for {
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next := u.Unwrap()
			if next == nil {
				return err
			}
			err = next
		case interface{ Unwrap() []error }:
			list := u.Unwrap()
			if len(list) == 0 {
				return err
			}
			err = list[0]
		default:
			return err
		}
	}
}
