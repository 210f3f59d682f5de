package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/memory"
)

// Error codes of the HTTP layer. They are unique across the service; the
// status each answers with is in [codeTable], with the core's codes.
const (
	// CodeUnauthenticated: the token's subject or tenant claim is missing
	// or malformed.
	CodeUnauthenticated int64 = 5380000000201
	// CodeForbidden: the token lacks the scope the route needs.
	CodeForbidden int64 = 5380000000202
	// CodeRouteNotFound: the function does not serve the request's route.
	CodeRouteNotFound int64 = 5380000000203
	// CodeMalformedBody: the body is not one JSON object of the expected
	// types, or its base64 encoding is broken.
	CodeMalformedBody int64 = 5380000000204
	// CodeUnknownField: the body has a member other than those of the
	// route.
	CodeUnknownField int64 = 5380000000205
	// CodeIdentityInBody: the body names a tenant or a user; identity
	// comes from the token only.
	CodeIdentityInBody int64 = 5380000000206
	// CodeBodyTooLarge: the body is over the size limit.
	CodeBodyTooLarge int64 = 5380000000207
	// CodeUnsupportedMediaType: the body is not application/json.
	CodeUnsupportedMediaType int64 = 5380000000208
	// CodeInternal: an unexpected failure; the cause is logged, never
	// shown.
	CodeInternal int64 = 5380000000209
	// CodeInvalidUTF8: the body is not valid UTF-8, or escapes a surrogate
	// that is not half of a pair. Nothing is replaced by U+FFFD.
	CodeInvalidUTF8 int64 = 5380000000210
	// CodeDuplicateMember: an object of the body, at any depth, names a
	// member twice. No duplicate is ignored.
	CodeDuplicateMember int64 = 5380000000211
	// CodeInvalidKey: the {key} path parameter, once percent-decoded, is
	// not valid UTF-8 or holds U+FFFD, which is what invalid bytes become
	// on their way to the function.
	CodeInvalidKey int64 = 5380000000212
	// CodeInvalidSince: the since query parameter is not an RFC 3339
	// time.
	CodeInvalidSince int64 = 5380000000214
)

// codeEntry is one error code of the service: how it answers over HTTP and
// what it means to a reader of docs/errors.md.
type codeEntry struct {
	code   int64
	name   string // the constant, as a caller outside its package names it
	status int    // the HTTP status of its answer
	// origin marks the codes of the store the service comes from.
	origin bool
	// meaning is Markdown for the table of docs/errors.md.
	meaning string
}

// codeTable is the one table of the service's error codes, the core's and
// this package's: [Status] maps a code to its HTTP status by it, and
// docs/errors.md's table is generated from it. A code that has no entry
// answers 500 as [CodeInternal].
//
// Each code has exactly one status: when statuses were set where errors
// were built, no code was built with two (testdata/statuses.txt holds what
// each answered). The statuses that did not come from a code are explicit
// here: an error that is not a *memory.Error answers as CodeInternal; a
// repository that did not answer in time is a code of its own,
// [CodeUnavailable], which [Unavailable] chooses from the cause, never a
// second status of memory.CodeRepository; and the two codes the extractor
// only reports, memory.CodeModelFailed and memory.CodeBadAnswer, keep the
// 502 they were built with, though no route answers with them.
var codeTable = []codeEntry{
	{memory.CodeEmptyFact, "memory.CodeEmptyFact", http.StatusBadRequest, true,
		"a key or a value is empty after trimming (also: a PUT body without `value`)"},
	{memory.CodeFactTooLong, "memory.CodeFactTooLong", http.StatusBadRequest, true,
		"a key or a value set by hand is over maxFactChars; has a userMessage"},
	{memory.CodeModelFailed, "memory.CodeModelFailed", http.StatusBadGateway, true,
		"the cheap-model call failed; reported by the extractor, never an answer of the API"},
	{memory.CodeBadAnswer, "memory.CodeBadAnswer", http.StatusBadGateway, true,
		"the model's answer is not the expected structure; reported by the extractor, nothing written, never an answer of the API"},
	{memory.CodeInvalidID, "memory.CodeInvalidID", http.StatusBadRequest, false,
		fmt.Sprintf("a tenant, user or thread ID is empty, over %d bytes or has a character outside `A-Z a-z 0-9 - _ . : @ \\| + =` (over HTTP: the admin path's userId, invalid UTF-8 included)", memory.MaxIDLen)},
	{memory.CodeConflict, "memory.CodeConflict", http.StatusConflict, false,
		"a write kept losing to concurrent writers; has a userMessage (\"Please try again.\")"},
	{memory.CodeInvalidConfig, "memory.CodeInvalidConfig", http.StatusInternalServerError, false,
		"the configuration is outside its bounds; a function fails at start"},
	{memory.CodeUnknownTool, "memory.CodeUnknownTool", http.StatusBadRequest, false,
		"a tool call names a tool the service does not have; the tools run in a gateway, not on the fact API's routes"},
	{memory.CodeBadToolInput, "memory.CodeBadToolInput", http.StatusBadRequest, false,
		"a tool call's input is not the tool's schema; not on the fact API's routes"},
	{memory.CodeApprovalRequired, "memory.CodeApprovalRequired", http.StatusForbidden, false,
		"the remember tool ran without the user's approval; not on the fact API's routes"},
	{memory.CodeInvalidTurnCount, "memory.CodeInvalidTurnCount", http.StatusBadRequest, false,
		"turn counts are negative or go backwards"},
	{memory.CodeRepository, "memory.CodeRepository", http.StatusInternalServerError, false,
		"the repository (DynamoDB) failed; the cause is logged, never shown"},
	{memory.CodeInvalidKeyChars, "memory.CodeInvalidKeyChars", http.StatusBadRequest, false,
		"a key set or removed by hand (PUT, DELETE, the remember and forget tools) holds a character other than letters, digits, combining marks, spaces, `-`, `_` and `.` (`/v1/me/facts/Bad%20Key!`): refused, never stored under a key with the character dropped; has a userMessage"},
	{memory.CodeInvalidOrigin, "memory.CodeInvalidOrigin", http.StatusBadRequest, false,
		"a PUT body's `origin` is not `manual` or `remember_tool` (`conversation` is the extractor's alone)"},
	{memory.CodePendingNotFound, "memory.CodePendingNotFound", http.StatusNotFound, false,
		"`POST /v1/me/pending/{key}/keep`: no fact waits for the user's yes under the key (never proposed, already answered, or past its `pendingUntil`); has a userMessage"},
	{memory.CodeInvalidValidUntil, "memory.CodeInvalidValidUntil", http.StatusBadRequest, false,
		fmt.Sprintf("a PUT body's `validUntil` is not a date alone `YYYY-MM-DD` (no time; not empty, not null) from today (UTC) to %d days ahead; has a userMessage", memory.MaxValidUntilDays)},
	{memory.CodeSecretRefused, "memory.CodeSecretRefused", http.StatusBadRequest, false,
		"a fact set by hand or by the remember tool looks like a secret (a card number, an IBAN, an API key or token, a private key, a password, a national identity, tax or passport number): never stored; has a userMessage"},
	{memory.CodeInvalidImport, "memory.CodeInvalidImport", http.StatusBadRequest, false,
		fmt.Sprintf("`POST /v1/me/imports`: no `source`, a source over %d characters, neither or both of `text` and `statements`, an empty text or statement, or over %d statements; has a userMessage", memory.MaxImportSourceChars, memory.MaxImportStatements)},
	{memory.CodeImportTooLong, "memory.CodeImportTooLong", http.StatusRequestEntityTooLarge, false,
		fmt.Sprintf("`POST /v1/me/imports`: the text (statements joined by newlines) is over %d characters, or makes more than %d statements once long lines are cut; has a userMessage", memory.MaxImportChars, memory.MaxImportStatements)},
	{memory.CodeImportNotFound, "memory.CodeImportNotFound", http.StatusNotFound, false,
		"`/v1/me/imports/{importId}` (GET, keep, discard): the user's record holds no mark of the import, at once: the ID is made up, another user's or tenant's, or forgotten (the record keeps `memory.MaxImports`); has a userMessage"},
	{memory.CodeImportLimit, "memory.CodeImportLimit", http.StatusTooManyRequests, false,
		fmt.Sprintf("`POST /v1/me/imports`: the user requested %d imports in the last 24 hours; nothing is queued; has a userMessage", memory.MaxImportsPerDay)},
	{memory.CodeEarlierValueUnknown, "memory.CodeEarlierValueUnknown", http.StatusConflict, false,
		"`POST .../threads/{threadId}/changes/{key}/undo`: the thread's setting replaced a value that is no longer kept (the record was full; the change list says `previousUnknown`): nothing changes, the fact is never removed; has a userMessage"},
	{CodeUnauthenticated, "httpapi.CodeUnauthenticated", http.StatusUnauthorized, false,
		"no verified token, or its `sub` or tenant claim is missing or not one valid ID (an array claim, invalid UTF-8 included)"},
	{CodeForbidden, "httpapi.CodeForbidden", http.StatusForbidden, false,
		"the token lacks the route's scope (user scope on /v1/me, admin scope on /v1/users)"},
	{CodeRouteNotFound, "httpapi.CodeRouteNotFound", http.StatusNotFound, false,
		"the function does not serve the request's route key"},
	{CodeMalformedBody, "httpapi.CodeMalformedBody", http.StatusBadRequest, false,
		"the body is not one JSON object (a syntax error, trailing data after it, an array, a string, `null`), `value` or `origin` is not a string, or the base64 body is broken"},
	{CodeUnknownField, "httpapi.CodeUnknownField", http.StatusBadRequest, false,
		"the body has a member other than `value`, `origin` and `validUntil` (on `POST /v1/me/imports`: `source`, `text` and `statements`; names are exact: `Value` is unknown)"},
	{CodeIdentityInBody, "httpapi.CodeIdentityInBody", http.StatusBadRequest, false,
		"the body names a tenant or a user (`tenantId`, `userId`, `sub`…): identity comes from the token only"},
	{CodeBodyTooLarge, "httpapi.CodeBodyTooLarge", http.StatusRequestEntityTooLarge, false,
		fmt.Sprintf("the body is over %d KiB (after base64 decoding); %d KiB on `POST /v1/me/imports`", DefaultMaxBodyBytes/1024, ImportMaxBodyBytes/1024)},
	{CodeUnsupportedMediaType, "httpapi.CodeUnsupportedMediaType", http.StatusUnsupportedMediaType, false,
		"the body is not `application/json` (charset, when given, utf-8)"},
	{CodeInternal, "httpapi.CodeInternal", http.StatusInternalServerError, false,
		"an unexpected failure outside the repository; the cause is logged, never shown"},
	{CodeInvalidUTF8, "httpapi.CodeInvalidUTF8", http.StatusBadRequest, false,
		"the body is not valid UTF-8, or escapes a surrogate that is not half of a pair (`\"\\ud800\"`): nothing is replaced by U+FFFD"},
	{CodeDuplicateMember, "httpapi.CodeDuplicateMember", http.StatusBadRequest, false,
		"an object of the body, at any depth, names a member twice (`{\"value\":\"a\",\"value\":\"b\"}`; names compared after unescaping)"},
	{CodeInvalidKey, "httpapi.CodeInvalidKey", http.StatusBadRequest, false,
		"the `{key}` path parameter, percent-decoded, is not valid UTF-8 or holds U+FFFD (`/v1/me/facts/k%FF%FE`); has a userMessage"},
	{CodeInvalidSince, "httpapi.CodeInvalidSince", http.StatusBadRequest, false,
		"`GET .../threads/{threadId}/changes`: the `since` query parameter is not an RFC 3339 time (`2026-12-06T19:31:00Z`)"},
	{CodeUnavailable, "httpapi.CodeUnavailable", http.StatusServiceUnavailable, false,
		fmt.Sprintf("DynamoDB did not answer within the request's bound (`httpapi.AnswerBound`, %d s), or kept throttling or failing through the SDK's retries; has a userMessage and a `Retry-After` header. On a write: the change may or may not have been applied, never half of it; PUT and DELETE are idempotent, so a retry after `Retry-After` is safe", int(AnswerBound/time.Second))},
}

// statusByCode indexes codeTable.
var statusByCode = func() map[int64]int {
	m := make(map[int64]int, len(codeTable))
	for _, e := range codeTable {
		m[e.code] = e.status
	}
	return m
}()

// Status returns the HTTP status an error with code answers with: that of
// its entry in [codeTable], or 500 for a code that has none.
func Status(code int64) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// StatusOf returns the HTTP status err answers with: that of the code of
// the first *memory.Error in its chain, or 500 for any other error.
func StatusOf(err error) int {
	var e *memory.Error
	if errors.As(err, &e) {
		return Status(e.Code)
	}
	return http.StatusInternalServerError
}

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

// ProblemFor returns the problem that err maps to, its status that of
// [codeTable]. A *memory.Error whose code answers below 500 keeps its
// message and userMessage, and so does [CodeUnavailable], whose messages
// are fixed and name no cause; any other 5xx, and any error that is not a
// *memory.Error of a code in the table, becomes "internal error" with
// nothing of its cause.
func ProblemFor(err error) Problem {
	var e *memory.Error
	status, known := 0, false
	if errors.As(err, &e) {
		status, known = statusByCode[e.Code]
	}
	if !known {
		e, status = &memory.Error{Code: CodeInternal}, Status(CodeInternal)
	}
	p := Problem{
		Type:   TypePrefix + strconv.FormatInt(e.Code, 10),
		Title:  http.StatusText(status),
		Status: status,
		Code:   e.Code,
	}
	if p.Title == "" {
		p.Title = "Error"
	}
	if status >= 500 && e.Code != CodeUnavailable {
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

// fail returns the error of a request refused with code and msg; its
// status is that of codeTable.
func fail(code int64, msg string) *memory.Error {
	return &memory.Error{Code: code, Message: msg}
}
