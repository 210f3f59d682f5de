package memory

import (
	"errors"
	"fmt"
)

// Error codes. The first four are those of the store the service comes
// from (docs/decisions.md, Origin); the others are new and unique to this
// service. The core knows codes only: functions/httpapi maps each to its
// HTTP status and generates docs/errors.md from the same table.
const (
	// CodeEmptyFact: a key or a value is empty after trimming.
	CodeEmptyFact int64 = 5372597957094
	// CodeFactTooLong: a key or a value set by hand is over MaxFactChars.
	CodeFactTooLong int64 = 5377210486159
	// CodeModelFailed: the cheap-model call failed (reported, never thrown).
	CodeModelFailed int64 = 5372598726156
	// CodeBadAnswer: the model's answer is not the expected structure.
	CodeBadAnswer int64 = 5372598726369

	// CodeInvalidID: a tenant, user or thread ID is empty, too long or has
	// a character outside the allowed set.
	CodeInvalidID int64 = 5380000000101
	// CodeConflict: a write kept losing to concurrent writers.
	CodeConflict int64 = 5380000000102
	// CodeInvalidConfig: the configuration is outside its bounds.
	CodeInvalidConfig int64 = 5380000000103
	// CodeUnknownTool: a tool call names a tool this package does not have.
	CodeUnknownTool int64 = 5380000000104
	// CodeBadToolInput: a tool call's input is not the tool's schema.
	CodeBadToolInput int64 = 5380000000105
	// CodeApprovalRequired: the remember tool ran without the user's approval.
	CodeApprovalRequired int64 = 5380000000106
	// CodeInvalidTurnCount: turn counts are negative or go backwards.
	CodeInvalidTurnCount int64 = 5380000000107
	// CodeRepository: the repository failed; the cause is logged, never shown.
	CodeRepository int64 = 5380000000108
	// CodeInvalidKeyChars: a key set or removed by hand holds a character
	// other than letters, digits, marks, spaces, '-', '_' and '.'; it is
	// refused, never stored under a rewritten key.
	CodeInvalidKeyChars int64 = 5380000000109
	// CodeInvalidOrigin: a write by hand names an origin other than
	// manual or remember_tool.
	CodeInvalidOrigin int64 = 5380000000110
	// CodePendingNotFound: no pending fact has the key to keep (it was
	// never pending, was answered already, or its wait ended).
	CodePendingNotFound int64 = 5380000000111
	// CodeInvalidValidUntil: the end date of a fact set by hand is not a
	// date from today to a year ahead.
	CodeInvalidValidUntil int64 = 5380000000112
	// CodeSecretRefused: a fact set by hand holds what looks like a secret
	// (a card number, an IBAN, a credential or a password); it is never
	// stored.
	CodeSecretRefused int64 = 5380000000113
	// CodeInvalidImport: an import names no source (or one over
	// MaxImportSourceChars), or neither or both of text and statements,
	// or an empty one, or over MaxImportStatements statements
	// ([CheckImport]).
	CodeInvalidImport int64 = 5380000000114
	// CodeImportTooLong: an import's text is over MaxImportChars
	// characters, or makes more than MaxImportStatements statements
	// ([CheckImport]).
	CodeImportTooLong int64 = 5380000000115
	// CodeImportNotFound: the user's record holds no import with this ID:
	// it is made up, another user's, or forgotten ([MaxImports]).
	CodeImportNotFound int64 = 5380000000116
	// CodeImportLimit: the user requested MaxImportsPerDay imports in the
	// last 24 hours.
	CodeImportLimit int64 = 5380000000117
	// CodeEarlierValueUnknown: an Undo of a change that replaced a value
	// no longer held in the fact's history ([Store.UndoChange]); nothing
	// changes.
	CodeEarlierValueUnknown int64 = 5380000000118
)

// Error is an error with a meaning for callers: a numeric code that is
// stable across releases, a message for developers and, where a person
// should see it, a userMessage. Err is the cause, for logs only. How a code
// is answered (over HTTP, its status) is the adapter's business.
type Error struct {
	Code        int64
	Message     string
	UserMessage string
	Err         error
}

// Error returns the message and, when there is one, the cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("memory: %s (code %d): %v", e.Message, e.Code, e.Err)
	}
	return fmt.Sprintf("memory: %s (code %d)", e.Message, e.Code)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code of the first *Error in err's chain, or 0.
func ErrorCode(err error) int64 {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// ErrConflict is returned by a [Repository] whose conditional write found
// the stored record changed since it was read.
var ErrConflict = errors.New("memory: conditional write conflict")

// ErrMalformedAnswer is wrapped by a [Model] whose answer is not the
// expected structure: a stop reason other than a tool call, a missing tool
// call, or input that does not fit the operations schema. The store reports
// it as CodeBadAnswer and writes nothing.
var ErrMalformedAnswer = errors.New("memory: the model's answer is not the expected structure")

// badRequest returns the Error of input the caller must change: a code
// and messages, nothing of HTTP (the adapter maps the code).
func badRequest(code int64, msg, userMsg string) *Error {
	return &Error{Code: code, Message: msg, UserMessage: userMsg}
}

func repoError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: CodeRepository, Message: "repository failed", Err: err}
}
