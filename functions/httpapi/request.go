package httpapi

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
)

// DefaultMaxBodyBytes is the default limit of a request body, decoded: a
// value of memory.MaxFactCharsUpperBound runes of 4 bytes, escaped, fits with room.
const DefaultMaxBodyBytes = 16 * 1024

// ImportMaxBodyBytes is the limit of the body of POST /v1/me/imports, a
// pasted memory list: memory.MaxImportChars characters of up to 4 bytes,
// JSON-escaped, fit with room.
const ImportMaxBodyBytes = 128 * 1024

// RequestConfig says how a request is read: its identity from its verified
// token claims, and the largest body. The zero value of a field means its
// default (setup's, or DefaultMaxBodyBytes).
type RequestConfig struct {
	// TenantClaim names the claim that holds the tenant ID.
	TenantClaim string
	// UserScope and AdminScope are the scopes of the /v1/me and the
	// /v1/users routes.
	UserScope, AdminScope string
	// MaxBodyBytes is the largest body accepted, after base64 decoding.
	MaxBodyBytes int
}

func (a RequestConfig) withDefaults() RequestConfig {
	if a.TenantClaim == "" {
		a.TenantClaim = setup.DefaultTenantClaim
	}
	if a.UserScope == "" {
		a.UserScope = setup.DefaultUserScope
	}
	if a.AdminScope == "" {
		a.AdminScope = setup.DefaultAdminScope
	}
	if a.MaxBodyBytes <= 0 {
		a.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return a
}

// Request is a decoded request: whose facts it reads or writes, who asks,
// and its input.
type Request struct {
	// Scope is the user whose facts the request reads or writes: the
	// token's own user on /v1/me routes, the path's userId in the token's
	// tenant on /v1/users routes.
	Scope memory.Scope
	// Caller is the token's subject.
	Caller string
	// Admin is true on /v1/users routes.
	Admin bool
	// Key is the {key} path parameter as API Gateway passes it (decoded
	// once, by API Gateway); "" on routes without one.
	Key string
	// ThreadID is the {threadId} path parameter, a valid memory ID; ""
	// on routes without one.
	ThreadID string
	// Since is the since query parameter of GET
	// .../threads/{threadId}/changes, RFC 3339; zero when absent (all
	// changes).
	Since time.Time
	// Value is the body's value on routes that take a body.
	Value string
	// Origin is the body's origin on routes that take a body:
	// memory.OriginManual when the body names none.
	Origin memory.Origin
	// ValidUntil is the body's validUntil on routes that take a body,
	// "YYYY-MM-DD", unchecked (memory.Store.Put checks it); "" when the
	// body names none.
	ValidUntil string
	// ImportID is the {importId} path parameter, a valid memory ID; ""
	// on routes without one.
	ImportID string
	// Body is the raw JSON body of a route whose function reads the body
	// itself (POST /v1/me/imports), checked by the rules of every body:
	// its media type, its size, one JSON value in UTF-8 without a member
	// twice; "" on other routes.
	Body string
	// RequestID is API Gateway's request ID.
	RequestID string
	// Route is the route key, as template.yaml names it: a function that
	// serves several routes tells them apart by it.
	Route string
}

// route is one route a function serves, parsed from its route key.
type route struct {
	key     string // "PUT /v1/me/facts/{key}", as in template.yaml
	admin   bool   // /v1/users/{userId}...
	hasKey  bool   // has a {key} path parameter
	thread  bool   // has a {threadId} path parameter
	since   bool   // takes the since query parameter (GET .../changes)
	body    bool   // takes the JSON body {"value": "…", "origin": "…", "validUntil": "…"}
	pending bool   // under /v1/me/pending/: the user's answer to a pending fact
	imports bool   // under /v1/me/imports: an import, or the user's answer to its facts
	impID   bool   // has an {importId} path parameter
	rawBody bool   // takes a JSON body its function reads (POST /v1/me/imports)
	action  string // what it does: read, export, put, delete, clear, forget_thread, undo, erase, keep, discard, import, keep_import, discard_import
}

// audited reports whether a request on r writes an audit line: every
// admin route, every export, every answer to a pending fact, and every
// import and answer to one (docs/api.md, "Audit").
func (r route) audited() bool {
	return r.admin || r.action == "export" || r.pending || (r.imports && r.action != "read")
}

func parseRoute(key string) (route, error) {
	method, path, ok := strings.Cut(key, " ")
	if !ok || !strings.HasPrefix(path, "/v1/") {
		return route{}, fmt.Errorf("httpapi: malformed route key %q", key)
	}
	r := route{key: key, hasKey: strings.Contains(path, "/{key}"), body: method == http.MethodPut,
		pending: strings.HasPrefix(path, "/v1/me/pending/"), thread: strings.Contains(path, "/{threadId}")}
	r.since = r.thread && method == http.MethodGet && strings.HasSuffix(path, "/changes")
	r.imports, r.impID = strings.HasPrefix(path, "/v1/me/imports"), strings.Contains(path, "/{importId}")
	r.rawBody = r.imports && method == http.MethodPost && !r.impID
	switch {
	case r.rawBody:
		r.action = "import"
	case r.impID && method == http.MethodPost && strings.HasSuffix(path, "/keep"):
		r.action = "keep_import"
	case r.impID && method == http.MethodDelete:
		r.action = "discard_import"
	case r.thread && method == http.MethodDelete:
		r.action = "forget_thread"
	case r.thread && method == http.MethodPost && strings.HasSuffix(path, "/undo"):
		r.action = "undo"
	case r.pending && method == http.MethodPost && strings.HasSuffix(path, "/keep"):
		r.action = "keep"
	case r.pending && method == http.MethodDelete:
		r.action = "discard"
	case method == http.MethodGet && strings.HasSuffix(path, "/export"):
		r.action = "export"
	case method == http.MethodGet:
		r.action = "read"
	case method == http.MethodPut:
		r.action = "put"
	case method == http.MethodDelete && r.hasKey:
		r.action = "delete"
	case method == http.MethodDelete && strings.HasSuffix(path, "/facts"):
		r.action = "clear"
	case method == http.MethodDelete:
		r.action = "erase"
	default:
		r.action = strings.ToLower(method)
	}
	switch {
	case strings.HasPrefix(path, "/v1/me/"):
	case strings.HasPrefix(path, "/v1/users/{userId}"):
		r.admin = true
	default:
		return route{}, fmt.Errorf("httpapi: route %q is neither under /v1/me nor /v1/users/{userId}", key)
	}
	return r, nil
}

// decode turns req, whose route is r, into a Request. Every error is a
// 4xx *memory.Error; with an error, the Request holds what was decoded
// before it (for the log), and must not be acted on.
func (a RequestConfig) decode(r route, req events.APIGatewayV2HTTPRequest) (Request, error) {
	out := Request{Admin: r.admin, RequestID: req.RequestContext.RequestID, Route: r.key}
	var jwt *events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription
	if req.RequestContext.Authorizer != nil {
		jwt = req.RequestContext.Authorizer.JWT
	}
	if jwt == nil {
		return out, fail(CodeUnauthenticated, "no verified token")
	}
	// A claim that is not valid UTF-8 is not one valid ID either (IDs are
	// ASCII): like any malformed identity, it is a 401.
	sub, ok := singleClaim(jwt.Claims, "sub")
	if !ok {
		return out, fail(CodeUnauthenticated, "the token's sub claim is missing or malformed")
	}
	tenant, ok := singleClaim(jwt.Claims, a.TenantClaim)
	if !ok {
		return out, fail(CodeUnauthenticated,
			"the token's "+a.TenantClaim+" claim is missing or malformed")
	}
	out.Caller = sub
	// On an admin route the user is the path's userId, in the token's
	// tenant: an admin acts in their own tenant. It is set before the
	// scope check so that the audit line of a refused attempt names its
	// target; an ID is ASCII, so a path that is not valid UTF-8 fails
	// ValidID too.
	out.Scope = memory.Scope{TenantID: tenant, UserID: sub}
	user := req.PathParameters["userId"]
	if r.admin {
		out.Scope.UserID = ""
		if memory.ValidID(user) {
			out.Scope.UserID = user
		}
	}
	need := a.UserScope
	if r.admin {
		need = a.AdminScope
	}
	if !hasScope(jwt, need) {
		return out, fail(CodeForbidden, "the token lacks the scope "+need)
	}
	if r.admin && !memory.ValidID(user) {
		return out, fail(memory.CodeInvalidID, "invalid user ID in the path")
	}
	if r.hasKey {
		// API Gateway HTTP APIs decode the path once before the function
		// runs: pathParameters hold decoded values. Decoding again would
		// let "%2541" become "A", so the key is taken as is.
		key := req.PathParameters["key"]
		if err := checkKey(key); err != nil {
			return out, err
		}
		out.Key = key
	}
	if r.thread {
		id := req.PathParameters["threadId"]
		if !memory.ValidID(id) {
			return out, fail(memory.CodeInvalidID, "invalid thread ID in the path")
		}
		out.ThreadID = id
	}
	if err := a.decodeMore(r, req, &out); err != nil {
		return out, err
	}
	if r.body {
		b, err := a.decodeBody(req)
		if err != nil {
			return out, err
		}
		out.Value, out.Origin, out.ValidUntil = b.value, b.origin, b.validUntil
	}
	return out, nil
}

// decodeMore sets on out the input of the routes that take one of these:
// the {importId} path parameter, a valid ID; the raw body of POST
// /v1/me/imports, checked as every body is ([RequestConfig.rawBody]), its
// members the function's to read; the since query parameter of GET
// .../changes, an RFC 3339 time.
func (a RequestConfig) decodeMore(r route, req events.APIGatewayV2HTTPRequest, out *Request) error {
	if r.impID {
		id := req.PathParameters["importId"]
		if !memory.ValidID(id) {
			return fail(memory.CodeInvalidID, "invalid import ID in the path")
		}
		out.ImportID = id
	}
	if r.rawBody {
		raw, err := a.rawBody(req)
		if err != nil {
			return err
		}
		out.Body = string(raw)
	}
	if r.since {
		if v, ok := req.QueryStringParameters["since"]; ok {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return fail(CodeInvalidSince, "the since query parameter is not an RFC 3339 time")
			}
			out.Since = t
		}
	}
	return nil
}

// checkKey refuses a path key that is not text: bytes that are not UTF-8,
// or U+FFFD, the replacement character. Invalid bytes in a path reach the
// function as U+FFFD, because the event is JSON and its encoders replace
// them; memory.CanonicalKey would then drop the character as punctuation,
// so that "k%FF%FE" named the fact "k". Both are refused, never rewritten.
func checkKey(key string) error {
	if !utf8.ValidString(key) || strings.ContainsRune(key, utf8.RuneError) {
		return &memory.Error{Code: CodeInvalidKey,
			Message:     "the key in the path is not valid UTF-8 text once percent-decoded",
			UserMessage: "The name of a fact must be plain text."}
	}
	return nil
}

// singleClaim returns the claim name as one valid ID. API Gateway passes
// every claim as a string; an array claim arrives as "[a b]", which is
// not one ID and so fails like any other malformed value.
func singleClaim(claims map[string]string, name string) (string, bool) {
	v, ok := claims[name]
	if !ok || !memory.ValidID(v) {
		return "", false
	}
	return v, true
}

// hasScope reports whether the token grants scope: in the authorizer's
// scopes, in the space-separated scope claim, or in the scp claim, which
// may be an array claim that API Gateway flattened to "[a b]".
func hasScope(jwt *events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription, scope string) bool {
	if scope == "" {
		return false
	}
	for _, s := range jwt.Scopes {
		if s == scope {
			return true
		}
	}
	for _, name := range []string{"scope", "scp"} {
		for _, s := range ClaimList(jwt.Claims[name]) {
			if s == scope {
				return true
			}
		}
	}
	return false
}

// ClaimList splits a claim that API Gateway passed as a string into its
// items: "a b" (an OAuth scope string), "[a b]" (an array claim as API
// Gateway flattens it) and `["a","b"]` (a JSON array) all give [a b].
func ClaimList(v string) []string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		var list []string
		if json.Unmarshal([]byte(v), &list) == nil {
			return list
		}
		v = v[1 : len(v)-1]
	}
	return strings.Fields(v)
}

// putBody is the decoded body of a PUT.
type putBody struct {
	value      string
	origin     memory.Origin
	validUntil string
}

// putJSON is the JSON form of a PUT body. Its members stay raw, so that a
// null is told apart from a missing member; names match exactly, as
// go-json-experiment matches them by default ("Value" is unknown), and
// every other member lands in unknown.
type putJSON struct {
	Value      jsontext.Value            `json:"value"`
	Origin     jsontext.Value            `json:"origin"`
	ValidUntil jsontext.Value            `json:"validUntil"`
	Unknown    map[string]jsontext.Value `json:",unknown"`
}

// decodeBody returns the members of a PUT body: exactly one JSON object
// whose members are "value", a string, optionally "origin", manual or
// remember_tool (memory.OriginManual when left out), and optionally
// "validUntil", a string (checked by the core; null and "" are refused:
// a lasting fact leaves the member out). The body
// is checked first by [checkJSON]: whatever a decoder would have to
// rewrite to read it is refused.
func (a RequestConfig) decodeBody(req events.APIGatewayV2HTTPRequest) (putBody, error) {
	body, err := a.bodyMembers(req)
	if err != nil {
		return putBody{}, err
	}
	if body.Value == nil || body.Value.Kind() == 'n' {
		return putBody{}, &memory.Error{Code: memory.CodeEmptyFact,
			Message: `the body has no "value"`, UserMessage: "Write what should be remembered."}
	}
	b := putBody{origin: memory.OriginManual}
	if err := json.Unmarshal(body.Value, &b.value); err != nil {
		return putBody{}, fail(CodeMalformedBody, `the body's "value" must be a string`)
	}
	if body.Origin != nil {
		var o string
		if err := json.Unmarshal(body.Origin, &o); err != nil {
			return putBody{}, fail(CodeMalformedBody, `the body's "origin" must be a string`)
		}
		b.origin = memory.Origin(o)
		if err := memory.CheckWriteOrigin(b.origin); err != nil {
			return putBody{}, err
		}
	}
	if body.ValidUntil != nil {
		err := json.Unmarshal(body.ValidUntil, &b.validUntil)
		if err != nil || body.ValidUntil.Kind() == 'n' || b.validUntil == "" {
			return putBody{}, &memory.Error{Code: memory.CodeInvalidValidUntil,
				Message:     `the body's "validUntil" must be a date "YYYY-MM-DD"`,
				UserMessage: "Give the last day as a date, like 2026-12-31."}
		}
	}
	return b, nil
}

// bodyMembers returns the members of a PUT body, checked: its media type,
// size and JSON ([checkJSON]), one object, no identity member, no member
// other than "value", "origin" and "validUntil".
func (a RequestConfig) bodyMembers(req events.APIGatewayV2HTTPRequest) (putJSON, error) {
	raw, err := a.rawBody(req)
	if err != nil {
		return putJSON{}, err
	}
	var body putJSON
	if jsontext.Value(bytes.TrimSpace(raw)).Kind() != '{' || json.Unmarshal(raw, &body) != nil {
		return putJSON{}, fail(CodeMalformedBody, `the body must be a JSON object {"value": "…"}`)
	}
	// Look for identity members first, to say why they are refused.
	for name := range body.Unknown {
		switch strings.ToLower(name) {
		case "tenantid", "tenant_id", "userid", "user_id", "sub", "tenant", "user":
			return putJSON{}, fail(CodeIdentityInBody,
				"the body may not name a tenant or a user: they come from the token")
		}
	}
	if len(body.Unknown) > 0 {
		return putJSON{}, fail(CodeUnknownField, `the body's members are "value" and, optionally, "origin" and "validUntil"`)
	}
	return body, nil
}

// rawBody returns the bytes of a PUT body, checked: its media type, its
// size after base64 decoding, and its JSON ([checkJSON]).
func (a RequestConfig) rawBody(req events.APIGatewayV2HTTPRequest) ([]byte, error) {
	if err := checkContentType(req.Headers); err != nil {
		return nil, err
	}
	raw := []byte(req.Body)
	if req.IsBase64Encoded {
		if base64.StdEncoding.DecodedLen(len(raw)) > a.MaxBodyBytes+2 {
			return nil, tooLarge(a.MaxBodyBytes)
		}
		dec, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return nil, fail(CodeMalformedBody, "the body's base64 encoding is malformed")
		}
		raw = dec
	}
	if len(raw) > a.MaxBodyBytes {
		return nil, tooLarge(a.MaxBodyBytes)
	}
	return raw, checkJSON(raw)
}

// checkJSON refuses a body that a JSON decoder reads only by rewriting or
// dropping part of it, with a 400 *memory.Error. go-json-experiment's
// jsontext refuses all of it by default; checkJSON asks it again with one
// allowance fewer at each step, so that the first failure, in the order
// docs/api.md gives, answers:
//
//   - CodeInvalidUTF8 for bytes that are not UTF-8 (RFC 8259 section 8.1);
//   - CodeMalformedBody for text that is not exactly one JSON value:
//     syntax errors, and trailing data after the value (white space
//     aside);
//   - CodeInvalidUTF8 for an escaped surrogate that is not half of a pair
//     ("\ud800"), which encoding/json would turn into U+FFFD (RFC 7493,
//     I-JSON, section 2.1);
//   - CodeDuplicateMember for an object, at any depth, that names a
//     member twice, compared after unescaping ("a" and "\u0061" are the
//     same name), where encoding/json keeps the last silently (RFC 7493
//     section 2.3).
//
// What the value must be (one object, its members) is checked afterwards
// by [RequestConfig.bodyMembers].
func checkJSON(raw []byte) error {
	if !utf8.Valid(raw) {
		return fail(CodeInvalidUTF8, "the body is not valid UTF-8")
	}
	v := jsontext.Value(raw)
	if !v.IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) {
		return fail(CodeMalformedBody, `the body must be one JSON object {"value": "…"}`)
	}
	if !v.IsValid(jsontext.AllowDuplicateNames(true)) {
		return fail(CodeInvalidUTF8,
			`the body escapes a surrogate that is not half of a pair (such as \ud800): it is not Unicode text`)
	}
	var serr *jsontext.SyntacticError
	if err := json.Unmarshal(raw, new(jsontext.Value)); errors.As(err, &serr) {
		return fail(CodeDuplicateMember,
			"the body names the member "+quoteShort(serr.JSONPointer.LastToken())+" twice in one object")
	}
	return nil
}

// quoteShort quotes a member name for an error message, cut to 40 runes.
func quoteShort(name string) string {
	if utf8.RuneCountInString(name) > 40 {
		name = string([]rune(name)[:40]) + "…"
	}
	return fmt.Sprintf("%q", name)
}

func tooLarge(limit int) error {
	return fail(CodeBodyTooLarge, fmt.Sprintf("the body is over %d bytes", limit))
}

// checkContentType accepts application/json, with a charset of utf-8 if
// one is given. Header names arrive in lower case from API Gateway.
func checkContentType(headers map[string]string) error {
	ct := ""
	for k, v := range headers {
		if strings.EqualFold(k, "content-type") {
			ct = v
		}
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return fail(CodeUnsupportedMediaType, "the body must be application/json")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return fail(CodeUnsupportedMediaType, "the body must be UTF-8")
	}
	return nil
}

// RequestConfigOf returns the RequestConfig that settings name.
func RequestConfigOf(s setup.Settings) RequestConfig {
	return RequestConfig{TenantClaim: s.TenantClaim, UserScope: s.UserScope, AdminScope: s.AdminScope}
}
