package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// issuer checks an external issuer as API Gateway's JWT authorizer will
// use it: its OpenID discovery document at
// {issuer}/.well-known/openid-configuration names the same issuer and a
// jwks_uri, and the JWKS there has keys
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-jwt-authorizer.html).
// An empty issuer means the stack creates its own user pool.
func (p *preflight) issuer(ctx context.Context, iss string) Result {
	if iss == "" {
		return Result{Pass, "issuer", "JwtIssuer is empty: the stack creates its Cognito user pool", ""}
	}
	fix := "set JwtIssuer to your identity provider's issuer URL exactly as its tokens' iss claim says"
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	url := strings.TrimSuffix(iss, "/") + "/.well-known/openid-configuration"
	if err := p.getJSON(ctx, url, &doc); err != nil {
		return Result{Block, "issuer", "the discovery document: " + err.Error(), fix}
	}
	if doc.Issuer != iss {
		return Result{Block, "issuer", fmt.Sprintf("the discovery document names the issuer %q, not %q", doc.Issuer, iss), fix}
	}
	if doc.JWKSURI == "" {
		return Result{Block, "issuer", url + " has no jwks_uri", "use an OpenID Connect issuer that publishes its keys"}
	}
	var jwks struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := p.getJSON(ctx, doc.JWKSURI, &jwks); err != nil {
		return Result{Block, "issuer", "the JWKS: " + err.Error(), "use an OpenID Connect issuer that publishes its keys"}
	}
	if len(jwks.Keys) == 0 {
		return Result{Block, "issuer", doc.JWKSURI + " has no keys", "use an OpenID Connect issuer that publishes its keys"}
	}
	return Result{Pass, "issuer", fmt.Sprintf("%s publishes its discovery document and %d key(s)", iss, len(jwks.Keys)), ""}
}

// getJSON GETs url and decodes its JSON body into v.
func (p *preflight) getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: not JSON: %w", url, err)
	}
	return nil
}
