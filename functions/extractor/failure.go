package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/memory"
)

// transientCodes are the error codes of Bedrock and DynamoDB that say
// "try again later": throttling, quotas that refill, and server-side
// faults.
var transientCodes = map[string]bool{
	"ThrottlingException":                    true,
	"TooManyRequestsException":               true,
	"ServiceQuotaExceededException":          true,
	"ServiceUnavailableException":            true,
	"InternalServerException":                true,
	"ModelNotReadyException":                 true,
	"ModelTimeoutException":                  true,
	"RequestTimeout":                         true,
	"RequestTimeoutException":                true,
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
}

// Transient reports whether a failed model call may succeed when tried
// again later: throttling, a quota that refills, a 5xx or a 429, a
// timeout (the invocation ran out of time, or the network did). Everything
// else is permanent, and so are answers that were not the expected
// structure: access denied, validation errors, an unknown model, a model
// that refuses the tool, no model configured.
func Transient(err error) bool {
	if err == nil || errors.Is(err, memory.ErrMalformedAnswer) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		if transientCodes[api.ErrorCode()] {
			return true
		}
		if api.ErrorFault() == smithy.FaultServer {
			return true
		}
	}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) {
		if s := resp.HTTPStatusCode(); s == 429 || s >= 500 {
			return true
		}
		return false
	}
	if api != nil {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true // Connection refused, reset or timed out: the service was not reached.
	}
	return false
}

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
