// Package apigw emulates an API Gateway HTTP API on one machine: the routes
// and JWT authorizer of a SAM template's HTTP API, payload format 2.0
// events to Lambda functions, their responses mapped back, and CORS.
//
// As API Gateway does, it verifies the token (signature against the
// issuer's JWKS, issuer, audience, expiry, not-before, issued-at, the
// route's authorization scopes) before any function runs, answering 401
// {"message":"Unauthorized"} or 403 {"message":"Forbidden"}, and turns a
// function error into 500 {"message":"Internal Server Error"}.
package apigw

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/golang-jwt/jwt/v5"

	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/localtest/lambdapool"
)

// MaxBody is the largest request body an HTTP API accepts: its payload
// size quota, 10 MB. A larger body is answered 413
// {"message":"Request Entity Too Large"} and reaches no function.
const MaxBody = 10 << 20

// MaxInvokePayload is the event size from which Lambda refuses a
// synchronous invocation: its Invoke API answers
// RequestEntityTooLargeException, "Request must be smaller than 6291556
// bytes" (6 MiB + 100 bytes, the Runtime Interface Emulator's
// MaxPayloadSize). The event counts, not the body: a binary body is
// base64-encoded in it, and headers and claims come with it. An HTTP API
// answers such a request 413 {"message":"Request Entity Too Large"}, as
// AWS's Lambda Test Tool emulates it; the function never runs.
const MaxInvokePayload = 6<<20 + 100

// InvokeFunc invokes the function with logical ID fn. Lambda gives the
// invocation its own request ID, not API Gateway's.
type InvokeFunc func(ctx context.Context, fn string, payload []byte) (lambdapool.Result, error)

// Config configures a [Gateway].
type Config struct {
	// API is the HTTP API of the template.
	API *samtemplate.HTTPAPI
	// Keys are the JWKS of each authorizer, by authorizer name.
	Keys map[string]*JWKS
	// Invoke runs a function.
	Invoke InvokeFunc
	// AccountID and APIID go into the events' requestContext.
	AccountID, APIID string
	// Log receives one line per request: route, status, latency; nil
	// discards them. It never receives bodies or tokens.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Gateway is the emulated HTTP API, an http.Handler.
type Gateway struct {
	cfg    Config
	routes []route
}

type route struct {
	samtemplate.Route
	segments []string // path split on "/"; "{name}" for a parameter
}

// New returns a gateway for cfg. It serves the routes an HTTP API takes
// (a method or ANY, literal segments, {name} parameters, a greedy {name+}
// parameter at the end, and $default) and a JWT authorizer that reads the
// token from a header. It fails, saying what, when an authorizer reads
// anything else, when a route names an authorizer the API does not have,
// or one without keys.
func New(cfg Config) (*Gateway, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{cfg: cfg}
	for _, r := range cfg.API.Routes {
		if r.Authorizer == "" {
			r.Authorizer = cfg.API.DefaultAuthorizer
		}
		if r.Authorizer == "NONE" {
			r.Authorizer = ""
		}
		if err := served(r, cfg.API); err != nil {
			return nil, err
		}
		if r.Authorizer != "" {
			if cfg.API.Authorizers[r.Authorizer] == nil {
				return nil, fmt.Errorf("apigw: route %s names authorizer %s, which the API does not have", r.Key(), r.Authorizer)
			}
			if cfg.Keys[r.Authorizer] == nil {
				return nil, fmt.Errorf("apigw: no JWKS for authorizer %s", r.Authorizer)
			}
		}
		rt := route{Route: r}
		if r.Path != DefaultRoute {
			rt.segments = pathSegments(r.Path)
		}
		g.routes = append(g.routes, rt)
	}
	return g, nil
}

// DefaultRoute is the path of an HTTP API's catch-all route, whose route
// key is the path alone.
const DefaultRoute = "$default"

// pathSegments splits a path after its leading slash: "/app" is ["app"]
// and "/app/" is ["app", ""], two paths, as API Gateway documents no
// trailing-slash match for HTTP API routes.
func pathSegments(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// served returns an error naming what the emulator does not serve of
// route r, or nil.
func served(r samtemplate.Route, api *samtemplate.HTTPAPI) error {
	unserved := func(what string) error {
		return fmt.Errorf("apigw: route %s uses %s, which the local API Gateway does not serve: "+
			"it serves a JWT read from a header; add it to localtest/apigw with a test if the template needs it", r.Key(), what)
	}
	if i := strings.Index(r.Path, "+}"); i >= 0 && i != len(r.Path)-2 {
		return fmt.Errorf("apigw: route %s has a greedy path variable before the path's end, which API Gateway refuses", r.Key())
	}
	if a := api.Authorizers[r.Authorizer]; a != nil && !strings.HasPrefix(a.IdentitySource, "$request.header.") {
		return unserved("the identity source " + a.IdentitySource)
	}
	return nil
}

// message writes API Gateway's own JSON answer.
func message(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"message":%q}`, msg)
}

// ServeHTTP answers one request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	reqID := requestID()
	rec.Header().Set("Apigw-Requestid", reqID)
	routeKey := g.serve(rec, r, reqID)
	g.cfg.Log.Info("request", "requestId", reqID, "method", r.Method, "routeKey", routeKey,
		"status", rec.status, "ms", time.Since(start).Milliseconds())
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, reqID string) string {
	origin := r.Header.Get("Origin")
	if g.preflight(w, r, origin) {
		return "OPTIONS (CORS preflight)"
	}
	g.corsHeaders(w.Header(), origin)
	rt, params, ok := g.match(r.Method, r.URL.EscapedPath())
	if !ok {
		message(w, http.StatusNotFound, "Not Found")
		return "-"
	}
	var claims map[string]any
	if rt.Authorizer != "" {
		var status int
		var why string
		claims, status, why = g.authorize(r, rt)
		if status != http.StatusOK {
			g.cfg.Log.Warn("token refused", "requestId", reqID, "routeKey", rt.Key(), "status", status, "reason", why)
			if status == http.StatusUnauthorized {
				w.Header().Set("Www-Authenticate", "Bearer")
				message(w, status, "Unauthorized")
			} else {
				message(w, status, "Forbidden")
			}
			return rt.Key()
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		message(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return rt.Key()
	}
	ev := g.event(r, rt, params, claims, body, reqID)
	payload, err := json.Marshal(ev)
	if err != nil {
		message(w, http.StatusInternalServerError, "Internal Server Error")
		return rt.Key()
	}
	if len(payload) >= MaxInvokePayload {
		g.cfg.Log.Warn("the event is too large for a synchronous Lambda invocation; the function was not invoked",
			"requestId", reqID, "function", rt.Function, "eventBytes", len(payload), "limit", MaxInvokePayload-1)
		message(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return rt.Key()
	}
	res, err := g.cfg.Invoke(r.Context(), rt.Function, payload)
	if err != nil || res.Err != nil {
		if err != nil {
			g.cfg.Log.Error("invoke failed", "requestId", reqID, "function", rt.Function, "err", err)
		} else {
			g.cfg.Log.Error("function error", "requestId", reqID, "function", rt.Function, "errorType", res.Err.Type)
		}
		message(w, http.StatusInternalServerError, "Internal Server Error")
		return rt.Key()
	}
	if err := writeResponse(w, res.Payload); err != nil {
		g.cfg.Log.Error("malformed function response", "requestId", reqID, "function", rt.Function, "err", err)
		message(w, http.StatusInternalServerError, "Internal Server Error")
	}
	return rt.Key()
}

// match finds the route for method and path as API Gateway documents
// it ("Routing API requests", Amazon API Gateway developer guide,
// https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-routes.html,
// read 2026-12-07): a full match of route and method first, then a match
// with a greedy path variable, then the $default route. A route of the
// request's method wins over an ANY route, and of two full matches the
// one with more literal segments wins. Nothing else matches: "/app/" is
// not "/app".
func (g *Gateway) match(method, escapedPath string) (route, map[string]string, bool) {
	segs := pathSegments(escapedPath)
	best, bestRank := -1, -1
	var bestParams map[string]string
	for i, rt := range g.routes {
		if rt.segments == nil || (rt.Method != method && rt.Method != "ANY") {
			continue
		}
		params, literal, greedy, ok := matchPath(rt.segments, segs)
		if !ok {
			continue
		}
		// Full before greedy, the method before ANY, then literals.
		rank := literal
		if rt.Method == method {
			rank += 1 << 10
		}
		if !greedy {
			rank += 1 << 20
		}
		if rank > bestRank {
			best, bestRank, bestParams = i, rank, params
		}
	}
	if best >= 0 {
		return g.routes[best], bestParams, true
	}
	for _, rt := range g.routes {
		if rt.Path == DefaultRoute {
			return rt, nil, true
		}
	}
	return route{}, nil, false
}

// matchPath matches the segments of a path against those of a route's
// path, and returns the parameters, unescaped, how many segments were
// literal, and whether a greedy parameter took the rest. A parameter
// takes one segment that is not empty; a greedy one, the rest of the
// path, one segment or more, not empty.
func matchPath(pattern, segs []string) (map[string]string, int, bool, bool) {
	params := map[string]string{}
	literal := 0
	for i, p := range pattern {
		name, isParam := strings.CutPrefix(p, "{")
		isParam = isParam && strings.HasSuffix(name, "}")
		name = strings.TrimSuffix(name, "}")
		if rest, greedy := strings.CutSuffix(name, "+"); isParam && greedy {
			if i >= len(segs) {
				return nil, 0, false, false
			}
			v, err := url.PathUnescape(strings.Join(segs[i:], "/"))
			if v == "" || err != nil {
				return nil, 0, false, false
			}
			params[rest] = v
			return params, literal, true, true
		}
		if i >= len(segs) {
			return nil, 0, false, false
		}
		if isParam {
			v, err := url.PathUnescape(segs[i])
			if segs[i] == "" || err != nil {
				return nil, 0, false, false
			}
			params[name] = v
			continue
		}
		if p != segs[i] {
			return nil, 0, false, false
		}
		literal++
	}
	return params, literal, false, len(pattern) == len(segs)
}

// authorize verifies the request's token for rt and returns its claims,
// or 401 (no valid token) or 403 (no scope of the route) with the reason,
// for the log: what was wrong with the token, never the token itself nor
// a claim's value.
func (g *Gateway) authorize(r *http.Request, rt route) (map[string]any, int, string) {
	a := g.cfg.API.Authorizers[rt.Authorizer]
	raw := identity(r, a.IdentitySource)
	if raw == "" {
		return nil, http.StatusUnauthorized, "missing: no token in " + strings.TrimPrefix(a.IdentitySource, "$request.header.")
	}
	p := jwt.NewParser(
		jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithIssuer(a.Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(g.cfg.Now),
		jwt.WithJSONNumber(),
	)
	claims := jwt.MapClaims{}
	if _, err := p.ParseWithClaims(raw, claims, g.cfg.Keys[rt.Authorizer].keyfunc(r.Context())); err != nil {
		return nil, http.StatusUnauthorized, refusal(err)
	}
	if !audienceOK(claims, a.Audience) {
		return nil, http.StatusUnauthorized, "wrong audience: neither aud nor client_id is an audience of the authorizer " + rt.Authorizer
	}
	if len(rt.Scopes) > 0 {
		have := scopes(claims)
		if !slices.ContainsFunc(rt.Scopes, func(s string) bool { return slices.Contains(have, s) }) {
			return nil, http.StatusForbidden, "no scope of the route (it needs one of " + strings.Join(rt.Scopes, ", ") + ")"
		}
	}
	return claims, http.StatusOK, ""
}

// refusal names what is wrong with a token the parser refused, from the
// class of its error alone: the error's text is never logged, as it may
// quote the token.
func refusal(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "malformed: not a JWT"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "unverifiable: no key of the JWKS matches its kid, or the JWKS could not be read"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "bad signature, or not signed with RS256"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "invalid claims: no exp"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "expired: its exp is past (mint a new one)"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued), errors.Is(err, jwt.ErrTokenNotValidYet):
		return "not valid yet: its iat or nbf is in the future"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "wrong issuer: its iss is not the authorizer's issuer"
	case errors.Is(err, jwt.ErrTokenInvalidClaims):
		return "invalid claims: exp, iat or nbf missing or not a number"
	default:
		return "invalid token"
	}
}

// identity reads the token from the identity source, a header such as
// $request.header.Authorization, dropping a "Bearer " prefix.
func identity(r *http.Request, source string) string {
	v := strings.TrimSpace(r.Header.Get(strings.TrimPrefix(source, "$request.header.")))
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		v = strings.TrimSpace(v[7:])
	}
	return v
}

// audienceOK checks aud, or client_id when the token has no aud, against
// the authorizer's audiences, as API Gateway does.
func audienceOK(c jwt.MapClaims, allowed []string) bool {
	var have []string
	switch aud := c["aud"].(type) {
	case string:
		have = []string{aud}
	case []any:
		for _, a := range aud {
			if s, ok := a.(string); ok {
				have = append(have, s)
			}
		}
	case nil:
		if id, ok := c["client_id"].(string); ok {
			have = []string{id}
		}
	}
	for _, h := range have {
		if slices.Contains(allowed, h) {
			return true
		}
	}
	return false
}

// scopes returns the token's scopes: the space-separated scope claim, or
// the scp claim (a string or a list).
func scopes(c jwt.MapClaims) []string {
	var out []string
	for _, name := range []string{"scope", "scp"} {
		switch v := c[name].(type) {
		case string:
			out = append(out, strings.Fields(v)...)
		case []any:
			for _, s := range v {
				if str, ok := s.(string); ok {
					out = append(out, str)
				}
			}
		}
	}
	return out
}

// claimString renders a claim as API Gateway passes it to the function:
// strings as they are, numbers as written, lists as "[a b]".
func claimString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = claimString(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(v))
		for _, k := range sortedKeys(v) {
			parts = append(parts, k+"="+claimString(v[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (g *Gateway) event(r *http.Request, rt route, params map[string]string, claims map[string]any, body []byte, reqID string) events.APIGatewayV2HTTPRequest {
	now := g.cfg.Now()
	sourceIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	headers, cookies := forwardedHeaders(r, sourceIP, len(body), now)
	var query map[string]string
	if r.URL.RawQuery != "" {
		query = map[string]string{}
		for k, vs := range r.URL.Query() {
			query[k] = strings.Join(vs, ",")
		}
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              rt.Key(),
		RawPath:               r.URL.Path,
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     rt.Key(),
			AccountID:    g.cfg.AccountID,
			Stage:        "$default",
			RequestID:    reqID,
			APIID:        g.cfg.APIID,
			DomainName:   r.Host,
			DomainPrefix: strings.Split(r.Host, ".")[0],
			Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  sourceIP,
				UserAgent: r.UserAgent(),
			},
		},
	}
	if len(params) > 0 {
		ev.PathParameters = params
	}
	if claims != nil {
		ev.RequestContext.Authorizer = authorizer(claims, rt)
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type")) && utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	return ev
}

// forwardedHeaders returns the headers of r as API Gateway hands them to
// a function (lower-case names, repeated values joined by commas, the
// forwarding headers and a trace ID added) and its cookies, which it
// hands apart.
func forwardedHeaders(r *http.Request, sourceIP string, bodyLen int, now time.Time) (map[string]string, []string) {
	headers := map[string]string{}
	var cookies []string
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if lk == "cookie" {
			for _, v := range vs {
				for c := range strings.SplitSeq(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[lk] = strings.Join(vs, ",")
	}
	headers["host"] = r.Host
	headers["content-length"] = strconv.Itoa(bodyLen)
	headers["x-forwarded-for"] = sourceIP
	headers["x-forwarded-proto"] = "http"
	if _, port, err := net.SplitHostPort(r.Host); err == nil {
		headers["x-forwarded-port"] = port
	}
	if headers["x-amzn-trace-id"] == "" {
		headers["x-amzn-trace-id"] = traceID(now)
	}
	return headers, cookies
}

// authorizer returns the JWT authorizer's context of a request with
// claims on route rt: every claim as a string, and the scopes when the
// route asks for some.
func authorizer(claims map[string]any, rt route) *events.APIGatewayV2HTTPRequestContextAuthorizerDescription {
	jwtDesc := &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{}}
	for k, v := range claims {
		jwtDesc.Claims[k] = claimString(v)
	}
	if len(rt.Scopes) > 0 {
		jwtDesc.Scopes = scopes(claims)
	}
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: jwtDesc}
}

// isText reports whether API Gateway passes a body of this type as text;
// other bodies are base64-encoded.
func isText(contentType string) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	switch {
	case strings.HasPrefix(ct, "text/"),
		ct == "application/json", strings.HasSuffix(ct, "+json"),
		ct == "application/xml", strings.HasSuffix(ct, "+xml"),
		ct == "application/javascript", ct == "application/x-www-form-urlencoded":
		return true
	}
	return false
}

// writeResponse maps a payload 2.0 function response to HTTP. A response
// without statusCode is a body: 200, application/json, as API Gateway
// infers it.
func writeResponse(w http.ResponseWriter, payload []byte) error {
	var probe map[string]json.RawMessage
	if json.Unmarshal(payload, &probe) != nil || probe["statusCode"] == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(bytes.TrimSpace(payload))
		return nil
	}
	var resp struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
		Cookies           []string            `json:"cookies"`
	}
	if err := json.Unmarshal(payload, &resp); err != nil {
		return err
	}
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return fmt.Errorf("statusCode %d", resp.StatusCode)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return fmt.Errorf("body is not base64: %w", err)
		}
	}
	h := w.Header()
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for _, c := range resp.Cookies {
		h.Add("Set-Cookie", c)
	}
	if h.Get("Content-Type") == "" && len(body) > 0 {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	return nil
}

// requestID returns an ID in the form of API Gateway's, such as
// "CbW5cgQ3IAMEbXw=".
func requestID() string {
	return rand.Text()[:15] + "="
}

func traceID(now time.Time) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return fmt.Sprintf("Root=1-%08x-%s", now.Unix(), hex.EncodeToString(b))
}
