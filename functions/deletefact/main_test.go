package main

import (
	"testing"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
)

// fixture is this function with the standard users seeded, and its
// table: a token deletes only in its own user's facts in its own tenant,
// whatever the path says, refused requests delete nothing, and a key
// deleted twice answers 204 both times.
var fixture = httpapitest.Fixture{NewHandler: newHandler, Function: "DeleteFactFunction", Events: "deletefact-",
	Cases: []httpapitest.Case{
		{Event: "deletefact-me.json", Status: 204, Stored: httpapitest.UserFacts{httpapitest.Ana: {"city": "Lisbon"}}},
		{Event: "deletefact-admin.json", Status: 204},
		{Event: "deletefact-no-tenant-claim.json", Status: 401, Code: httpapi.CodeUnauthenticated, Stored: httpapitest.SeededFacts()},
		{Name: "own fact", Route: "DELETE /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: map[string]string{"key": "Language"}, Status: 204,
			Stored: httpapitest.UserFacts{httpapitest.Ana: {"city": "Lisbon"}, httpapitest.Bob: {"language": "German"}, httpapitest.OtherAna: {"language": "Finnish"}}},
		{Name: "absent key is 204", Route: "DELETE /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: map[string]string{"key": "nickname"},
			Status: 204, Stored: httpapitest.SeededFacts()},
		{Name: "a userId in the path of a /me route is ignored", Route: "DELETE /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "city", "userId": "u-456"}, Status: 204,
			Stored: httpapitest.UserFacts{httpapitest.Ana: {"language": "Portuguese"}, httpapitest.Bob: {"language": "German"}, httpapitest.OtherAna: {"language": "Finnish"}}},
		{Name: "admin deletes in the token's tenant", Route: "DELETE /v1/users/{userId}/facts/{key}",
			Token:  &httpapitest.Token{Sub: "admin-9", Tenant: "globex", Scope: "memory/admin"},
			Params: map[string]string{"userId": "u-123", "key": "language"}, Status: 204,
			Stored: httpapitest.UserFacts{httpapitest.Ana: {"language": "Portuguese", "city": "Lisbon"}, httpapitest.OtherAna: {}}},
		{Name: "user scope on the admin route", Route: "DELETE /v1/users/{userId}/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-456", "key": "language"}, Status: 403, Stored: httpapitest.SeededFacts()},
		{Name: "admin scope on a /me route", Route: "DELETE /v1/me/facts/{key}", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"key": "language"}, Status: 403, Stored: httpapitest.SeededFacts()},
		{Name: "empty key", Route: "DELETE /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: map[string]string{"key": "--"},
			Status: 400, Stored: httpapitest.SeededFacts()},
		{Name: "no token", Route: "DELETE /v1/me/facts/{key}", Params: map[string]string{"key": "language"},
			Status: 401, Stored: httpapitest.SeededFacts()},
	},
	OnDynamoDB: []httpapitest.Case{
		{Name: "present", Event: "deletefact-me.json", Status: 204},
		{Name: "absent", Event: "deletefact-me.json", Status: 204, Stored: httpapitest.UserFacts{
			httpapitest.Ana: {"city": "Lisbon"}, httpapitest.Bob: {"language": "German"}}},
	},
}

func TestFunction(t *testing.T) { fixture.Run(t) }
