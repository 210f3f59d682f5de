package token

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/usermemory/usermemory/claims"
)

func TestSignedTokenVerifiesWithTheSavedKeyAndJWKS(t *testing.T) {
	iss, err := NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := iss.Save(path); err != nil {
		t.Fatal(err)
	}
	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.KeyID() != iss.KeyID() {
		t.Fatalf("kid after Open = %s, want %s", again.KeyID(), iss.KeyID())
	}
	at := time.Now().Truncate(time.Second)
	tok, err := again.Sign(Claims{Issuer: "http://i", Audience: "aud", Subject: "ana", TenantClaim: "tenant_id", Tenant: "acme",
		Scopes: []string{"memory/user", "memory/admin"}, IssuedAt: at, TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(iss.Handler("http://i"))
	defer srv.Close()
	resp, err := http.Get(srv.URL + JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil || len(set.Keys) != 1 || set.Keys[0]["kid"] != iss.KeyID() || set.Keys[0]["alg"] != "RS256" {
		t.Fatalf("JWKS = %+v (%v), want one RS256 key with the kid", set, err)
	}
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(tok, claims, func(tk *jwt.Token) (any, error) {
		if tk.Header["kid"] != iss.KeyID() {
			t.Errorf("kid = %v", tk.Header["kid"])
		}
		return iss.PublicKey(), nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer("http://i"), jwt.WithAudience("aud"), jwt.WithTimeFunc(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"sub": "ana", "tenant_id": "acme", "scope": "memory/user memory/admin",
		"exp": float64(at.Add(10 * time.Minute).Unix()), "nbf": float64(at.Unix()), "iat": float64(at.Unix())}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %v, want %v", k, claims[k], v)
		}
	}
}

func TestSignWantsASubject(t *testing.T) {
	iss, err := NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Sign(Claims{Issuer: "x"}); err == nil {
		t.Error("Sign without a subject succeeded")
	}
}

func TestTokensGoThroughTheClaimCode(t *testing.T) {
	iss, err := NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Sign(Claims{Subject: "ana", TenantClaim: "tenant_id", Tenant: "acme/globex"}); err == nil {
		t.Error("signed a tenant the trigger refuses")
	}
	cfg := claims.Config{TenantClaim: "org", UserScope: "memory/user", AdminScope: "memory/admin"}
	c, err := UserClaims(cfg, "http://i", "aud", "ana", "acme", []string{claims.AdminGroup})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := iss.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	got := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(tok, got, func(*jwt.Token) (any, error) { return iss.PublicKey(), nil }); err != nil {
		t.Fatal(err)
	}
	if got["org"] != "acme" || got["scope"] != "memory/user memory/admin" {
		t.Errorf("claims %v: want org=acme and both scopes, as the trigger grants an admin", got)
	}
	if c, _ := UserClaims(cfg, "http://i", "aud", "bo", "acme", nil); strings.Join(c.Scopes, " ") != "memory/user" {
		t.Errorf("a member's scopes %q, want memory/user", c.Scopes)
	}
}
