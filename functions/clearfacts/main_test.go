package main

import (
	"testing"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
)

// fixture is this function with the standard users seeded, and its
// table: a token clears only its own user's facts in its own tenant,
// whatever the path says, and refused requests clear nothing.
var fixture = httpapitest.Fixture{NewHandler: newHandler, Function: "ClearFactsFunction", Events: "clearfacts-",
	Cases: []httpapitest.Case{
		{Event: "clearfacts-me.json", Status: 204, Stored: httpapitest.UserFacts{httpapitest.Ana: {}}},
		{Event: "clearfacts-admin.json", Status: 204},
		{Event: "clearfacts-no-tenant-claim.json", Status: 401, Code: httpapi.CodeUnauthenticated, Stored: httpapitest.SeededFacts()},
		{Name: "own facts", Route: "DELETE /v1/me/facts", Token: httpapitest.UserToken(), Status: 204,
			Stored: httpapitest.UserFacts{httpapitest.Ana: {}, httpapitest.Bob: {"language": "German"}, httpapitest.OtherAna: {"language": "Finnish"}}},
		{Name: "a userId in the path of a /me route is ignored", Route: "DELETE /v1/me/facts", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-456"}, Status: 204,
			Stored: httpapitest.UserFacts{httpapitest.Ana: {}, httpapitest.Bob: {"language": "German"}, httpapitest.OtherAna: {"language": "Finnish"}}},
		{Name: "admin clears in the token's tenant", Route: "DELETE /v1/users/{userId}/facts", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"userId": "u-456"}, Status: 204,
			Stored: httpapitest.UserFacts{httpapitest.Ana: {"language": "Portuguese", "city": "Lisbon"}, httpapitest.Bob: {}, httpapitest.OtherAna: {"language": "Finnish"}}},
		{Name: "same user ID, other tenant", Route: "DELETE /v1/me/facts",
			Token: &httpapitest.Token{Sub: "u-123", Tenant: "globex", Scope: "memory/user"}, Status: 204,
			Stored: httpapitest.UserFacts{httpapitest.Ana: {"language": "Portuguese", "city": "Lisbon"}, httpapitest.Bob: {"language": "German"}, httpapitest.OtherAna: {}}},
		{Name: "admin of another tenant clears in that tenant only", Route: "DELETE /v1/users/{userId}/facts",
			Token: httpapitest.AdminToken("globex"), Params: map[string]string{"userId": "u-123"}, Status: 204,
			Stored: httpapitest.UserFacts{httpapitest.Ana: {"language": "Portuguese", "city": "Lisbon"}, httpapitest.Bob: {"language": "German"}, httpapitest.OtherAna: {}}},
		{Name: "user scope on the admin route", Route: "DELETE /v1/users/{userId}/facts", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-456"}, Status: 403, Stored: httpapitest.SeededFacts()},
		{Name: "admin scope on a /me route", Route: "DELETE /v1/me/facts", Token: httpapitest.AdminToken("acme"), Status: 403, Stored: httpapitest.SeededFacts()},
		{Name: "tenant claim as an array", Route: "DELETE /v1/me/facts",
			Token:  &httpapitest.Token{Sub: "u-123", Tenant: "[acme globex]", Scope: "memory/user"},
			Status: 401, Stored: httpapitest.SeededFacts()},
	},
	OnDynamoDB: []httpapitest.Case{{Event: "clearfacts-me.json", Status: 204,
		Stored: httpapitest.UserFacts{httpapitest.Ana: {}, httpapitest.Bob: {"language": "German"}}}},
}

func TestFunction(t *testing.T) { fixture.Run(t) }
