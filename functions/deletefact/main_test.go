package main

import (
	"net/http"
	"testing"

	"github.com/usermemory/usermemory/functions/httpapi/httpapitest"
)

// fixture is this function with the standard users seeded.
var fixture = httpapitest.Fixture{NewHandler: newHandler}

func TestEvents(t *testing.T) {
	fixture.RunEvents(t, "deletefact-", map[string]httpapitest.Want{
		"deletefact-me.json":    {Status: http.StatusNoContent},
		"deletefact-admin.json": {Status: http.StatusNoContent},
	})
}

func TestRoutesMatchTemplateAndDocument(t *testing.T) {
	httpapitest.CheckRoutes(t, "DeleteFactFunction", routes)
}

// TestScope shows that a token deletes only in its own user's facts in
// its own tenant, whatever the path says, and that refused requests
// delete nothing.
func TestScope(t *testing.T) {
	ana, bob, otherAna := httpapitest.Ana, httpapitest.Bob, httpapitest.OtherAna
	user := httpapitest.UserToken()
	untouched := httpapitest.SeededFacts()
	fixture.RunCases(t, []httpapitest.Case{
		{Name: "own fact", Route: "DELETE /v1/me/facts/{key}", Token: user, Params: map[string]string{"key": "Language"}, Status: 204,
			Stored: httpapitest.UserFacts{ana: {"city": "Lisbon"}, bob: {"language": "German"}, otherAna: {"language": "Finnish"}}},
		{Name: "absent key is 204", Route: "DELETE /v1/me/facts/{key}", Token: user, Params: map[string]string{"key": "nickname"},
			Status: 204, Stored: untouched},
		{Name: "a userId in the path of a /me route is ignored", Route: "DELETE /v1/me/facts/{key}", Token: user,
			Params: map[string]string{"key": "city", "userId": "u-456"}, Status: 204,
			Stored: httpapitest.UserFacts{ana: {"language": "Portuguese"}, bob: {"language": "German"}, otherAna: {"language": "Finnish"}}},
		{Name: "admin deletes in the token's tenant", Route: "DELETE /v1/users/{userId}/facts/{key}",
			Token:  &httpapitest.Token{Sub: "admin-9", Tenant: "globex", Scope: "memory/admin"},
			Params: map[string]string{"userId": "u-123", "key": "language"}, Status: 204,
			Stored: httpapitest.UserFacts{ana: {"language": "Portuguese", "city": "Lisbon"}, otherAna: {}}},
		{Name: "user scope on the admin route", Route: "DELETE /v1/users/{userId}/facts/{key}", Token: user,
			Params: map[string]string{"userId": "u-456", "key": "language"}, Status: 403, Stored: untouched},
		{Name: "admin scope on a /me route", Route: "DELETE /v1/me/facts/{key}", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"key": "language"}, Status: 403, Stored: untouched},
		{Name: "empty key", Route: "DELETE /v1/me/facts/{key}", Token: user, Params: map[string]string{"key": "--"},
			Status: 400, Stored: untouched},
		{Name: "no token", Route: "DELETE /v1/me/facts/{key}", Params: map[string]string{"key": "language"},
			Status: 401, Stored: untouched},
	})
}

func TestOnDynamoDB(t *testing.T) {
	// The second time the key is absent: 204 again.
	fixture.RunSequence(t, fixture.MotoRepo(t),
		httpapitest.Case{Name: "present", Event: "deletefact-me.json", Status: 204},
		httpapitest.Case{Name: "absent", Event: "deletefact-me.json", Status: 204, Stored: httpapitest.UserFacts{
			httpapitest.Ana: {"city": "Lisbon"}, httpapitest.Bob: {"language": "German"}}})
}
