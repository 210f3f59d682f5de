package main

import (
	"fmt"
	"time"

	"github.com/usermemory/usermemory/claims"
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
	// The scopes are those the deployed stack's trigger grants: the admin
	// scope to a member of its admin group.
	var groups []string
	if *admin {
		groups = []string{claims.AdminGroup}
	}
	aud := info.Audience
	if *audience != "" {
		aud = *audience
	}
	c, err := token.UserClaims(claims.Config{TenantClaim: info.TenantClaim, UserScope: info.UserScope, AdminScope: info.AdminScope},
		info.Issuer, aud, *user, *tenant, groups)
	if err != nil {
		return err
	}
	c.TTL = *ttl
	t, err := iss.Sign(c)
	if err != nil {
		return err
	}
	fmt.Println(t)
	return nil
}
