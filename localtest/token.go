package main

import (
	"fmt"
	"time"

	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/localtest/token"
	"github.com/usermemory/usermemory/memory"
)

func tokenCmd(args []string) error {
	fs := newFlags("token", "[-state DIR] --tenant acme --user ana [--admin] [--ttl 1h] [--audience AUD]")
	state := fs.stateDir()
	tenant := fs.String("tenant", "acme", "tenant, in the tenant claim")
	user := fs.String("user", "ana", "user, the sub claim")
	admin := fs.Bool("admin", false, "add the admin scope")
	ttl := fs.Duration("ttl", time.Hour, "lifetime")
	audience := fs.String("audience", "", "audience (default: the stack's)")
	if err := fs.parse(args, false); err != nil {
		return err
	}
	// An empty ID would sign a token that the API refuses only later.
	if err := (memory.Scope{TenantID: *tenant, UserID: *user}).Validate(); err != nil {
		return fs.errorf("--tenant and --user: %v", err)
	}
	info, err := stack.ReadInfo(*state)
	if err != nil {
		return err
	}
	iss, err := token.Open(info.KeyFile)
	if err != nil {
		return err
	}
	scopes := []string{info.UserScope}
	if *admin {
		scopes = append(scopes, info.AdminScope)
	}
	aud := info.Audience
	if *audience != "" {
		aud = *audience
	}
	t, err := iss.Sign(token.Claims{
		Issuer: info.Issuer, Audience: aud, Subject: *user,
		TenantClaim: info.TenantClaim, Tenant: *tenant, Scopes: scopes, TTL: *ttl,
	})
	if err != nil {
		return err
	}
	fmt.Println(t)
	return nil
}
