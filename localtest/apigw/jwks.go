package apigw

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// JWKS is a JSON Web Key Set (read by go-jose's JSONWebKeySet, which
// checks each key's encoding) fetched over HTTP, as API Gateway fetches
// the issuer's keys: once, then again when a token names a key it does
// not know (at most once a second). It is safe for concurrent use.
type JWKS struct {
	url     string
	client  *http.Client
	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

// NewJWKS returns the key set published at url.
func NewJWKS(url string) *JWKS {
	return &JWKS{url: url, client: &http.Client{Timeout: 5 * time.Second}}
}

// Key returns the RSA key with ID kid.
func (j *JWKS) Key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if k, ok := j.keys[kid]; ok {
		return k, nil
	}
	if time.Since(j.fetched) < time.Second && j.keys != nil {
		return nil, fmt.Errorf("apigw: no key %q in the JWKS", kid)
	}
	keys, err := j.fetch(ctx)
	j.fetched = time.Now()
	if err != nil {
		return nil, err
	}
	j.keys = keys
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("apigw: no key %q in the JWKS", kid)
}

func (j *JWKS) fetch(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("apigw: fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("apigw: fetch JWKS: %s", resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return nil, fmt.Errorf("apigw: decode JWKS: %w", err)
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if pub, ok := k.Key.(*rsa.PublicKey); ok && (k.Use == "" || k.Use == "sig") {
			keys[k.KeyID] = pub
		}
	}
	return keys, nil
}

// keyfunc adapts the set to jwt.Keyfunc.
func (j *JWKS) keyfunc(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, fmt.Errorf("apigw: token has no kid")
		}
		return j.Key(ctx, kid)
	}
}
