package main

import (
	"testing"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// seedThreads stores, besides the standard users (whose facts are set by
// hand), what two conversations taught Ana: pet from th-9, role from
// th-8.
func seedThreads(t testing.TB, repo memory.Repository) {
	t.Helper()
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-9", "I have a cat.",
		memory.Operation{Op: memory.OpSet, Key: "pet", Value: "cat", Evidence: "I have a cat"})
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-8", "I work as a nurse.",
		memory.Operation{Op: memory.OpSet, Key: "role", Value: "nurse", Evidence: "I work as a nurse"})
}

// Ana's facts: all of them, and without th-9's.
var (
	anas       = map[string]string{"language": "Portuguese", "city": "Lisbon", "pet": "cat", "role": "nurse"}
	anasForgot = map[string]string{"language": "Portuguese", "city": "Lisbon", "role": "nurse"}
)

// fixture is this function over the standard users and Ana's two
// conversations: forgetting th-9 forgets its fact only, never a fact set
// by hand nor another thread's, for the token's own user (or the admin's
// target in the admin's tenant); a refused request forgets nothing.
var fixture = httpapitest.Fixture{NewHandler: newHandler, Function: "ForgetThreadFunction", Events: "forgetthread-", Seed: seedThreads,
	Cases: []httpapitest.Case{
		{Event: "forgetthread-me.json", Status: 200, Listed: map[string]string{"pet": "cat"},
			Stored: httpapitest.UserFacts{httpapitest.Ana: anasForgot, httpapitest.Bob: {"language": "German"}}},
		{Event: "forgetthread-admin.json", Status: 200, Listed: map[string]string{"pet": "cat"},
			Stored: httpapitest.UserFacts{httpapitest.Ana: anasForgot}},
		{Name: "a thread that taught nothing", Route: routeMe, Token: httpapitest.UserToken(),
			Params: map[string]string{"threadId": "th-1"}, Status: 200, Listed: map[string]string{},
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "another user forgets nothing of Ana's", Route: routeMe,
			Token:  &httpapitest.Token{Sub: httpapitest.Bob.UserID, Tenant: httpapitest.Bob.TenantID, Scope: "memory/user"},
			Params: map[string]string{"threadId": "th-9"}, Status: 200, Listed: map[string]string{},
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "admin of another tenant forgets in that tenant only", Route: routeAdmin, Token: httpapitest.AdminToken("globex"),
			Params: map[string]string{"userId": httpapitest.Ana.UserID, "threadId": "th-9"}, Status: 200, Listed: map[string]string{},
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas, httpapitest.OtherAna: {"language": "Finnish"}}},
		{Name: "a thread ID a path may not hold", Route: routeMe, Token: httpapitest.UserToken(),
			Params: map[string]string{"threadId": "th 9"}, Status: 400, Code: memory.CodeInvalidID, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "user scope on the admin route", Route: routeAdmin, Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-123", "threadId": "th-9"}, Status: 403, Code: httpapi.CodeForbidden,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "admin scope on the /me route", Route: routeMe, Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"threadId": "th-9"}, Status: 403, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "no token", Route: routeMe, Params: map[string]string{"threadId": "th-9"}, Status: 401,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "route this function does not serve", Route: "DELETE /v1/me/facts", Token: httpapitest.UserToken(), Status: 404},
	},
	OnDynamoDB: []httpapitest.Case{{Event: "forgetthread-me.json", Status: 200, Listed: map[string]string{"pet": "cat"},
		Stored: httpapitest.UserFacts{httpapitest.Ana: anasForgot, httpapitest.Bob: {"language": "German"}}}},
}

func TestFunction(t *testing.T) { fixture.Run(t) }
