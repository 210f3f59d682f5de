// Command page is the Lambda function of the page's HTTP API, its one
// route $default: it serves the memory page ("What I remember about you", package web) under
// the /app/ path of the page's HTTP API, with the page's security headers,
// and at /app/config.json the sign-in settings of the stack (the managed
// login's URL, the page's client, the scope) and the fact API's URL. It
// reads no data and needs no token: the page's calls to the fact API carry
// the user's.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/web"
)

// routes are the route keys of this function, as in template.yaml: the
// page's API has one route, $default, which takes every request. The
// function answers /app (sent to /app/) and the page's files under /app/
// itself: API Gateway documents no trailing-slash match for an HTTP API's
// routes, so no route /app is relied on to take /app/.
var routes = []string{"$default"}

// handlerFunc is the function's handler, as lambda.Start takes it.
type handlerFunc func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Stage variables of the page's API that complete its settings: the
// template gives the page's client and the fact API's URL there, because
// in the function's environment they would make a circular dependency
// (the page's API invokes the function, and the client's callback URL is
// the page's API).
const (
	StageAPIURL       = "apiUrl"
	StagePageClientID = "pageClientId"
)

// newHandler serves the page with s's sign-in settings, completed by the
// request's stage variables: a client ID there is used when s has none,
// and apiUrl names the fact API (without it, config.json names none and
// the page takes the folder above its own, as the local stack serves it).
// The page signs in only with both a managed login and a client.
func newHandler(s setup.PageSettings) handlerFunc {
	return func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return serve(web.NewHandler(pageConfig(s, req.StageVariables)), req), nil
	}
}

// pageConfig is config.json for settings s and the stage variables vars.
func pageConfig(s setup.PageSettings, vars map[string]string) web.Config {
	cfg := web.Config{APIURL: vars[StageAPIURL], AuthURL: s.AuthURL, ClientID: s.ClientID}
	if cfg.ClientID == "" {
		cfg.ClientID = vars[StagePageClientID]
	}
	if cfg.AuthURL == "" || cfg.ClientID == "" {
		cfg.AuthURL, cfg.ClientID = "", ""
		return cfg
	}
	cfg.Scope = s.Scope
	return cfg
}

// serve answers req with h, which serves the page at its root: /app
// redirects to /app/, /app/<file> is <file>, any other path is 404, and
// any method but GET and HEAD is 405.
func serve(h http.Handler, req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	method := req.RequestContext.HTTP.Method
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodHead {
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusMethodNotAllowed,
			Headers: withSecurityHeaders(map[string]string{"Allow": "GET, HEAD", "Content-Type": "text/plain; charset=utf-8"}), Body: "405 method not allowed\n"}
	}
	root := strings.TrimSuffix(web.Path, "/")
	if req.RawPath == root {
		loc := web.Path
		if req.RawQueryString != "" {
			loc += "?" + req.RawQueryString
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusMovedPermanently, Headers: withSecurityHeaders(map[string]string{"Location": loc})}
	}
	rest, ok := strings.CutPrefix(req.RawPath, root)
	u, err := url.Parse(rest)
	if !ok || !strings.HasPrefix(rest, "/") || err != nil {
		return notFound()
	}
	u.RawQuery = req.RawQueryString
	r, err := http.NewRequest(method, u.String(), nil)
	if err != nil {
		return notFound()
	}
	for k, v := range req.Headers {
		r.Header.Set(k, v)
	}
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, r)
	return rec.response()
}

func notFound() events.APIGatewayV2HTTPResponse {
	return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusNotFound,
		Headers: withSecurityHeaders(map[string]string{"Content-Type": "text/plain; charset=utf-8"}), Body: "404 page not found\n"}
}

func withSecurityHeaders(h map[string]string) map[string]string {
	for k, v := range web.SecurityHeaders() {
		h[k] = v
	}
	return h
}

// recorder is the http.ResponseWriter of one request, turned into the
// function's response.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// response is the recorded answer as API Gateway takes it: one value per
// header, a body that is not UTF-8 text in base64.
func (r *recorder) response() events.APIGatewayV2HTTPResponse {
	out := events.APIGatewayV2HTTPResponse{StatusCode: r.status, Headers: map[string]string{}}
	if out.StatusCode == 0 {
		out.StatusCode = http.StatusOK
	}
	for k, v := range r.header {
		out.Headers[k] = strings.Join(v, ",")
	}
	if b := r.body.Bytes(); utf8.Valid(b) {
		out.Body = string(b)
	} else {
		out.Body = base64.StdEncoding.EncodeToString(b)
		out.IsBase64Encoded = true
	}
	return out
}
