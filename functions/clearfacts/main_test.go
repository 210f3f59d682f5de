package main

import (
	"net/http"
	"testing"

	"github.com/usermemory/usermemory/functions/httpapi/httpapitest"
)

// fixture is this function with the standard users seeded.
var fixture = httpapitest.Fixture{NewHandler: newHandler}

func TestEvents(t *testing.T) {
	fixture.RunEvents(t, "clearfacts-", map[string]httpapitest.Want{
		"clearfacts-me.json":    {Status: http.StatusNoContent},
		"clearfacts-admin.json": {Status: http.StatusNoContent},
	})
}

func TestRoutesMatchTemplateAndDocument(t *testing.T) {
	httpapitest.CheckRoutes(t, "ClearFactsFunction", routes)
}

// TestScope shows that a token clears only its own user's facts in its
// own tenant, whatever the path says, and that refused requests clear
// nothing.
func TestScope(t *testing.T) {
	ana, bob, otherAna := httpapitest.Ana, httpapitest.Bob, httpapitest.OtherAna
	user, admin := httpapitest.UserToken(), httpapitest.AdminToken("acme")
	untouched := httpapitest.SeededFacts()
	fixture.RunCases(t, []httpapitest.Case{
		{Name: "own facts", Route: "DELETE /v1/me/facts", Token: user, Status: 204,
			Stored: httpapitest.UserFacts{ana: {}, bob: {"language": "German"}, otherAna: {"language": "Finnish"}}},
		{Name: "a userId in the path of a /me route is ignored", Route: "DELETE /v1/me/facts", Token: user,
			Params: map[string]string{"userId": "u-456"}, Status: 204,
			Stored: httpapitest.UserFacts{ana: {}, bob: {"language": "German"}, otherAna: {"language": "Finnish"}}},
		{Name: "admin clears in the token's tenant", Route: "DELETE /v1/users/{userId}/facts", Token: admin,
			Params: map[string]string{"userId": "u-456"}, Status: 204,
			Stored: httpapitest.UserFacts{ana: {"language": "Portuguese", "city": "Lisbon"}, bob: {}, otherAna: {"language": "Finnish"}}},
		{Name: "same user ID, other tenant", Route: "DELETE /v1/me/facts",
			Token: &httpapitest.Token{Sub: "u-123", Tenant: "globex", Scope: "memory/user"}, Status: 204,
			Stored: httpapitest.UserFacts{ana: {"language": "Portuguese", "city": "Lisbon"}, bob: {"language": "German"}, otherAna: {}}},
		{Name: "admin of another tenant clears in that tenant only", Route: "DELETE /v1/users/{userId}/facts",
			Token: httpapitest.AdminToken("globex"), Params: map[string]string{"userId": "u-123"}, Status: 204,
			Stored: httpapitest.UserFacts{ana: {"language": "Portuguese", "city": "Lisbon"}, bob: {"language": "German"}, otherAna: {}}},
		{Name: "user scope on the admin route", Route: "DELETE /v1/users/{userId}/facts", Token: user,
			Params: map[string]string{"userId": "u-456"}, Status: 403, Stored: untouched},
		{Name: "admin scope on a /me route", Route: "DELETE /v1/me/facts", Token: admin, Status: 403, Stored: untouched},
		{Name: "tenant claim as an array", Route: "DELETE /v1/me/facts",
			Token:  &httpapitest.Token{Sub: "u-123", Tenant: "[acme globex]", Scope: "memory/user"},
			Status: 401, Stored: untouched},
	})
}

func TestOnDynamoDB(t *testing.T) {
	fixture.RunSequence(t, fixture.MotoRepo(t), httpapitest.Case{Event: "clearfacts-me.json", Status: 204,
		Stored: httpapitest.UserFacts{httpapitest.Ana: {}, httpapitest.Bob: {"language": "German"}}})
}
