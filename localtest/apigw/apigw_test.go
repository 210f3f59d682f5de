package apigw

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/localtest/lambdapool"
	"github.com/usermemory/usermemory/localtest/token"
)

const (
	issuerURL = "https://issuer.test"
	audience  = "api-test"
)

// fake records the events the gateway sends and answers with a fixed
// result.
type fake struct {
	mu     sync.Mutex
	log    logBuffer
	events []events.APIGatewayV2HTTPRequest
	fns    []string
	result lambdapool.Result
	err    error
}

func (f *fake) invoke(_ context.Context, fn string, payload []byte) (lambdapool.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		panic(err)
	}
	f.events = append(f.events, ev)
	f.fns = append(f.fns, fn)
	return f.result, f.err
}

func setup(t *testing.T) (*httptest.Server, *token.Issuer, *fake) {
	t.Helper()
	iss, err := token.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(iss.Handler(issuerURL))
	t.Cleanup(jwks.Close)
	api := &samtemplate.HTTPAPI{
		LogicalID:         "HttpApi",
		DefaultAuthorizer: "Jwt",
		Authorizers: map[string]*samtemplate.Authorizer{"Jwt": {
			Name: "Jwt", Issuer: issuerURL, Audience: []string{"other", audience}, IdentitySource: "$request.header.Authorization",
		}},
		CORS: &samtemplate.CORS{AllowOrigins: []string{"https://app.test"}, AllowMethods: []string{"GET", "PUT"}, AllowHeaders: []string{"authorization", "content-type"}, MaxAge: 60},
		Routes: []samtemplate.Route{
			{Method: "GET", Path: "/v1/me/facts", Function: "Get", Scopes: []string{"memory/user"}},
			{Method: "PUT", Path: "/v1/me/facts/{key}", Function: "Put", Scopes: []string{"memory/user"}},
			{Method: "DELETE", Path: "/v1/me/facts/{key}", Function: "Delete", Scopes: []string{"memory/user"}},
			{Method: "GET", Path: "/v1/me/facts/special", Function: "Special", Scopes: []string{"memory/user"}},
			{Method: "GET", Path: "/files/{name}", Function: "Files", Authorizer: "NONE"},
			{Method: "GET", Path: "/v1/users/{userId}/facts", Function: "Admin", Scopes: []string{"memory/admin"}},
		},
	}
	f := &fake{result: lambdapool.Result{Payload: []byte(`{"statusCode":200,"body":"ok"}`)}}
	gw, err := New(Config{API: api, Keys: map[string]*JWKS{"Jwt": NewJWKS(jwks.URL + token.JWKSPath)}, Invoke: f.invoke,
		AccountID: "123456789012", APIID: "httpapi", Log: slog.New(slog.NewTextHandler(&f.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv, iss, f
}

// tampered returns tok with its signature's first byte changed.
func tampered(tok string) string {
	i := strings.LastIndexByte(tok, '.') + 1
	c := byte('A')
	if tok[i] == 'A' {
		c = 'B'
	}
	return tok[:i] + string(c) + tok[i+1:]
}

// logBuffer is the gateway's log, written by the requests' goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take returns what was logged since the last take.
func (l *logBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

func signed(t *testing.T, iss *token.Issuer, mutate func(*token.Claims)) string {
	t.Helper()
	c := token.Claims{Issuer: issuerURL, Audience: audience, Subject: "u-1", TenantClaim: "tenant_id", Tenant: "acme",
		Scopes: []string{"memory/user"}, Extra: map[string]any{"groups": []string{"a", "b"}, "n": 12345678901, "ok": true}}
	if mutate != nil {
		mutate(&c)
	}
	tok, err := iss.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestEventIsPayloadFormat2(t *testing.T) {
	srv, iss, f := setup(t)
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/me/facts/Home%20City?a=1&a=2&b=x%20y", strings.NewReader(`{"value":"Lisbon"}`))
	req.Header.Set("Authorization", "Bearer "+signed(t, iss, nil))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "c1=v1; c2=v2")
	req.Header.Add("X-Multi", "one")
	req.Header.Add("X-Multi", "two")
	req.Header.Set("User-Agent", "tester/1")
	resp, body := do(t, req)
	if resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("got %d %q, want 200 ok", resp.StatusCode, body)
	}
	if len(f.events) != 1 || f.fns[0] != "Put" {
		t.Fatalf("invocations %v, want one of Put", f.fns)
	}
	ev := f.events[0]
	checks := []struct{ name, got, want string }{
		{"version", ev.Version, "2.0"},
		{"routeKey", ev.RouteKey, "PUT /v1/me/facts/{key}"},
		{"rawPath", ev.RawPath, "/v1/me/facts/Home City"},
		{"rawQueryString", ev.RawQueryString, "a=1&a=2&b=x%20y"},
		{"query a", ev.QueryStringParameters["a"], "1,2"},
		{"query b", ev.QueryStringParameters["b"], "x y"},
		{"pathParameters.key", ev.PathParameters["key"], "Home City"},
		{"header content-type", ev.Headers["content-type"], "application/json"},
		{"header x-multi", ev.Headers["x-multi"], "one,two"},
		{"cookie header", ev.Headers["cookie"], ""},
		{"body", ev.Body, `{"value":"Lisbon"}`},
		{"stage", ev.RequestContext.Stage, "$default"},
		{"http.method", ev.RequestContext.HTTP.Method, "PUT"},
		{"http.path", ev.RequestContext.HTTP.Path, "/v1/me/facts/Home City"},
		{"http.protocol", ev.RequestContext.HTTP.Protocol, "HTTP/1.1"},
		{"http.sourceIp", ev.RequestContext.HTTP.SourceIP, "127.0.0.1"},
		{"http.userAgent", ev.RequestContext.HTTP.UserAgent, "tester/1"},
		{"claims.sub", ev.RequestContext.Authorizer.JWT.Claims["sub"], "u-1"},
		{"claims.tenant_id", ev.RequestContext.Authorizer.JWT.Claims["tenant_id"], "acme"},
		{"claims.scope", ev.RequestContext.Authorizer.JWT.Claims["scope"], "memory/user"},
		{"claims.groups", ev.RequestContext.Authorizer.JWT.Claims["groups"], "[a b]"},
		{"claims.n", ev.RequestContext.Authorizer.JWT.Claims["n"], "12345678901"},
		{"claims.ok", ev.RequestContext.Authorizer.JWT.Claims["ok"], "true"},
		{"requestId", ev.RequestContext.RequestID, resp.Header.Get("Apigw-Requestid")},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if ev.IsBase64Encoded {
		t.Error("a JSON body is base64-encoded")
	}
	if strings.Join(ev.Cookies, ";") != "c1=v1;c2=v2" {
		t.Errorf("cookies = %v, want [c1=v1 c2=v2]", ev.Cookies)
	}
	if s := ev.RequestContext.Authorizer.JWT.Scopes; len(s) != 1 || s[0] != "memory/user" {
		t.Errorf("scopes = %v, want [memory/user]", s)
	}
	if d := time.Since(time.UnixMilli(ev.RequestContext.TimeEpoch)); d < 0 || d > time.Minute {
		t.Errorf("timeEpoch %d is not now", ev.RequestContext.TimeEpoch)
	}
	if _, err := time.Parse("02/Jan/2006:15:04:05 -0700", ev.RequestContext.Time); err != nil {
		t.Errorf("time %q: %v", ev.RequestContext.Time, err)
	}
}

func TestBinaryBodyIsBase64(t *testing.T) {
	srv, iss, f := setup(t)
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/me/facts/k", strings.NewReader("\x00\x01binary"))
	req.Header.Set("Authorization", signed(t, iss, nil)) // no Bearer prefix: accepted too
	req.Header.Set("Content-Type", "application/octet-stream")
	if resp, _ := do(t, req); resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	ev := f.events[0]
	if b, _ := base64.StdEncoding.DecodeString(ev.Body); !ev.IsBase64Encoded || string(b) != "\x00\x01binary" {
		t.Errorf("body %q base64 %v, want the bytes base64-encoded", ev.Body, ev.IsBase64Encoded)
	}
}

func TestRoutes(t *testing.T) {
	srv, iss, f := setup(t)
	tok := signed(t, iss, nil)
	for _, c := range []struct {
		method, path, wantFn string
		wantStatus           int
	}{
		{"GET", "/v1/me/facts/special", "Special", 200},
		{"DELETE", "/v1/me/facts/x", "Delete", 200},
		{"GET", "/files/b%2Fc", "Files", 200},
		{"GET", "/v1/me/facts/other", "", 404},
		{"GET", "/files/a/b", "", 404},
		{"GET", "/v1/me", "", 404},
		{"POST", "/v1/me/facts", "", 404},
		{"GET", "/v1/me/facts/a/b", "", 404},
	} {
		before := len(f.fns)
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, body := do(t, req)
		if resp.StatusCode != c.wantStatus {
			t.Errorf("%s %s = %d %s, want %d", c.method, c.path, resp.StatusCode, body, c.wantStatus)
			continue
		}
		if c.wantFn == "" {
			if len(f.fns) != before || body != `{"message":"Not Found"}` {
				t.Errorf("%s %s ran %v, body %s; want no function and Not Found", c.method, c.path, f.fns[before:], body)
			}
			continue
		}
		if len(f.fns) != before+1 || f.fns[before] != c.wantFn {
			t.Errorf("%s %s ran %v, want %s", c.method, c.path, f.fns[before:], c.wantFn)
		}
	}
	if got := f.events[len(f.events)-1].PathParameters["name"]; got != "b/c" {
		t.Errorf("path parameter = %q, want b/c unescaped", got)
	}
}

// TestRefusesWhatItDoesNotServe: an authorizer reading the token from
// anything but a header, or a greedy variable before the path's end,
// fails New, naming it, rather than being served unlike API Gateway.
func TestRefusesWhatItDoesNotServe(t *testing.T) {
	jwt := map[string]*samtemplate.Authorizer{"Jwt": {Name: "Jwt", Issuer: issuerURL, IdentitySource: "$request.header.Authorization"}}
	for _, c := range []struct {
		route samtemplate.Route
		auth  map[string]*samtemplate.Authorizer
		want  string
	}{
		{samtemplate.Route{Method: "GET", Path: "/files/{p+}/x", Authorizer: "NONE"}, nil, "greedy"},
		{samtemplate.Route{Method: "GET", Path: "/v1/x", Authorizer: "Jwt"},
			map[string]*samtemplate.Authorizer{"Jwt": {Name: "Jwt", IdentitySource: "$request.querystring.token"}}, "querystring"},
	} {
		api := &samtemplate.HTTPAPI{Authorizers: c.auth, Routes: []samtemplate.Route{c.route}}
		if c.auth == nil {
			api.Authorizers = jwt
		}
		_, err := New(Config{API: api, Keys: map[string]*JWKS{"Jwt": NewJWKS("http://127.0.0.1:1")}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("route %s: %v, want an error naming %q", c.route.Key(), err, c.want)
		}
	}
}

// TestRouteSelection: routes are chosen as API Gateway documents it (a
// full match of route and method, then a greedy variable, then
// $default), with no trailing-slash leniency: /app and /app/ are two
// paths, and a route of one matches only it.
func TestRouteSelection(t *testing.T) {
	routes := []samtemplate.Route{
		{Method: "GET", Path: "/app", Function: "Root"},
		{Method: "GET", Path: "/app/{file}", Function: "File"},
		{Method: "GET", Path: "/files/{proxy+}", Function: "Greedy"},
		{Method: "ANY", Path: "/files/{proxy+}", Function: "AnyGreedy"},
		{Method: "GET", Path: "/files/exact", Function: "Exact"},
		{Method: "ANY", Path: "/any", Function: "Any"},
	}
	for _, c := range []struct {
		withDefault          bool
		method, path, wantFn string
		wantParams           map[string]string
	}{
		{false, "GET", "/app", "Root", nil},
		{false, "GET", "/app/", "", nil},
		{false, "GET", "/app/x.js", "File", map[string]string{"file": "x.js"}},
		{false, "GET", "/app/x.js/", "", nil},
		{false, "GET", "/files/a/b%2Fc", "Greedy", map[string]string{"proxy": "a/b/c"}},
		{false, "POST", "/files/a", "AnyGreedy", map[string]string{"proxy": "a"}},
		{false, "GET", "/files/exact", "Exact", nil},
		{false, "GET", "/files/", "", nil},
		{false, "GET", "/files", "", nil},
		{false, "DELETE", "/any", "Any", nil},
		{true, "GET", "/app/", "Default", nil},
		{true, "POST", "/app", "Default", nil},
		{true, "GET", "/app", "Root", nil},
		{true, "GET", "/nothing/here", "Default", nil},
		{true, "GET", "/files/x", "Greedy", map[string]string{"proxy": "x"}},
	} {
		api := &samtemplate.HTTPAPI{Routes: routes}
		if c.withDefault {
			api.Routes = append(slices.Clone(routes), samtemplate.Route{Path: DefaultRoute, Function: "Default"})
		}
		f := &fake{result: lambdapool.Result{Payload: []byte(`{"statusCode":200,"body":"ok"}`)}}
		gw, err := New(Config{API: api, Invoke: f.invoke})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		name := fmt.Sprintf("%s %s ($default %v)", c.method, c.path, c.withDefault)
		if c.wantFn == "" {
			if rec.Code != http.StatusNotFound || len(f.fns) != 0 || rec.Body.String() != `{"message":"Not Found"}` {
				t.Errorf("%s: %d %s, ran %v; want 404 Not Found and no function", name, rec.Code, rec.Body, f.fns)
			}
			continue
		}
		if len(f.fns) != 1 || f.fns[0] != c.wantFn {
			t.Errorf("%s ran %v, want %s", name, f.fns, c.wantFn)
			continue
		}
		ev := f.events[0]
		if !maps.Equal(ev.PathParameters, c.wantParams) || ev.RawPath != c.path && !strings.Contains(c.path, "%") {
			t.Errorf("%s: path parameters %v, rawPath %q; want %v and the request's path", name, ev.PathParameters, ev.RawPath, c.wantParams)
		}
		if c.wantFn == "Default" && ev.RouteKey != DefaultRoute {
			t.Errorf("%s: routeKey %q, want %s", name, ev.RouteKey, DefaultRoute)
		}
	}
}

func TestAuthorizer(t *testing.T) {
	srv, iss, f := setup(t)
	other, err := token.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Sign(token.Claims{Issuer: issuerURL, Audience: audience, Subject: "u", Scopes: []string{"memory/user"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, c := range []struct {
		name, path, tok string
		want            int
		why             string // the reason the log gives for a refusal
	}{
		{"valid", "/v1/me/facts", signed(t, iss, nil), 200, ""},
		{"second audience of the list", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.Audience = "other" }), 200, ""},
		{"client_id instead of aud", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.Audience = ""; c.Extra = map[string]any{"aud": nil, "client_id": audience} }), 200, ""},
		{"scp list", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.Scopes = nil; c.Extra = map[string]any{"scp": []string{"x", "memory/user"}} }), 200, ""},
		{"missing", "/v1/me/facts", "", 401, "missing: no token in Authorization"},
		{"not a JWT", "/v1/me/facts", "not-a-token", 401, "malformed"},
		{"other key", "/v1/me/facts", foreign, 401, "unverifiable: no key of the JWKS matches its kid"},
		{"bad signature", "/v1/me/facts", tampered(signed(t, iss, nil)), 401, "bad signature"},
		{"wrong issuer", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.Issuer = "https://evil.test" }), 401, "wrong issuer"},
		{"wrong audience", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.Audience = "nope" }), 401, "wrong audience"},
		{"expired", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.IssuedAt = now.Add(-time.Hour); c.TTL = time.Minute }), 401, "expired"},
		{"not before", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.NotBefore = now.Add(time.Hour) }), 401, "not valid yet"},
		{"issued in the future", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.IssuedAt = now.Add(time.Hour); c.NotBefore = now }), 401, "not valid yet"},
		{"no exp", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.Extra = map[string]any{"exp": nil} }), 401, "invalid claims"},
		{"no scope", "/v1/me/facts", signed(t, iss, func(c *token.Claims) { c.Scopes = nil }), 403, "no scope of the route"},
		{"user scope on admin route", "/v1/users/u/facts", signed(t, iss, nil), 403, "no scope of the route (it needs one of memory/admin)"},
		{"no token on an open route", "/files/x", "", 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.fns)
			req, _ := http.NewRequest(http.MethodGet, srv.URL+c.path, nil)
			if c.tok != "" {
				req.Header.Set("Authorization", "Bearer "+c.tok)
			}
			resp, body := do(t, req)
			if resp.StatusCode != c.want {
				t.Fatalf("status = %d %s, want %d", resp.StatusCode, body, c.want)
			}
			ran := len(f.fns) - before
			if c.want == 200 && ran != 1 || c.want != 200 && ran != 0 {
				t.Errorf("the function ran %d times, want %d", ran, map[bool]int{true: 1, false: 0}[c.want == 200])
			}
			if want := map[int]string{401: `{"message":"Unauthorized"}`, 403: `{"message":"Forbidden"}`}[c.want]; want != "" && body != want {
				t.Errorf("body = %s, want %s", body, want)
			}
			logged := f.log.take()
			refused := strings.Contains(logged, `msg="token refused"`)
			if refused != (c.why != "") || c.why != "" && !strings.Contains(logged, c.why) {
				t.Errorf("log %q, want a refusal saying %q", logged, c.why)
			}
			if c.tok != "" && strings.Contains(logged, c.tok[:len(c.tok)/2]) {
				t.Errorf("the log holds the token: %s", logged)
			}
		})
	}
}

func TestResponseMapping(t *testing.T) {
	srv, iss, f := setup(t)
	tok := signed(t, iss, nil)
	get := func() (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/me/facts", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		return do(t, req)
	}
	f.result = lambdapool.Result{Payload: []byte(`{"statusCode":201,"headers":{"content-type":"text/plain","x-one":"1"},` +
		`"multiValueHeaders":{"x-many":["a","b"]},"cookies":["s=1; HttpOnly","t=2"],"body":"aGVsbG8=","isBase64Encoded":true}`)}
	resp, body := get()
	if resp.StatusCode != 201 || body != "hello" || resp.Header.Get("Content-Type") != "text/plain" || resp.Header.Get("X-One") != "1" {
		t.Errorf("got %d %q %v, want 201 hello with the headers", resp.StatusCode, body, resp.Header)
	}
	if got := resp.Header.Values("X-Many"); strings.Join(got, ",") != "a,b" {
		t.Errorf("X-Many = %v, want [a b]", got)
	}
	if got := resp.Header.Values("Set-Cookie"); len(got) != 2 {
		t.Errorf("Set-Cookie = %v, want two", got)
	}
	// A response without statusCode is the body of a 200 JSON answer.
	f.result = lambdapool.Result{Payload: []byte(`{"facts":[]}`)}
	if resp, body := get(); resp.StatusCode != 200 || body != `{"facts":[]}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("inferred response = %d %q %s", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	for name, r := range map[string]struct {
		res lambdapool.Result
		err error
	}{
		"function error":  {res: lambdapool.Result{Payload: []byte(`{"errorMessage":"boom","errorType":"x"}`), Err: &lambdapool.FunctionError{Type: "x", Message: "boom"}}},
		"invoke failure":  {err: errors.New("no environment")},
		"bad statusCode":  {res: lambdapool.Result{Payload: []byte(`{"statusCode":42}`)}},
		"bad base64 body": {res: lambdapool.Result{Payload: []byte(`{"statusCode":200,"body":"%%","isBase64Encoded":true}`)}},
	} {
		f.result, f.err = r.res, r.err
		if resp, body := get(); resp.StatusCode != 500 || body != `{"message":"Internal Server Error"}` {
			t.Errorf("%s: got %d %s, want API Gateway's 500", name, resp.StatusCode, body)
		}
	}
}

func TestCORS(t *testing.T) {
	srv, iss, f := setup(t)
	preflight := func(origin, method, headers string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/v1/me/facts/k", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", method)
		req.Header.Set("Access-Control-Request-Headers", headers)
		resp, _ := do(t, req)
		return resp
	}
	resp := preflight("https://app.test", "PUT", "authorization, content-type")
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.test" ||
		resp.Header.Get("Access-Control-Allow-Methods") != "GET,PUT" || resp.Header.Get("Access-Control-Max-Age") != "60" {
		t.Errorf("allowed preflight = %d %v", resp.StatusCode, resp.Header)
	}
	for _, c := range [][3]string{{"https://evil.test", "PUT", ""}, {"https://app.test", "DELETE", ""}, {"https://app.test", "PUT", "x-secret"}} {
		if resp := preflight(c[0], c[1], c[2]); resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight %v = %d, Allow-Origin %q; want 204 without CORS headers", c, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	if len(f.fns) != 0 {
		t.Errorf("preflights ran %v", f.fns)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/me/facts", nil)
	req.Header.Set("Authorization", "Bearer "+signed(t, iss, nil))
	req.Header.Set("Origin", "https://app.test")
	if resp, _ := do(t, req); resp.Header.Get("Access-Control-Allow-Origin") != "https://app.test" {
		t.Errorf("Allow-Origin on a response = %q, want the origin", resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

func TestClaimString(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{"s", "s"},
		{json.Number("1795905600"), "1795905600"},
		{true, "true"},
		{[]any{"memory/user", "profile"}, "[memory/user profile]"},
		{[]any{}, "[]"},
		{map[string]any{"b": "2", "a": "1"}, "{a=1, b=2}"},
	} {
		if got := claimString(c.in); got != c.want {
			t.Errorf("claimString(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRequestsTooLargeForLambda sends bodies around Lambda's 6 MB
// synchronous payload limit and the HTTP API's 10 MB payload quota.
func TestRequestsTooLargeForLambda(t *testing.T) {
	srv, iss, f := setup(t)
	tok := signed(t, iss, nil)
	for _, c := range []struct {
		name        string
		size        int
		contentType string
		want        int
	}{
		{"text just under 6 MiB", 6<<20 - 16<<10, "application/json", http.StatusOK},
		{"text of 6 MiB: the event is over the limit", 6 << 20, "application/json", http.StatusRequestEntityTooLarge},
		{"binary of 5 MiB: base64 makes the event 6.7 MB", 5 << 20, "application/octet-stream", http.StatusRequestEntityTooLarge},
		{"text of 8 MiB", 8 << 20, "application/json", http.StatusRequestEntityTooLarge},
		{"text of 10 MiB", MaxBody, "application/json", http.StatusRequestEntityTooLarge},
		{"text over 10 MiB", MaxBody + 1, "application/json", http.StatusRequestEntityTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.mu.Lock()
			before := len(f.events)
			f.mu.Unlock()
			req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/me/facts/k", strings.NewReader(strings.Repeat("a", c.size)))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", c.contentType)
			resp, body := do(t, req)
			f.mu.Lock()
			invoked := len(f.events) - before
			f.mu.Unlock()
			if resp.StatusCode != c.want {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, c.want)
			}
			if c.want == http.StatusOK {
				if invoked != 1 {
					t.Errorf("invocations = %d, want 1", invoked)
				}
				return
			}
			if body != `{"message":"Request Entity Too Large"}` || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("answer %s %q, want application/json {\"message\":\"Request Entity Too Large\"}", resp.Header.Get("Content-Type"), body)
			}
			if invoked != 0 {
				t.Errorf("invocations = %d, want none", invoked)
			}
		})
	}
}
