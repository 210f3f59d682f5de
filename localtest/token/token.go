// Package token is the local stack's token issuer: an RSA signing key, the
// JWKS that publishes its public half, and RS256 access tokens with the
// claims the HTTP API's JWT authorizer and the functions read. The tenant
// claim goes in through package claims, the code of the deployed stack's
// pre token generation trigger (functions/pretoken), and [UserClaims]
// grants scopes as that trigger does.
package token

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/usermemory/usermemory/claims"
)

// JWKSPath is the path of the JWKS on the issuer's HTTP server.
const JWKSPath = "/.well-known/jwks.json"

// Issuer signs tokens with one RSA key.
type Issuer struct {
	key *rsa.PrivateKey
	kid string
}

// NewIssuer makes an issuer with a new 2048-bit RSA key.
func NewIssuer() (*Issuer, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("token: make key: %w", err)
	}
	return fromKey(k), nil
}

func fromKey(k *rsa.PrivateKey) *Issuer {
	der := x509.MarshalPKCS1PublicKey(&k.PublicKey)
	sum := sha256.Sum256(der)
	return &Issuer{key: k, kid: base64.RawURLEncoding.EncodeToString(sum[:12])}
}

// Save writes the private key to path (PEM, mode 0600), so that another
// process can sign with it.
func (i *Issuer) Save(path string) error {
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(i.key)})
	return os.WriteFile(path, b, 0o600)
}

// Open reads an issuer saved with [Issuer.Save].
func Open(path string) (*Issuer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("token: %s holds no PEM key", path)
	}
	k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("token: %s: %w", path, err)
	}
	return fromKey(k), nil
}

// KeyID returns the kid of the key.
func (i *Issuer) KeyID() string { return i.kid }

// PublicKey returns the public half of the key.
func (i *Issuer) PublicKey() *rsa.PublicKey { return &i.key.PublicKey }

// JWKS returns the JSON Web Key Set publishing the public key.
func (i *Issuer) JWKS() []byte {
	b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{ // An RSA public key always marshals.
		Key: &i.key.PublicKey, KeyID: i.kid, Algorithm: "RS256", Use: "sig"}}})
	return b
}

// Handler serves the JWKS at [JWKSPath] and an OpenID discovery document
// naming it, for the issuer at issuerURL.
func (i *Issuer) Handler(issuerURL string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+JWKSPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(i.JWKS())
	})
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": issuerURL, "jwks_uri": issuerURL + JWKSPath,
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	return mux
}

// Claims are the claims of a token to sign.
type Claims struct {
	Issuer   string
	Audience string
	Subject  string
	// TenantClaim names the claim that carries Tenant, which Sign puts
	// there through claims.Config.ForUser: a tenant the deployed trigger
	// would refuse fails Sign. Groups are the user's groups.
	TenantClaim string
	Tenant      string
	Groups      []string
	// Scopes go into the space-separated scope claim.
	Scopes []string
	// IssuedAt defaults to now; TTL to one hour. NotBefore is IssuedAt
	// unless set.
	IssuedAt  time.Time
	NotBefore time.Time
	TTL       time.Duration
	// Extra claims, added last (they may replace the others).
	Extra map[string]any
}

// Sign returns a signed RS256 token with c's claims.
func (i *Issuer) Sign(c Claims) (string, error) {
	if c.Subject == "" {
		return "", errors.New("token: no subject")
	}
	if c.IssuedAt.IsZero() {
		c.IssuedAt = time.Now()
	}
	if c.NotBefore.IsZero() {
		c.NotBefore = c.IssuedAt
	}
	if c.TTL == 0 {
		c.TTL = time.Hour
	}
	m := jwt.MapClaims{
		"iss": c.Issuer,
		"aud": c.Audience,
		"sub": c.Subject,
		"iat": c.IssuedAt.Unix(),
		"nbf": c.NotBefore.Unix(),
		"exp": c.IssuedAt.Add(c.TTL).Unix(),
		"jti": rand.Text(),
	}
	if c.TenantClaim != "" && c.Tenant != "" {
		g, err := claims.Config{TenantClaim: c.TenantClaim}.ForUser(c.Tenant, c.Groups)
		if err != nil {
			return "", fmt.Errorf("token: %w", err)
		}
		for k, v := range g.Claims {
			m[k] = v
		}
	}
	if len(c.Scopes) > 0 {
		m["scope"] = strings.Join(c.Scopes, " ")
	}
	for k, v := range c.Extra {
		m[k] = v
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, m)
	t.Header["kid"] = i.kid
	return t.SignedString(i.key)
}

// UserClaims returns the claims of the access token the deployed stack
// gives a person of tenant who signed in, in groups: the tenant claim and
// the scopes of cfg.ForUser (the user scope, and the admin scope for a
// member of claims.AdminGroup). The error is the claim code's refusal.
func UserClaims(cfg claims.Config, issuer, audience, subject, tenant string, groups []string) (Claims, error) {
	g, err := cfg.ForUser(tenant, groups)
	if err != nil {
		return Claims{}, fmt.Errorf("token: %w", err)
	}
	return Claims{Issuer: issuer, Audience: audience, Subject: subject,
		TenantClaim: cfg.TenantClaim, Tenant: tenant, Groups: groups, Scopes: g.Scopes}, nil
}
