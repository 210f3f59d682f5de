package logref

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/usermemory/usermemory/memory"
)

// Named is an error a caller names itself in an error's class: Name stands
// for every error that errors.Is matches to Err.
type Named struct {
	Err  error
	Name string
}

// Error names the kind of err for a log line, never its message: the
// messages of AWS SDK and model errors may echo what was sent (a key, a
// fact value, turn text). The class is the memory error code, the AWS
// service and operation, then the first of: the name of the first of
// named that err matches, deadline_exceeded, canceled, the AWS error code
// and HTTP status, the HTTP status, or the Go type of the innermost cause.
// For example "memory:5372598726156 DynamoDB.UpdateItem
// ProvisionedThroughputExceededException http:400". It returns "" for a
// nil err.
func Error(err error, named ...Named) string {
	if err == nil {
		return ""
	}
	var parts []string
	if c := memory.ErrorCode(err); c != 0 {
		parts = append(parts, "memory:"+strconv.FormatInt(c, 10))
	}
	var op *smithy.OperationError
	if errors.As(err, &op) {
		parts = append(parts, op.Service()+"."+op.Operation())
	}
	return strings.Join(append(parts, cause(err, named)), " ")
}

func cause(err error, named []Named) string {
	for _, n := range named {
		if errors.Is(err, n.Err) {
			return n.Name
		}
	}
	var api smithy.APIError
	var resp *smithyhttp.ResponseError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &api) && errors.As(err, &resp):
		return api.ErrorCode() + " http:" + strconv.Itoa(resp.HTTPStatusCode())
	case errors.As(err, &api):
		return api.ErrorCode()
	case errors.As(err, &resp):
		return "http:" + strconv.Itoa(resp.HTTPStatusCode())
	}
	return fmt.Sprintf("%T", innermost(err))
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
