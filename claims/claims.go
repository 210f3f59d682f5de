// Package claims is the claim code of the stack's identity: what the
// access token of a user or of a gateway carries for the fact API, the
// tenant claim and the memory scopes. The pre token generation trigger of
// the stack's Cognito user pool (functions/pretoken) adapts Cognito's
// event to it, and the local stack's issuer (localtest/token) signs its
// tokens through it, so that the code runs in every local test. It knows
// no AWS types.
package claims

import (
	"errors"
	"slices"

	"github.com/usermemory/usermemory/memory"
)

// TenantAttribute is the user pool attribute that holds a user's tenant.
const TenantAttribute = "custom:tenant_id"

// AdminGroup is the user pool group whose members get the admin scope.
const AdminGroup = "memory-admin"

// MetadataTenant is the key of the client metadata (aws_client_metadata
// of a client-credentials token request) that names the tenant a
// gateway asks a token for.
const MetadataTenant = "tenant_id"

// Errors of [Config.ForUser] and [Config.ForClient]. Cognito shows the
// message of the error the trigger returns, and refuses the token.
var (
	// ErrNoTenant means the user has no tenant attribute, or the token
	// request names no tenant.
	ErrNoTenant = errors.New("claims: no tenant: set the user's " + TenantAttribute + " attribute, or the " + MetadataTenant + " client metadata of a client-credentials request")
	// ErrInvalidTenant means the tenant is not an ID the API accepts
	// (memory.ValidID).
	ErrInvalidTenant = errors.New("claims: the tenant is not a valid ID (1 to 128 letters, digits and - _ . : @ | + =)")
)

// Config says which claim carries the tenant and which scopes a grant
// gives. An empty scope is never added: the local issuer leaves the scopes
// to its caller.
type Config struct {
	// TenantClaim is the claim of the tenant (the template's TenantClaim).
	TenantClaim string
	// UserScope and AdminScope are the scopes of the /v1/me and /v1/users
	// routes (the template's UserScope and AdminScope).
	UserScope, AdminScope string
}

// Grant is what goes into an access token.
type Grant struct {
	// Claims are the claims to add or override.
	Claims map[string]string
	// Scopes are the scopes to add, and Suppress those to take away.
	Scopes, Suppress []string
}

// ForUser returns the grant of a person who signed in: the tenant claim
// from the tenant attribute, the user scope, and the admin scope when
// groups holds [AdminGroup] (suppressed otherwise, whatever the client
// asked). It returns [ErrNoTenant] or [ErrInvalidTenant] when the tenant
// cannot be given.
func (c Config) ForUser(tenant string, groups []string) (Grant, error) {
	g, err := c.tenant(tenant)
	if err != nil {
		return Grant{}, err
	}
	g.Scopes = appendScope(g.Scopes, c.UserScope)
	if slices.Contains(groups, AdminGroup) {
		g.Scopes = appendScope(g.Scopes, c.AdminScope)
	} else {
		g.Suppress = appendScope(g.Suppress, c.AdminScope)
	}
	return g, nil
}

// ForClient returns the grant of a gateway's client-credentials token:
// the tenant claim from the tenant the request names in its client
// metadata ([MetadataTenant]). Its scopes are the app client's own; none
// is added. It returns [ErrNoTenant] or [ErrInvalidTenant] when the
// metadata names no valid tenant.
func (c Config) ForClient(metadata map[string]string) (Grant, error) {
	return c.tenant(metadata[MetadataTenant])
}

func (c Config) tenant(tenant string) (Grant, error) {
	switch {
	case tenant == "":
		return Grant{}, ErrNoTenant
	case !memory.ValidID(tenant):
		return Grant{}, ErrInvalidTenant
	case c.TenantClaim == "":
		return Grant{}, errors.New("claims: no tenant claim configured")
	}
	return Grant{Claims: map[string]string{c.TenantClaim: tenant}}, nil
}

func appendScope(scopes []string, s string) []string {
	if s == "" || slices.Contains(scopes, s) {
		return scopes
	}
	return append(scopes, s)
}
