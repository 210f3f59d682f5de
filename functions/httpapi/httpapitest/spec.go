package httpapitest

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Spec is api/openapi.yaml, ready to validate requests and responses.
type Spec struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
}

const specURL = "file:///openapi.json"

var methods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

// LoadSpec reads api/openapi.yaml.
func LoadSpec(t testing.TB) *Spec {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Root(t), "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(specURL, doc); err != nil {
		t.Fatal(err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		t.Fatal("api/openapi.yaml: not a mapping")
	}
	if v, _ := m["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("api/openapi.yaml: openapi %q, want 3.1.x", v)
	}
	return &Spec{doc: m, compiler: c, schemas: map[string]*jsonschema.Schema{}}
}

// Routes returns the route keys of the document ("GET /v1/me/facts"),
// sorted.
func (s *Spec) Routes() []string {
	var out []string
	paths, _ := s.doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for _, m := range methods {
			if _, ok := ops[m]; ok {
				out = append(out, strings.ToUpper(m)+" "+p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Operation returns the operation object of routeKey, or nil.
func (s *Spec) Operation(routeKey string) map[string]any {
	method, path, _ := strings.Cut(routeKey, " ")
	paths, _ := s.doc["paths"].(map[string]any)
	item, _ := paths[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	return op
}

// resolve follows a local $ref of v, once.
func (s *Spec) resolve(v any) (any, string) {
	m, _ := v.(map[string]any)
	ref, _ := m["$ref"].(string)
	if !strings.HasPrefix(ref, "#/") {
		return v, ""
	}
	var cur any = s.doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		mm, _ := cur.(map[string]any)
		cur = mm[tok]
	}
	return cur, ref
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func (s *Spec) schema(ptr string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.schemas[ptr]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(specURL + "#" + ptr)
	if err != nil {
		return nil, err
	}
	s.schemas[ptr] = sch
	return sch, nil
}

// content returns the JSON pointer of the schema for mediaType in a
// response or request body object found at ptr (after $ref), or "" when
// the object has no content.
func (s *Spec) content(obj any, ptr, mediaType string) (string, bool) {
	obj, ref := s.resolve(obj)
	if ref != "" {
		ptr = ref[1:]
	}
	m, _ := obj.(map[string]any)
	c, ok := m["content"].(map[string]any)
	if !ok {
		return "", false
	}
	if _, ok := c[mediaType]; !ok {
		return "", true
	}
	return ptr + "/content/" + pointerEscape(mediaType) + "/schema", true
}

// CheckResponse fails t unless resp is what the document says routeKey
// answers with its status: a documented status, the documented media
// type, and a body valid against its schema (no body where the document
// has no content).
func (s *Spec) CheckResponse(t testing.TB, routeKey string, resp events.APIGatewayV2HTTPResponse) {
	t.Helper()
	if err := s.ValidateResponse(routeKey, resp); err != nil {
		t.Errorf("%s → %d %s: %v", routeKey, resp.StatusCode, resp.Body, err)
	}
}

// ValidateResponse is CheckResponse returning the mismatch as an error.
func (s *Spec) ValidateResponse(routeKey string, resp events.APIGatewayV2HTTPResponse) error {
	op := s.Operation(routeKey)
	if op == nil {
		return fmt.Errorf("route %q is not in api/openapi.yaml", routeKey)
	}
	method, path, _ := strings.Cut(routeKey, " ")
	opPtr := "/paths/" + pointerEscape(path) + "/" + strings.ToLower(method)
	responses, _ := op["responses"].(map[string]any)
	code := strconv.Itoa(resp.StatusCode)
	r, ok := responses[code]
	if !ok {
		return fmt.Errorf("status %d is not documented", resp.StatusCode)
	}
	mediaType := ""
	for k, v := range resp.Headers {
		if strings.EqualFold(k, "content-type") {
			mediaType = v
		}
	}
	ptr, hasContent := s.content(r, opPtr+"/responses/"+code, mediaType)
	switch {
	case !hasContent && (resp.Body != "" || mediaType != ""):
		return fmt.Errorf("the document has no body for %d, got %q (%s)", resp.StatusCode, resp.Body, mediaType)
	case !hasContent:
		return nil
	case ptr == "":
		return fmt.Errorf("media type %q is not documented for %d", mediaType, resp.StatusCode)
	}
	return s.validate(ptr, resp.Body)
}

func (s *Spec) validate(ptr, body string) error {
	sch, err := s.schema(ptr)
	if err != nil {
		return fmt.Errorf("compile %s: %v", ptr, err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("body does not match %s: %v", ptr, err)
	}
	return nil
}

// ValidateRequestBody returns nil when body is valid as the request body
// of routeKey, and an error saying why not otherwise (also when the route
// takes no body).
func (s *Spec) ValidateRequestBody(routeKey, body string) error {
	op := s.Operation(routeKey)
	if op == nil {
		return fmt.Errorf("route %q is not in api/openapi.yaml", routeKey)
	}
	method, path, _ := strings.Cut(routeKey, " ")
	rb, ok := op["requestBody"]
	if !ok {
		return fmt.Errorf("route %q takes no body", routeKey)
	}
	ptr, _ := s.content(rb, "/paths/"+pointerEscape(path)+"/"+strings.ToLower(method)+"/requestBody", "application/json")
	if ptr == "" {
		return fmt.Errorf("route %q takes no application/json body", routeKey)
	}
	return s.validate(ptr, body)
}

// bodyCodes are the codes of a request body refused for its shape.
var bodyCodes = map[int64]bool{5380000000204: true, 5380000000205: true, 5380000000206: true}

// Check holds one exchange to the document: the response as in
// CheckResponse and, for a route that takes a body, the request body
// valid against the document when the answer is a success, and invalid
// when the answer refuses the body's shape.
func (s *Spec) Check(t testing.TB, req events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse) {
	t.Helper()
	s.CheckResponse(t, req.RouteKey, resp)
	op := s.Operation(req.RouteKey)
	if _, ok := op["requestBody"]; !ok || req.IsBase64Encoded {
		return
	}
	err := s.ValidateRequestBody(req.RouteKey, req.Body)
	switch {
	case resp.StatusCode < 300 && err != nil:
		t.Errorf("%s accepted the body %q, which the document refuses: %v", req.RouteKey, req.Body, err)
	case resp.StatusCode == http.StatusBadRequest && bodyCodes[problemCode(resp.Body)] && err == nil:
		t.Errorf("%s refused the body %q, which the document accepts", req.RouteKey, req.Body)
	}
}

func problemCode(body string) int64 {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		return 0
	}
	m, _ := v.(map[string]any)
	n, _ := m["code"].(interface{ Int64() (int64, error) })
	if n == nil {
		return 0
	}
	c, _ := n.Int64()
	return c
}
