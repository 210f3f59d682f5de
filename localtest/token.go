package main

import (
	"fmt"
	"os"
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
	if c.TTL == 0 {
		c.TTL = time.Hour // what Sign takes for 0
	}
	now := time.Now()
	c.IssuedAt = now
	t, err := iss.Sign(c)
	if err != nil {
		return err
	}
	fmt.Println(t)
	fmt.Fprintln(os.Stderr, tokenNote(*user, *tenant, now, c.TTL))
	return nil
}

// tokenNote says, on standard error, whose token was printed and until
// when the API takes it: a token past its exp is refused with a 401.
func tokenNote(user, tenant string, now time.Time, ttl time.Duration) string {
	who := fmt.Sprintf("token of user %s in tenant %s", user, tenant)
	if ttl <= 0 {
		return who + ": already expired (-ttl " + ttl.String() + "), so the API refuses it"
	}
	return fmt.Sprintf("%s, valid until %s (%s); after that the API refuses it: run this command again for a new one",
		who, now.Add(ttl).Local().Format("15:04:05"), ttl)
}
