package httpapitest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// Spec is api/openapi.yaml, loaded and validated by kin-openapi, ready to
// hold requests and responses to it.
type Spec struct {
	doc *openapi3.T
}

// LoadSpec reads api/openapi.yaml and fails t unless it is a valid
// OpenAPI document (openapi3.Loader, then T.Validate).
func LoadSpec(t testing.TB) *Spec {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Root(t), "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("api/openapi.yaml is not valid OpenAPI: %v", err)
	}
	return &Spec{doc: doc}
}

// Doc returns the document as kin-openapi reads it.
func (s *Spec) Doc() *openapi3.T { return s.doc }

// Routes returns the route keys of the document ("GET /v1/me/facts"),
// sorted.
func (s *Spec) Routes() []string {
	var out []string
	for path, item := range s.doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// route returns the document's route of routeKey ("PUT
// /v1/me/facts/{key}"), as API Gateway has already matched it, or an
// error when the document does not have it.
func (s *Spec) route(routeKey string) (*routers.Route, error) {
	method, path, _ := strings.Cut(routeKey, " ")
	item := s.doc.Paths.Value(path)
	if item == nil || item.GetOperation(method) == nil {
		return nil, fmt.Errorf("route %q is not in api/openapi.yaml", routeKey)
	}
	return &routers.Route{Spec: s.doc, Path: path, PathItem: item, Method: method, Operation: item.GetOperation(method)}, nil
}

// Operation reports whether the document has routeKey.
func (s *Spec) Operation(routeKey string) bool {
	_, err := s.route(routeKey)
	return err == nil
}

// options returns the validation options: the JWT is API Gateway's
// business, not the document's, and an undocumented status is a fault.
func options() *openapi3filter.Options {
	return &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
}

// request returns req as the HTTP request API Gateway received and the
// input to validate it.
func (s *Spec) request(req events.APIGatewayV2HTTPRequest) (*openapi3filter.RequestValidationInput, error) {
	r, err := s.route(req.RouteKey)
	if err != nil {
		return nil, err
	}
	path := req.RawPath
	if path == "" {
		path = req.RequestContext.HTTP.Path
	}
	u := &url.URL{Scheme: "https", Host: "api.example", Path: path, RawQuery: req.RawQueryString}
	if raw, err := url.PathUnescape(path); err == nil && raw != path {
		u.Path, u.RawPath = raw, path
	}
	hr, err := http.NewRequest(r.Method, u.String(), bytes.NewReader(body(req)))
	if err != nil {
		return nil, err
	}
	for k, v := range req.Headers {
		hr.Header.Set(k, v)
	}
	return &openapi3filter.RequestValidationInput{Request: hr, PathParams: req.PathParameters, Route: r, Options: options()}, nil
}

// body returns the body of req, decoded from base64 where API Gateway
// encoded it.
func body(req events.APIGatewayV2HTTPRequest) []byte {
	if req.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(req.Body); err == nil {
			return b
		}
	}
	return []byte(req.Body)
}

// ValidateResponse returns nil when resp is what the document says
// routeKey answers: a documented status, a documented media type with a
// body valid against its schema, no body where the document has none.
func (s *Spec) ValidateResponse(routeKey string, resp events.APIGatewayV2HTTPResponse) error {
	r, err := s.route(routeKey)
	if err != nil {
		return err
	}
	in := &openapi3filter.RequestValidationInput{Route: r, Options: options(),
		Request: &http.Request{Method: r.Method, URL: &url.URL{Path: r.Path}, Header: http.Header{}}}
	return s.validateResponse(in, resp)
}

func (s *Spec) validateResponse(in *openapi3filter.RequestValidationInput, resp events.APIGatewayV2HTTPResponse) error {
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	// kin-openapi does not check that a response without content in the
	// document (a 204) has no body.
	if ref := in.Route.Operation.Responses.Status(resp.StatusCode); ref != nil && ref.Value != nil &&
		len(ref.Value.Content) == 0 && (resp.Body != "" || h.Get("Content-Type") != "") {
		return fmt.Errorf("the document has no body for %d, got %q (%s)", resp.StatusCode, resp.Body, h.Get("Content-Type"))
	}
	return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 h,
		Body:                   io.NopCloser(strings.NewReader(resp.Body)),
		Options:                in.Options,
	})
}

// CheckResponse fails t unless resp is what the document says routeKey
// answers (see [Spec.ValidateResponse]).
func (s *Spec) CheckResponse(t testing.TB, routeKey string, resp events.APIGatewayV2HTTPResponse) {
	t.Helper()
	if err := s.ValidateResponse(routeKey, resp); err != nil {
		t.Errorf("%s → %d %s: %v", routeKey, resp.StatusCode, resp.Body, err)
	}
}

// bodyCodes are the codes of a request body refused for its shape.
var bodyCodes = map[int64]bool{5380000000204: true, 5380000000205: true, 5380000000206: true}

// Check holds one exchange to the document: the response as in
// [Spec.CheckResponse]; and the request, which must be valid against the
// document when the function accepted it, and, for a route that takes a
// body, invalid when the function refused the body's shape.
func (s *Spec) Check(t testing.TB, req events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse) {
	t.Helper()
	in, err := s.request(req)
	if err != nil {
		t.Errorf("%s: %v", req.RouteKey, err)
		return
	}
	if err := s.validateResponse(in, resp); err != nil {
		t.Errorf("%s → %d %s: %v", req.RouteKey, resp.StatusCode, resp.Body, err)
	}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	if reqErr == nil && in.Route.Operation.RequestBody != nil && !json.Valid(body(req)) {
		// kin-openapi decodes the first JSON value of a body and ignores
		// what follows; a body of two values is not JSON.
		reqErr = fmt.Errorf("the body is not one JSON value")
	}
	switch {
	case resp.StatusCode < 300 && reqErr != nil:
		t.Errorf("%s accepted a request that the document refuses (body %q): %v", req.RouteKey, req.Body, reqErr)
	case resp.StatusCode == http.StatusBadRequest && bodyCodes[problemCode(resp.Body)] && reqErr == nil:
		t.Errorf("%s refused the body %q, which the document accepts", req.RouteKey, req.Body)
	}
}

// problemCode returns the member code of a problem body, or 0.
func problemCode(body string) int64 {
	var p struct {
		Code int64 `json:"code"`
	}
	if json.Unmarshal([]byte(body), &p) != nil {
		return 0
	}
	return p.Code
}
