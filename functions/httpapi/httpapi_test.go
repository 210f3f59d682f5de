package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

func TestClaimList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"memory/user openid", []string{"memory/user", "openid"}},
		{"[memory/user openid]", []string{"memory/user", "openid"}},
		{`["memory/user","openid"]`, []string{"memory/user", "openid"}},
		{"[]", []string{}},
		{"", nil},
		{"  a  ", []string{"a"}},
	}
	for _, tt := range tests {
		got := httpapi.ClaimList(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("ClaimList(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestProblemForHidesCauses(t *testing.T) {
	secret := errors.New("dynamodb: table arn:aws:dynamodb:us-east-1:1:table/x value=Lisbon")
	for _, err := range []error{
		secret,
		&memory.Error{Code: memory.CodeRepository, Message: "repository failed: Lisbon", Err: secret},
		&memory.Error{Code: memory.CodeInvalidConfig, Message: "Lisbon", UserMessage: "Lisbon"},
		&memory.Error{Code: 1, Message: "Lisbon", UserMessage: "Lisbon"},
	} {
		p := httpapi.ProblemFor(err)
		b, _ := json.Marshal(p)
		if p.Status < 500 || strings.Contains(string(b), "Lisbon") || p.Detail != "internal error" {
			t.Errorf("ProblemFor(%v) = %s", err, b)
		}
	}
	p := httpapi.ProblemFor(&memory.Error{Code: memory.CodeEmptyFact, Message: "the key is empty", UserMessage: "Give the fact a name."})
	want := httpapi.Problem{Type: "urn:usermemory:error:5372597957094", Title: "Bad Request", Status: 400,
		Detail: "the key is empty", Code: memory.CodeEmptyFact, UserMessage: "Give the fact a name."}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
}

func TestNewRefusesMalformedRoutes(t *testing.T) {
	op := func(context.Context, httpapi.Request) (int, any, error) { return 204, nil, nil }
	for _, routes := range [][]string{nil, {"GET"}, {"GET /v2/facts"}, {"GET /v1/tenants/{tenantId}/facts"}} {
		if _, err := httpapi.New(httpapi.RequestConfig{}, nil, op, routes...); err == nil {
			t.Errorf("New with routes %q: no error", routes)
		}
	}
}

// TestDecode checks the identity rules at the level of the decoded request.
func TestDecode(t *testing.T) {
	op := func(context.Context, httpapi.Request) (int, any, error) { return 204, nil, nil }
	h, err := httpapi.New(httpapi.RequestConfig{TenantClaim: "custom:tenant", UserScope: "u", AdminScope: "a"}, nil, op,
		"PUT /v1/me/facts/{key}", "PUT /v1/users/{userId}/facts/{key}")
	if err != nil {
		t.Fatal(err)
	}
	tok := &httpapitest.Token{Sub: "u-1", Tenant: "t-1", TenantClaim: "custom:tenant", Scope: "u"}
	ev := httpapitest.NewEvent("PUT /v1/me/facts/{key}", tok, map[string]string{"key": "Home%20City", "userId": "u-2"}, `{"value":" Lisbon "}`)
	got, err := h.Decode(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := httpapi.Request{Scope: memory.Scope{TenantID: "t-1", UserID: "u-1"}, Caller: "u-1", Key: "Home%20City",
		Value: " Lisbon ", Origin: memory.OriginManual, RequestID: ev.RequestContext.RequestID, Route: "PUT /v1/me/facts/{key}"}
	if got != want {
		t.Errorf("got %+v, want %+v (the key is not decoded a second time)", got, want)
	}
	adminTok := &httpapitest.Token{Sub: "boss", Tenant: "t-1", TenantClaim: "custom:tenant", Claims: map[string]string{"scp": "[x a]"}}
	ev = httpapitest.NewEvent("PUT /v1/users/{userId}/facts/{key}", adminTok, map[string]string{"key": "k", "userId": "u-2"}, `{"value":"v"}`)
	got, err = h.Decode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scope != (memory.Scope{TenantID: "t-1", UserID: "u-2"}) || !got.Admin || got.Caller != "boss" {
		t.Errorf("admin: got %+v", got)
	}
	ev.RequestContext.Authorizer.JWT.Scopes = nil
	ev.RequestContext.Authorizer.JWT.Claims["scp"] = "[x u]"
	if _, err := h.Decode(ev); httpapi.StatusOf(err) != http.StatusForbidden {
		t.Errorf("user scope on admin route: got %v, want 403", err)
	}
}

func TestLogHoldsNoValue(t *testing.T) {
	var buf bytes.Buffer
	log := httpapi.NewLogger(&buf)
	repo := memorytest.NewRepo()
	store := httpapitest.NewStore(t, repo)
	h, err := httpapi.New(httpapi.RequestConfig{}, log, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		f, err := store.Put(ctx, r.Scope, memory.FactInput{Key: r.Key, Value: r.Value})
		if err != nil {
			return 0, nil, err
		}
		return 200, httpapi.FactBody{Fact: httpapi.FactOf(f)}, nil
	}, "PUT /v1/me/facts/{key}")
	if err != nil {
		t.Fatal(err)
	}
	tok := &httpapitest.Token{Sub: "u-1", Tenant: "t-1", Scope: "memory/user"}
	for _, body := range []string{`{"value":"SECRET-VALUE"}`, `{"value":"SECRET-VALUE","x":1}`} {
		httpapitest.Invoke(t, h.Handle, httpapitest.Marshal(t, httpapitest.NewEvent("PUT /v1/me/facts/{key}", tok, map[string]string{"key": "k"}, body)))
	}
	// A storage error whose message echoes what was sent, as an AWS SDK
	// error's message may.
	repo.Fail = errors.New("ValidationException: the value SECRET-VALUE is invalid")
	httpapitest.Invoke(t, h.Handle, httpapitest.Marshal(t, httpapitest.NewEvent("PUT /v1/me/facts/{key}", tok, map[string]string{"key": "k"}, `{"value":"SECRET-VALUE"}`)))
	out := buf.String()
	if strings.Contains(out, "SECRET-VALUE") {
		t.Errorf("the log holds a fact value:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d log lines, want 3:\n%s", len(lines), out)
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[2]), &last); err != nil {
		t.Fatal(err)
	}
	if cause, _ := last["cause"].(string); last["level"] != slog.LevelError.String() || !strings.HasPrefix(cause, "memory:") || last["requestId"] == "" {
		t.Errorf("the 5xx line lacks the class of its cause or its request ID: %s", lines[2])
	}
}

// fuzzOp is the operation of the fuzz targets: a real store on the
// in-memory repository, by route.
func fuzzHandler(t testing.TB) *httpapi.Handler {
	store := httpapitest.NewStore(t, memorytest.NewRepo())
	h, err := httpapi.New(httpapi.RequestConfig{MaxBodyBytes: 4096}, nil, func(ctx context.Context, r httpapi.Request) (int, any, error) {
		switch {
		case r.Value != "":
			f, err := store.Put(ctx, r.Scope, memory.FactInput{Key: r.Key, Value: r.Value})
			return 200, httpapi.FactBody{Fact: httpapi.FactOf(f)}, err
		case r.Key != "":
			return 204, nil, store.RemoveFact(ctx, r.Scope, r.Key)
		}
		m, err := store.GetFactsAndPending(ctx, r.Scope)
		return 200, httpapi.NewFactsBody(store, m), err
	}, "GET /v1/me/facts", "PUT /v1/me/facts/{key}", "DELETE /v1/me/facts/{key}",
		"GET /v1/users/{userId}/facts", "PUT /v1/users/{userId}/facts/{key}")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// FuzzEvent feeds whole events, the sample events of events/ as seeds:
// no input may panic or be answered with a 5xx, and every answer is one
// the document allows.
func FuzzEvent(f *testing.F) {
	for _, name := range httpapitest.Events(f, "") {
		f.Add(httpapitest.ReadEvent(f, name))
	}
	spec := httpapitest.LoadSpec(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		var req events.APIGatewayV2HTTPRequest
		if json.Unmarshal(payload, &req) != nil {
			return // The runtime refuses it before any handler runs.
		}
		resp, err := fuzzHandler(t).Handle(context.Background(), req)
		if err != nil || resp.StatusCode >= 500 {
			t.Fatalf("%s → %d %s (%v)", payload, resp.StatusCode, resp.Body, err)
		}
		if resp.StatusCode != http.StatusNotFound {
			if err := spec.ValidateResponse(req.RouteKey, resp); err != nil {
				t.Fatalf("%s → %d %s: %v", payload, resp.StatusCode, resp.Body, err)
			}
		}
	})
}

// FuzzRequest varies the parts a client controls around a valid token:
// the key, the admin path's user ID, the body, its encoding and its media
// type, and the claims.
func FuzzRequest(f *testing.F) {
	f.Add("PUT /v1/me/facts/{key}", "Home City", "u-2", `{"value":"Lisbon"}`, false, "application/json", "acme", "memory/user")
	f.Add("PUT /v1/users/{userId}/facts/{key}", "língua", "u#2", `{"value":"x","tenantId":"t"}`, false, "application/json; charset=UTF-8", "acme", "[memory/admin]")
	f.Add("GET /v1/me/facts", "", "", "", false, "", "[a b]", "memory/user")
	f.Add("DELETE /v1/me/facts/{key}", "%2541", "", "eyJ2YWx1ZSI6IngifQ==", true, "text/plain", "", "")
	f.Add("PUT /v1/me/facts/{key}", "k", "", "eyJ2YWx1ZSI6IngifQ==", true, "application/json", "acme", `["memory/user"]`)
	f.Add("PUT /v1/me/facts/{key}", "k", "", `{"value":"\u0000\ud800"}`, false, "application/json", "acme", "memory/user")
	f.Fuzz(func(t *testing.T, route, key, userID, body string, b64 bool, contentType, tenant, scope string) {
		tok := &httpapitest.Token{Sub: "u-1", Tenant: tenant, Claims: map[string]string{"scp": scope}}
		ev := httpapitest.NewEvent(route, tok, map[string]string{"key": key, "userId": userID}, "")
		ev.Body, ev.IsBase64Encoded = body, b64
		ev.Headers["content-type"] = contentType
		h := fuzzHandler(t)
		if _, err := h.Decode(ev); err != nil && httpapi.StatusOf(err) >= 500 {
			t.Fatalf("Decode: %v", err)
		}
		resp, err := h.Handle(context.Background(), ev)
		if err != nil || resp.StatusCode >= 500 {
			t.Fatalf("%+v → %d %s (%v)", ev, resp.StatusCode, resp.Body, err)
		}
	})
}
