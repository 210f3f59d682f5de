// Package httpapitest helps test the fact functions: it reads the sample
// events of events/, builds API Gateway HTTP API events (payload format
// 2.0, JWT authorizer), invokes handlers through the Lambda runtime's own
// JSON path, holds requests and responses to api/openapi.yaml with
// kin-openapi ([Spec]), and reads the SAM template (template.yaml) with
// internal/samtemplate ([LoadSAMTemplate]). A [Fixture] runs a function's table of [Case]
// values on the standard users ([Ana], [Bob], [OtherAna]), so that each
// function's tests hold only its cases. The tests that need DynamoDB get a
// repository on the moto_server of the environment ([MotoRepo]), or skip.
package httpapitest

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/internal/localnet"
)

// Root returns the repository's root ([localnet.ModuleRoot]), failing t
// outside it.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := localnet.ModuleRoot()
	if err != nil {
		t.Fatal("httpapitest: ", err)
	}
	return dir
}

// ReadEvent returns the bytes of events/name.
func ReadEvent(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(t), "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Events returns the names of the files in events/ that start with prefix.
func Events(t testing.TB, prefix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(Root(t), "events", prefix+"*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range m {
		out = append(out, filepath.Base(p))
	}
	return out
}

// Invoke runs handler on payload as the Lambda runtime does, through
// lambda.NewHandler, and decodes the response. A handler error fails t.
func Invoke(t testing.TB, handler any, payload []byte) events.APIGatewayV2HTTPResponse {
	t.Helper()
	out, err := lambda.NewHandler(handler).Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("Invoke(%s): %v", payload, err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("response %s: %v", out, err)
	}
	return resp
}

// Token is the verified token of an event.
type Token struct {
	Sub string
	// Tenant goes into the claim TenantClaim (default tenant_id); empty
	// leaves the claim out.
	Tenant      string
	TenantClaim string
	// Scope is the space-separated scope claim.
	Scope string
	// Claims are more claims, or replacements.
	Claims map[string]string
}

// NewEvent returns the event API Gateway sends for routeKey ("PUT
// /v1/me/facts/{key}") with the path parameters params (decoded values,
// as API Gateway passes them), the body (application/json when not empty)
// and tok's claims; a nil tok means no authorizer context.
func NewEvent(routeKey string, tok *Token, params map[string]string, body string) events.APIGatewayV2HTTPRequest {
	method, path, _ := strings.Cut(routeKey, " ")
	raw := path
	for k, v := range params {
		raw = strings.ReplaceAll(raw, "{"+k+"}", url.PathEscape(v))
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: routeKey,
		RawPath:  raw,
		Headers: map[string]string{
			"accept":            "application/json",
			"authorization":     "Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln",
			"host":              "abc123.execute-api.us-east-1.amazonaws.com",
			"x-forwarded-proto": "https",
		},
		PathParameters: params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:   routeKey,
			AccountID:  "123456789012",
			Stage:      "$default",
			RequestID:  "JKJaXmPLvHcESHA=",
			APIID:      "abc123",
			DomainName: "abc123.execute-api.us-east-1.amazonaws.com",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: method, Path: raw, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "test",
			},
		},
	}
	if body != "" {
		ev.Body = body
		ev.Headers["content-type"] = "application/json"
	}
	if tok != nil {
		claims := map[string]string{"iss": "https://issuer.example.com", "aud": "usermemory", "exp": "1893456000"}
		if tok.Sub != "" {
			claims["sub"] = tok.Sub
		}
		if tok.Tenant != "" {
			name := tok.TenantClaim
			if name == "" {
				name = setup.DefaultTenantClaim
			}
			claims[name] = tok.Tenant
		}
		if tok.Scope != "" {
			claims["scope"] = tok.Scope
		}
		for k, v := range tok.Claims {
			claims[k] = v
		}
		ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims},
		}
	}
	return ev
}

// Marshal returns ev as JSON.
func Marshal(t testing.TB, ev events.APIGatewayV2HTTPRequest) []byte {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
