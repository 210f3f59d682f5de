package token

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// TestSignInCodeWithPKCE walks the authorization code grant with PKCE
// through the stand-in: a code only for the client's callback, redeemed
// once, with the verifier of its challenge; the token carries the tenant,
// the scopes and client_id.
func TestSignInCodeWithPKCE(t *testing.T) {
	iss, err := NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	s := NewSignIn(iss, "http://issuer")
	const page = "http://127.0.0.1:3000/app/"
	s.SetClient(Client{ID: "page", URLs: []string{page}, TenantClaim: "tenant_id", UserScope: "memory/user", AdminScope: "memory/admin"})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	verifier := strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {"page"}, "redirect_uri": {page}, "state": {"st4te"},
		"scope": {"openid memory/user"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	for name, change := range map[string][2]string{
		"another client": {"client_id", "other"}, "another callback": {"redirect_uri", "https://evil.example/"},
		"no PKCE": {"code_challenge_method", ""}, "plain PKCE": {"code_challenge_method", "plain"},
	} {
		bad := url.Values{}
		for k, v := range q {
			bad[k] = v
		}
		bad.Set(change[0], change[1])
		if resp, err := http.Get(srv.URL + AuthorizePath + "?" + bad.Encode()); err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %v %v, want 400 and no redirect", name, resp.Status, err)
		}
	}
	if resp, err := http.Get(srv.URL + AuthorizePath + "?" + q.Encode()); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the form: %v %v", resp, err)
	}
	form := url.Values{"username": {"zoe"}, "tenant": {"acme"}}
	for k, v := range q {
		form[k] = v
	}
	resp, err := noRedirect.PostForm(srv.URL+AuthorizePath, form)
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("sign in: %v %v", resp, err)
	}
	back, _ := url.Parse(resp.Header.Get("Location"))
	if back.Scheme+"://"+back.Host+back.Path != page || back.Query().Get("state") != "st4te" || back.Query().Get("code") == "" {
		t.Fatalf("redirect to %s: want the callback with a code and the state", back)
	}
	redeem := func(verifier string) (int, map[string]any) {
		resp, err := http.PostForm(srv.URL+TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {"page"},
			"code": {back.Query().Get("code")}, "redirect_uri": {page}, "code_verifier": {verifier}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Error("the token endpoint does not answer other origins")
		}
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if status, out := redeem(strings.Repeat("w", 43)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("a wrong verifier: %d %v, want 400 invalid_grant", status, out)
	}
	// The code went with the failed attempt, as a code is redeemed once.
	if status, out := redeem(verifier); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("a code after a failed redemption: %d %v, want 400 invalid_grant", status, out)
	}

	// Again, right this time.
	resp, err = noRedirect.PostForm(srv.URL+AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	back, _ = url.Parse(resp.Header.Get("Location"))
	status, out := redeem(verifier)
	if status != http.StatusOK || out["token_type"] != "Bearer" {
		t.Fatalf("redeem: %d %v", status, out)
	}
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(out["access_token"].(string), claims, func(*jwt.Token) (any, error) { return iss.PublicKey(), nil }); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"sub": "zoe", "tenant_id": "acme", "scope": "openid memory/user", "client_id": "page", "token_use": "access", "iss": "http://issuer"} {
		if claims[k] != v {
			t.Errorf("claim %s = %v, want %v", k, claims[k], v)
		}
	}
	if status, _ := redeem(verifier); status != http.StatusBadRequest {
		t.Errorf("a code redeemed twice: %d, want 400", status)
	}

	resp, err = noRedirect.Get(srv.URL + LogoutPath + "?" + url.Values{"client_id": {"page"}, "logout_uri": {page}}.Encode())
	if err != nil || resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != page {
		t.Errorf("logout: %v %v, want a redirect to the page", resp, err)
	}
	if resp, _ := noRedirect.Get(srv.URL + LogoutPath + "?" + url.Values{"client_id": {"page"}, "logout_uri": {"https://evil.example/"}}.Encode()); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("logout to another URL: %d, want 400", resp.StatusCode)
	}
}
