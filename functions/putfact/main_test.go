package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/httpapi/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

func TestMain(m *testing.M) { httpapitest.Main(m) }

var (
	ana      = memory.Scope{TenantID: "acme", UserID: "u-123"}
	bob      = memory.Scope{TenantID: "acme", UserID: "u-456"}
	otherAna = memory.Scope{TenantID: "globex", UserID: "u-123"}
	user     = &httpapitest.Token{Sub: "u-123", Tenant: "acme", Scope: "memory/user"}
	admin    = &httpapitest.Token{Sub: "admin-7", Tenant: "acme", Scope: "memory/admin"}
)

func handlerOn(t testing.TB, repo memory.Repository) httpapitest.HandlerFunc {
	t.Helper()
	h, err := newHandler(httpapitest.NewStore(t, repo), httpapi.Auth{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h.Handle
}

func TestEvents(t *testing.T) {
	httpapitest.RunEvents(t, "putfact-", map[string]httpapitest.Want{
		"putfact-me.json":                 {Status: http.StatusOK},
		"putfact-encoded-key.json":        {Status: http.StatusOK},
		"putfact-admin.json":              {Status: http.StatusOK},
		"putfact-base64.json":             {Status: http.StatusOK},
		"putfact-too-long.json":           {Status: http.StatusBadRequest, Code: memory.CodeFactTooLong},
		"putfact-empty-value.json":        {Status: http.StatusBadRequest, Code: memory.CodeEmptyFact},
		"putfact-unknown-field.json":      {Status: http.StatusBadRequest, Code: httpapi.CodeUnknownField},
		"putfact-tenant-in-body.json":     {Status: http.StatusBadRequest, Code: httpapi.CodeIdentityInBody},
		"putfact-user-in-body.json":       {Status: http.StatusBadRequest, Code: httpapi.CodeIdentityInBody},
		"putfact-malformed-json.json":     {Status: http.StatusBadRequest, Code: httpapi.CodeMalformedBody},
		"putfact-wrong-content-type.json": {Status: http.StatusUnsupportedMediaType, Code: httpapi.CodeUnsupportedMediaType},
		"putfact-too-large.json":          {Status: http.StatusRequestEntityTooLarge, Code: httpapi.CodeBodyTooLarge},
	}, func(t *testing.T) httpapitest.HandlerFunc { return handlerOn(t, memorytest.NewRepo()) })
}

func TestRoutesMatchTemplateAndDocument(t *testing.T) {
	httpapitest.CheckRoutes(t, "PutFactFunction", routes)
}

func TestResponse(t *testing.T) {
	repo := memorytest.NewRepo()
	resp := httpapitest.Invoke(t, handlerOn(t, repo), httpapitest.ReadEvent(t, "putfact-encoded-key.json"))
	want := `{"fact":{"key":"home_city","value":"Lisbon","updatedAt":"2026-11-29T22:00:00Z"}}`
	if resp.StatusCode != 200 || resp.Body != want {
		t.Errorf("got %d %s, want 200 %s", resp.StatusCode, resp.Body, want)
	}
	if diff := cmp.Diff(map[string]string{"home_city": "Lisbon"}, httpapitest.Facts(t, repo, ana)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

func TestTooLongSaysHowLong(t *testing.T) {
	resp := httpapitest.Invoke(t, handlerOn(t, memorytest.NewRepo()), httpapitest.ReadEvent(t, "putfact-too-long.json"))
	var p httpapi.Problem
	if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
		t.Fatal(err)
	}
	if p.UserMessage == "" || !strings.Contains(p.UserMessage, "200") {
		t.Errorf("userMessage %q, want one that names the limit", p.UserMessage)
	}
}

// TestScope shows that a token writes only its own user's facts in its
// own tenant, whatever the path or the body say, and that refused requests
// write nothing.
func TestScope(t *testing.T) {
	spec := httpapitest.LoadSpec(t)
	tests := []struct {
		name   string
		route  string
		tok    *httpapitest.Token
		params map[string]string
		body   string
		status int
		// want is the stored facts of each scope afterwards.
		want map[memory.Scope]map[string]string
	}{
		{"own fact", "PUT /v1/me/facts/{key}", user, map[string]string{"key": "city"}, `{"value":"Porto"}`, 200,
			map[memory.Scope]map[string]string{ana: {"city": "Porto"}, bob: {}, otherAna: {}}},
		{"a userId in the path of a /me route is ignored", "PUT /v1/me/facts/{key}", user,
			map[string]string{"key": "city", "userId": "u-456"}, `{"value":"Porto"}`, 200,
			map[memory.Scope]map[string]string{ana: {"city": "Porto"}, bob: {}, otherAna: {}}},
		{"tenant in the body", "PUT /v1/me/facts/{key}", user, map[string]string{"key": "city"},
			`{"value":"Porto","tenantId":"globex"}`, 400,
			map[memory.Scope]map[string]string{ana: {}, bob: {}, otherAna: {}}},
		{"user in the body, other case", "PUT /v1/me/facts/{key}", user, map[string]string{"key": "city"},
			`{"value":"Porto","UserId":"u-456"}`, 400,
			map[memory.Scope]map[string]string{ana: {}, bob: {}, otherAna: {}}},
		{"member named Value is unknown", "PUT /v1/me/facts/{key}", user, map[string]string{"key": "city"},
			`{"Value":"Porto"}`, 400, map[memory.Scope]map[string]string{ana: {}}},
		{"value not a string", "PUT /v1/me/facts/{key}", user, map[string]string{"key": "city"},
			`{"value":42}`, 400, map[memory.Scope]map[string]string{ana: {}}},
		{"two objects", "PUT /v1/me/facts/{key}", user, map[string]string{"key": "city"},
			`{"value":"a"}{"value":"b"}`, 400, map[memory.Scope]map[string]string{ana: {}}},
		{"an array", "PUT /v1/me/facts/{key}", user, map[string]string{"key": "city"},
			`["value"]`, 400, map[memory.Scope]map[string]string{ana: {}}},
		{"empty key", "PUT /v1/me/facts/{key}", user, map[string]string{"key": " - "},
			`{"value":"Porto"}`, 400, map[memory.Scope]map[string]string{ana: {}}},
		{"admin writes a user of the token's tenant", "PUT /v1/users/{userId}/facts/{key}", admin,
			map[string]string{"userId": "u-456", "key": "role"}, `{"value":"pilot"}`, 200,
			map[memory.Scope]map[string]string{ana: {}, bob: {"role": "pilot"}, otherAna: {}}},
		{"user scope on the admin route", "PUT /v1/users/{userId}/facts/{key}", user,
			map[string]string{"userId": "u-456", "key": "role"}, `{"value":"pilot"}`, 403,
			map[memory.Scope]map[string]string{bob: {}}},
		{"admin path user ID with a separator", "PUT /v1/users/{userId}/facts/{key}", admin,
			map[string]string{"userId": "u-456#x", "key": "role"}, `{"value":"pilot"}`, 400,
			map[memory.Scope]map[string]string{bob: {}}},
		{"no tenant claim", "PUT /v1/me/facts/{key}", &httpapitest.Token{Sub: "u-123", Scope: "memory/user"},
			map[string]string{"key": "city"}, `{"value":"Porto"}`, 401, map[memory.Scope]map[string]string{ana: {}}},
		{"tenant claim named by the config only", "PUT /v1/me/facts/{key}",
			&httpapitest.Token{Sub: "u-123", Tenant: "acme", TenantClaim: "custom:tenant", Scope: "memory/user"},
			map[string]string{"key": "city"}, `{"value":"Porto"}`, 401, map[memory.Scope]map[string]string{ana: {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := memorytest.NewRepo()
			ev := httpapitest.NewEvent(tt.route, tt.tok, tt.params, tt.body)
			resp := httpapitest.Invoke(t, handlerOn(t, repo), httpapitest.Marshal(t, ev))
			spec.Check(t, ev, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, resp.Body, tt.status)
			}
			for s, want := range tt.want {
				if diff := cmp.Diff(want, httpapitest.Facts(t, repo, s)); diff != "" {
					t.Errorf("facts of %v (-want +got):\n%s", s, diff)
				}
			}
		})
	}
}

func TestBase64BodyLimits(t *testing.T) {
	ev := httpapitest.NewEvent("PUT /v1/me/facts/{key}", user, map[string]string{"key": "city"}, "")
	ev.Headers["content-type"] = "application/json; charset=utf-8"
	ev.IsBase64Encoded = true
	ev.Body = "!!not base64"
	resp := httpapitest.Invoke(t, handlerOn(t, memorytest.NewRepo()), httpapitest.Marshal(t, ev))
	if resp.StatusCode != 400 || httpapitest.ProblemCode(resp) != httpapi.CodeMalformedBody {
		t.Errorf("broken base64: got %d %s", resp.StatusCode, resp.Body)
	}
	ev.Body = base64.StdEncoding.EncodeToString([]byte(`{"value":"` + strings.Repeat("x", httpapi.DefaultMaxBodyBytes) + `"}`))
	resp = httpapitest.Invoke(t, handlerOn(t, memorytest.NewRepo()), httpapitest.Marshal(t, ev))
	if resp.StatusCode != 413 {
		t.Errorf("large base64: got %d %s", resp.StatusCode, resp.Body)
	}
	ev.Headers["content-type"] = "application/json; charset=latin1"
	ev.Body = base64.StdEncoding.EncodeToString([]byte(`{"value":"Porto"}`))
	resp = httpapitest.Invoke(t, handlerOn(t, memorytest.NewRepo()), httpapitest.Marshal(t, ev))
	if resp.StatusCode != 415 {
		t.Errorf("latin1: got %d %s", resp.StatusCode, resp.Body)
	}
}

func TestConflictIs409WithUserMessage(t *testing.T) {
	repo := memorytest.NewRepo()
	httpapitest.Seed(t, repo, ana, "language", "Portuguese")
	// Fill to the cap so that the write goes through Save, then make every
	// Save lose to a concurrent writer.
	for i := range memory.DefaultMaxFacts {
		httpapitest.Seed(t, repo, ana, "k"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v")
	}
	repo.BeforeSave = func() {
		rec, _ := repo.Record(ana)
		repo.Put(ana, rec)
	}
	resp := httpapitest.Exchange(t, httpapitest.LoadSpec(t), handlerOn(t, repo), httpapitest.ReadEvent(t, "putfact-encoded-key.json"))
	if resp.StatusCode != 409 || httpapitest.ProblemCode(resp) != memory.CodeConflict {
		t.Errorf("got %d %s, want 409 code %d", resp.StatusCode, resp.Body, memory.CodeConflict)
	}
}

func TestOnDynamoDB(t *testing.T) {
	repo := httpapitest.MotoRepo(t, httpapitest.Endpoint)
	h := handlerOn(t, repo)
	spec := httpapitest.LoadSpec(t)
	for _, name := range []string{"putfact-me.json", "putfact-encoded-key.json", "putfact-admin.json", "putfact-tenant-in-body.json"} {
		httpapitest.Exchange(t, spec, h, httpapitest.ReadEvent(t, name))
	}
	if diff := cmp.Diff(map[string]string{"language": "Portuguese", "home_city": "Lisbon", "role": "data engineer"},
		httpapitest.Facts(t, repo, ana)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}
