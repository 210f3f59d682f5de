package claims

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

var cfg = Config{TenantClaim: "tenant_id", UserScope: "memory/user", AdminScope: "memory/admin"}

func TestForUser(t *testing.T) {
	cases := []struct {
		name         string
		tenant       string
		groups       []string
		claims       string
		scopes, supp string
		err          error
	}{
		{"member", "acme", nil, "map[tenant_id:acme]", "[memory/user]", "[memory/admin]", nil},
		{"admin", "acme", []string{"staff", AdminGroup}, "map[tenant_id:acme]", "[memory/user memory/admin]", "[]", nil},
		{"no tenant", "", []string{AdminGroup}, "", "", "", ErrNoTenant},
		{"tenant with a slash", "acme/other", nil, "", "", "", ErrInvalidTenant},
		{"tenant too long", strings.Repeat("a", 129), nil, "", "", "", ErrInvalidTenant},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := cfg.ForUser(c.tenant, c.groups)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if err != nil {
				return
			}
			if got := fmt.Sprint(g.Claims); got != c.claims {
				t.Errorf("claims %s, want %s", got, c.claims)
			}
			if got := fmt.Sprint(g.Scopes); got != c.scopes {
				t.Errorf("scopes %s, want %s", got, c.scopes)
			}
			if got := fmt.Sprint(g.Suppress); got != c.supp {
				t.Errorf("suppressed %s, want %s", got, c.supp)
			}
		})
	}
}

func TestForUserWithoutScopesAddsNone(t *testing.T) {
	g, err := Config{TenantClaim: "org"}.ForUser("acme", []string{AdminGroup})
	if err != nil || len(g.Scopes) != 0 || len(g.Suppress) != 0 || g.Claims["org"] != "acme" {
		t.Errorf("grant %+v, %v; want the claim org=acme and no scope", g, err)
	}
}

func TestForClient(t *testing.T) {
	g, err := cfg.ForClient(map[string]string{MetadataTenant: "globex", "other": "x"})
	if err != nil || fmt.Sprint(g.Claims) != "map[tenant_id:globex]" || len(g.Scopes)+len(g.Suppress) != 0 {
		t.Errorf("grant %+v, %v; want the tenant claim globex and the client's own scopes", g, err)
	}
	for _, md := range []map[string]string{nil, {"tenant": "acme"}, {MetadataTenant: "a#b"}} {
		if _, err := cfg.ForClient(md); err == nil {
			t.Errorf("metadata %v accepted", md)
		}
	}
	if _, err := (Config{}).ForClient(map[string]string{MetadataTenant: "acme"}); err == nil {
		t.Error("a grant without a tenant claim to put it in")
	}
}
