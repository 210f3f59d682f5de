package logref_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/usermemory/usermemory/functions/logref"
	"github.com/usermemory/usermemory/memory"
)

// TestUser holds the reference to the shell command that package logref's
// documentation gives operators: printf '%s' 'acme/u-123' | sha256sum |
// cut -c1-16.
func TestUser(t *testing.T) {
	if got, want := logref.User("acme", "u-123"), "b0e35159bdc1e924"; got != want {
		t.Errorf("User(acme, u-123) = %s, want %s", got, want)
	}
	if logref.User("acme", "u-123") == logref.User("globex", "u-123") {
		t.Error("the same user ID in two tenants has one reference")
	}
}

// TestErrorNamesNoMessage checks that the class of an error names its
// kind and never its message, which may echo what was sent.
func TestErrorNamesNoMessage(t *testing.T) {
	secret := errors.New("the value Lisbon is invalid")
	named := errors.New("named")
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{secret, "*errors.errorString"},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), "deadline_exceeded"},
		{&memory.Error{Code: memory.CodeRepository, Err: secret}, fmt.Sprintf("memory:%d *errors.errorString", memory.CodeRepository)},
		{&smithy.OperationError{ServiceID: "DynamoDB", OperationName: "UpdateItem",
			Err: &smithy.GenericAPIError{Code: "ValidationException", Message: "the value Lisbon is invalid"}}, "DynamoDB.UpdateItem ValidationException"},
		{fmt.Errorf("call: %w", named), "what to do"},
	}
	for _, tt := range tests {
		got := logref.Error(tt.err, logref.Named{Err: named, Name: "what to do"})
		if got != tt.want || strings.Contains(got, "Lisbon") {
			t.Errorf("Error(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
