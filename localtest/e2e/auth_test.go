package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/localtest/token"
)

// TestRefusedBeforeAnyFunctionRuns holds the authorizer to API Gateway's:
// every one of these requests is answered by the gateway, 401 or 403, and
// no function runs.
func TestRefusedBeforeAnyFunctionRuns(t *testing.T) {
	user := newUser("auth")
	stranger, err := token.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	foreign := func(c token.Claims) string {
		tok, err := stranger.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	base := token.Claims{Issuer: st.Info.Issuer, Audience: st.Info.Audience, Subject: user,
		TenantClaim: st.Info.TenantClaim, Tenant: tenant, Scopes: []string{st.Info.UserScope}}
	valid := userToken(t, tenant, user)
	parts := strings.Split(valid, ".")
	tampered := parts[0] + "." + strings.TrimRight(parts[1], "=") + "x." + parts[2]
	cases := []struct {
		name, method, path, tok string
		want                    int
	}{
		{"no token", http.MethodGet, "/v1/me/facts", "", 401},
		{"not a JWT", http.MethodGet, "/v1/me/facts", "garbage", 401},
		{"tampered payload", http.MethodGet, "/v1/me/facts", tampered, 401},
		{"signed by another key", http.MethodGet, "/v1/me/facts", foreign(base), 401},
		{"another issuer's token", http.MethodGet, "/v1/me/facts", sign(t, claims{tenant: "globex", user: user, scopes: []string{st.Info.UserScope},
			mutate: func(c *token.Claims) { c.Issuer = "https://idp.globex.example" }}), 401},
		{"expired", http.MethodGet, "/v1/me/facts", sign(t, claims{tenant: tenant, user: user, scopes: []string{st.Info.UserScope},
			mutate: func(c *token.Claims) { c.IssuedAt = time.Now().Add(-2 * time.Hour); c.TTL = time.Hour }}), 401},
		{"not yet valid", http.MethodGet, "/v1/me/facts", sign(t, claims{tenant: tenant, user: user, scopes: []string{st.Info.UserScope},
			mutate: func(c *token.Claims) { c.NotBefore = time.Now().Add(time.Hour) }}), 401},
		{"wrong audience", http.MethodGet, "/v1/me/facts", sign(t, claims{tenant: tenant, user: user, scopes: []string{st.Info.UserScope},
			mutate: func(c *token.Claims) { c.Audience = "another-api" }}), 401},
		{"alg none", http.MethodGet, "/v1/me/facts", "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".", 401},
		{"no scope", http.MethodGet, "/v1/me/facts", sign(t, claims{tenant: tenant, user: user}), 403},
		{"another scope", http.MethodPut, "/v1/me/facts/city", sign(t, claims{tenant: tenant, user: user, scopes: []string{"openid"}}), 403},
		{"user scope on an admin route", http.MethodGet, "/v1/users/" + user + "/facts", valid, 403},
		{"user scope on the erasure", http.MethodDelete, "/v1/users/" + user, valid, 403},
		{"no route", http.MethodGet, "/v1/nothing", valid, 404},
	}
	before := st.Invocations()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := api.Call(t, c.method, c.path, c.tok, nil)
			if r.Status != c.want {
				t.Errorf("%s %s = %d %s, want %d", c.method, c.path, r.Status, r.Body, c.want)
			}
			wantBody := map[int]string{401: `{"message":"Unauthorized"}`, 403: `{"message":"Forbidden"}`, 404: `{"message":"Not Found"}`}[c.want]
			if string(r.Body) != wantBody {
				t.Errorf("body = %s, want %s", r.Body, wantBody)
			}
		})
	}
	after := st.Invocations()
	for fn, n := range after {
		if n != before[fn] {
			t.Errorf("%s ran %d times during refused requests, want 0", fn, n-before[fn])
		}
	}
	// The same requests with a valid token do reach the function.
	if r := api.Call(t, http.MethodGet, "/v1/me/facts", valid, nil); r.Status != http.StatusOK {
		t.Errorf("with a valid token: %d %s, want 200", r.Status, r.Body)
	}
	if got := st.Invocations()["GetFactsFunction"]; got != after["GetFactsFunction"]+1 {
		t.Errorf("GetFactsFunction invocations = %d, want %d", got, after["GetFactsFunction"]+1)
	}
}

// TestCORS: a page of the allowed origin may make every request the
// memory page makes (PUT and DELETE of a fact, POST of a pending fact's
// keep); a foreign origin gets no CORS header.
func TestCORS(t *testing.T) {
	origin := "https://app.example.com" // the template's default CorsAllowOrigins
	for _, c := range []struct{ method, path string }{
		{http.MethodPut, "/v1/me/facts/city"},
		{http.MethodDelete, "/v1/me/facts/city"},
		{http.MethodPost, "/v1/me/pending/city/keep"},
		{http.MethodDelete, "/v1/me/pending/city"},
	} {
		req, _ := http.NewRequest(http.MethodOptions, st.Info.APIURL+c.path, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", c.method)
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		before := st.TotalInvocations()
		resp, err := httpc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("preflight of %s %s = %d, Allow-Origin %q; want 204 and %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), origin)
		}
		if !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), c.method) {
			t.Errorf("preflight of %s %s: Allow-Methods = %q, want %s in it", c.method, c.path, resp.Header.Get("Access-Control-Allow-Methods"), c.method)
		}
		if st.TotalInvocations() != before {
			t.Error("a preflight ran a function")
		}
	}
	req, _ := http.NewRequest(http.MethodGet, st.Info.APIURL+"/v1/me/facts", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Authorization", "Bearer "+userToken(t, tenant, newUser("cors")))
	resp, err := httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("Allow-Origin for a foreign origin = %q, want none", got)
	}
}
