package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
)

// Error codes of the HTTP layer. They are unique across the service and
// listed, with the core's, in docs/errors.md.
const (
	// CodeUnauthenticated: the token's subject or tenant claim is missing
	// or malformed (401).
	CodeUnauthenticated int64 = 5380000000201
	// CodeForbidden: the token lacks the scope the route needs (403).
	CodeForbidden int64 = 5380000000202
	// CodeRouteNotFound: the function does not serve the request's route
	// (404).
	CodeRouteNotFound int64 = 5380000000203
	// CodeMalformedBody: the body is not one JSON object of the expected
	// types, or its base64 encoding is broken (400).
	CodeMalformedBody int64 = 5380000000204
	// CodeUnknownField: the body has a member other than "value" and
	// "origin" (400).
	CodeUnknownField int64 = 5380000000205
	// CodeIdentityInBody: the body names a tenant or a user; identity
	// comes from the token only (400).
	CodeIdentityInBody int64 = 5380000000206
	// CodeBodyTooLarge: the body is over the size limit (413).
	CodeBodyTooLarge int64 = 5380000000207
	// CodeUnsupportedMediaType: the body is not application/json (415).
	CodeUnsupportedMediaType int64 = 5380000000208
	// CodeInternal: an unexpected failure; the cause is logged, never
	// shown (500).
	CodeInternal int64 = 5380000000209
	// CodeInvalidUTF8: the body is not valid UTF-8, or escapes a surrogate
	// that is not half of a pair (400). Nothing is replaced by U+FFFD.
	CodeInvalidUTF8 int64 = 5380000000210
	// CodeDuplicateMember: an object of the body, at any depth, names a
	// member twice (400). No duplicate is ignored.
	CodeDuplicateMember int64 = 5380000000211
	// CodeInvalidKey: the {key} path parameter, once percent-decoded, is
	// not valid UTF-8 or holds U+FFFD, which is what invalid bytes become
	// on their way to the function (400).
	CodeInvalidKey int64 = 5380000000212
)

// ProblemContentType is the media type of every error body (RFC 9457).
const ProblemContentType = "application/problem+json"

// TypePrefix starts the type URI of every problem; the code follows it.
const TypePrefix = "urn:usermemory:error:"

// Problem is an error body as RFC 9457 defines it, with the extension
// members code and userMessage.
type Problem struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Status      int    `json:"status"`
	Detail      string `json:"detail"`
	Code        int64  `json:"code"`
	UserMessage string `json:"userMessage,omitempty"`
}

// ProblemFor returns the problem that err maps to. A *memory.Error below
// 500 keeps its message and userMessage, and so does a 503 with
// [CodeUnavailable], whose messages are fixed and name no cause; any other
// 5xx, and any error that is not a *memory.Error, becomes "internal error"
// with nothing of its cause.
func ProblemFor(err error) Problem {
	var e *memory.Error
	if !errors.As(err, &e) || e.Status < 400 || e.Status > 599 {
		e = &memory.Error{Status: http.StatusInternalServerError, Code: CodeInternal}
	}
	p := Problem{
		Type:   TypePrefix + strconv.FormatInt(e.Code, 10),
		Title:  http.StatusText(e.Status),
		Status: e.Status,
		Code:   e.Code,
	}
	if p.Title == "" {
		p.Title = "Error"
	}
	if e.Status >= 500 && e.Code != CodeUnavailable {
		p.Detail = "internal error"
		return p
	}
	p.Detail, p.UserMessage = e.Message, e.UserMessage
	return p
}

// problemResponse returns the answer of problem p; a 503 with
// CodeUnavailable carries Retry-After.
func problemResponse(p Problem) events.APIGatewayV2HTTPResponse {
	body, _ := json.Marshal(p) // Strings and numbers only: cannot fail.
	headers := map[string]string{"content-type": ProblemContentType}
	if p.Code == CodeUnavailable {
		headers["retry-after"] = retryAfter
	}
	return events.APIGatewayV2HTTPResponse{StatusCode: p.Status, Headers: headers, Body: string(body)}
}

func fail(status int, code int64, msg string) *memory.Error {
	return &memory.Error{Status: status, Code: code, Message: msg}
}
