package main

import (
	"testing"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// fixture is this function with the standard users seeded, and its
// table: a token reads only its own user's facts in its own tenant,
// whatever the path says, and an admin reads in the token's tenant only.
var fixture = httpapitest.Fixture{NewHandler: newHandler, Function: "GetFactsFunction", Events: "getfacts-",
	Cases: []httpapitest.Case{
		{Event: "getfacts-me.json", Status: 200, Listed: anas},
		{Event: "getfacts-admin.json", Status: 200, Listed: anas},
		{Event: "getfacts-scp-array-claim.json", Status: 200, Listed: anas},
		{Event: "getfacts-no-tenant-claim.json", Status: 401, Code: httpapi.CodeUnauthenticated},
		{Event: "getfacts-tenant-array-claim.json", Status: 401, Code: httpapi.CodeUnauthenticated},
		{Event: "getfacts-user-scope-on-admin-route.json", Status: 403, Code: httpapi.CodeForbidden},
		{Event: "getfacts-admin-invalid-user-id.json", Status: 400, Code: memory.CodeInvalidID},
		{Name: "own facts", Route: "GET /v1/me/facts", Token: httpapitest.UserToken(), Status: 200, Listed: anas},
		{Name: "a userId in the path of a /me route is ignored", Route: "GET /v1/me/facts", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-456", "tenantId": "globex"}, Status: 200, Listed: anas},
		{Name: "same user ID, other tenant", Route: "GET /v1/me/facts",
			Token:  &httpapitest.Token{Sub: "u-123", Tenant: "globex", Scope: "memory/user"},
			Status: 200, Listed: map[string]string{"language": "Finnish"}},
		{Name: "user without facts", Route: "GET /v1/me/facts",
			Token:  &httpapitest.Token{Sub: "u-789", Tenant: "acme", Scope: "memory/user"},
			Status: 200, Listed: map[string]string{}},
		{Name: "admin reads a user of the token's tenant", Route: "GET /v1/users/{userId}/facts", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"userId": "u-456"}, Status: 200, Listed: map[string]string{"language": "German"}},
		{Name: "admin of another tenant reads that tenant only", Route: "GET /v1/users/{userId}/facts", Token: httpapitest.AdminToken("globex"),
			Params: map[string]string{"userId": "u-123"}, Status: 200, Listed: map[string]string{"language": "Finnish"}},
		{Name: "user scope on the admin route", Route: "GET /v1/users/{userId}/facts", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-456"}, Status: 403},
		{Name: "admin scope only on a /me route", Route: "GET /v1/me/facts", Token: httpapitest.AdminToken("acme"), Status: 403},
		{Name: "no token", Route: "GET /v1/me/facts", Status: 401},
		{Name: "no sub", Route: "GET /v1/me/facts", Token: &httpapitest.Token{Tenant: "acme", Scope: "memory/user"}, Status: 401},
		{Name: "sub that is not an ID", Route: "GET /v1/me/facts",
			Token: &httpapitest.Token{Sub: "acme#u-456", Tenant: "acme", Scope: "memory/user"}, Status: 401},
		{Name: "scope in a JSON array scp", Route: "GET /v1/me/facts",
			Token:  &httpapitest.Token{Sub: "u-123", Tenant: "acme", Claims: map[string]string{"scp": `["memory/user"]`}},
			Status: 200, Listed: anas},
		{Name: "a scope that only starts like the right one", Route: "GET /v1/me/facts",
			Token: &httpapitest.Token{Sub: "u-123", Tenant: "acme", Scope: "memory/users"}, Status: 403},
		{Name: "route this function does not serve", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "city"}, Status: 404},
	},
}

// anas are the facts of httpapitest.Ana that the fixture seeds.
var anas = map[string]string{"language": "Portuguese", "city": "Lisbon"}

func TestFunction(t *testing.T) { fixture.Run(t) }

func TestBody(t *testing.T) {
	repo := memorytest.NewRepo()
	httpapitest.Seed(t, repo, httpapitest.Ana, "language", "Portuguese")
	resp := httpapitest.Invoke(t, fixture.Handler(t, repo), httpapitest.ReadEvent(t, "getfacts-me.json"))
	want := `{"facts":[{"key":"language","value":"Portuguese","updatedAt":"2026-11-29T22:00:00Z","origin":"manual"}],"pending":[],"limits":{"maxFacts":30,"maxFactChars":200}}`
	if resp.Body != want || resp.Headers["content-type"] != "application/json" {
		t.Errorf("got %s (%s), want %s", resp.Body, resp.Headers["content-type"], want)
	}
	empty := httpapitest.Invoke(t, fixture.Handler(t, memorytest.NewRepo()), httpapitest.ReadEvent(t, "getfacts-me.json"))
	if want := `{"facts":[],"pending":[],"limits":{"maxFacts":30,"maxFactChars":200}}`; empty.Body != want {
		t.Errorf("got %s, want %s", empty.Body, want)
	}
}

func TestRepositoryFailureSaysNothingOfItsCause(t *testing.T) {
	repo := memorytest.NewRepo()
	repo.Fail = memorytest.ErrInjected
	resp := httpapitest.Exchange(t, httpapitest.LoadSpec(t), fixture.Handler(t, repo), httpapitest.ReadEvent(t, "getfacts-me.json"))
	want := `{"type":"urn:usermemory:error:5380000000108","title":"Internal Server Error","status":500,"detail":"internal error","code":5380000000108}`
	if resp.StatusCode != 500 || resp.Body != want {
		t.Errorf("got %d %s, want 500 %s", resp.StatusCode, resp.Body, want)
	}
}

func TestOnDynamoDB(t *testing.T) {
	repo := httpapitest.MotoRepo(t)
	httpapitest.Seed(t, repo, httpapitest.Ana, "language", "Portuguese", "Home City", "Lisbon")
	httpapitest.Seed(t, repo, httpapitest.Bob, "language", "German")
	fixture.RunSequence(t, repo, httpapitest.Case{Event: "getfacts-me.json", Status: 200,
		Listed: map[string]string{"language": "Portuguese", "home_city": "Lisbon"}})
}

// glassBoxSaid is what Ana said in the thread th-9, and glassBoxOps what
// the model answered: a lasting fact, a temporary one, one of a special
// category, each quoting her.
const glassBoxSaid = "I moved to Porto last month, I'm in Paris until Dec 5, and I have diabetes."

var glassBoxOps = []memory.Operation{
	{Op: memory.OpSet, Key: "home_city", Value: "Porto", Evidence: "I moved to Porto"},
	{Op: memory.OpSet, Key: "current_location", Value: "Paris", Evidence: "I'm in Paris until Dec 5", ValidUntil: "2026-12-05"},
	{Op: memory.OpSet, Key: "health_condition", Value: "diabetes", Evidence: "i have diabetes", Category: memory.CategoryHealth},
}

// TestGlassBoxMembers checks the answer's new members: the evidence, when it was said and
// end date of each fact, and the pending fact with its category and the
// time it is dropped, apart from the facts.
func TestGlassBoxMembers(t *testing.T) {
	repo := memorytest.NewRepo()
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-9", glassBoxSaid, glassBoxOps...)
	resp := httpapitest.Invoke(t, fixture.Handler(t, repo), httpapitest.ReadEvent(t, "getfacts-me.json"))
	httpapitest.LoadSpec(t).CheckResponse(t, "GET /v1/me/facts", resp)
	want := `{"facts":[` +
		`{"key":"current_location","value":"Paris","updatedAt":"2026-11-29T22:00:00Z","origin":"conversation","sourceThreadId":"th-9","evidence":"I'm in Paris until Dec 5","validUntil":"2026-12-05","saidAt":"2026-11-29T22:00:00Z"},` +
		`{"key":"home_city","value":"Porto","updatedAt":"2026-11-29T22:00:00Z","origin":"conversation","sourceThreadId":"th-9","evidence":"I moved to Porto","saidAt":"2026-11-29T22:00:00Z"}],` +
		`"pending":[{"key":"health_condition","value":"diabetes","updatedAt":"2026-11-29T22:00:00Z","origin":"conversation","sourceThreadId":"th-9","evidence":"i have diabetes","category":"health","saidAt":"2026-11-29T22:00:00Z","pendingUntil":"2026-12-06T22:00:00Z"}],` +
		`"limits":{"maxFacts":30,"maxFactChars":200}}`
	if resp.Body != want {
		t.Errorf("got  %s\nwant %s", resp.Body, want)
	}
}

// TestHistoryMember: a fact a later conversation changed comes with its
// previous value and the change that replaced it, in the form
// api/openapi.yaml gives.
func TestHistoryMember(t *testing.T) {
	repo := memorytest.NewRepo()
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-1", "I live in Lisbon",
		memory.Operation{Op: memory.OpSet, Key: "home_city", Value: "Lisbon", Evidence: "I live in Lisbon"})
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-2", "I moved to Porto",
		memory.Operation{Op: memory.OpSet, Key: "home_city", Value: "Porto", Evidence: "I moved to Porto"})
	resp := httpapitest.Invoke(t, fixture.Handler(t, repo), httpapitest.ReadEvent(t, "getfacts-me.json"))
	httpapitest.LoadSpec(t).CheckResponse(t, "GET /v1/me/facts", resp)
	want := `{"facts":[` +
		`{"key":"home_city","value":"Porto","updatedAt":"2026-11-29T22:00:00Z","origin":"conversation","sourceThreadId":"th-2","evidence":"I moved to Porto","saidAt":"2026-11-29T22:00:00Z",` +
		`"history":[{"value":"Lisbon","replacedAt":"2026-11-29T22:00:00Z","origin":"conversation","threadId":"th-2","evidence":"I moved to Porto","valueThreadId":"th-1"}]}],` +
		`"pending":[],"limits":{"maxFacts":30,"maxFactChars":200}}`
	if resp.Body != want {
		t.Errorf("got  %s\nwant %s", resp.Body, want)
	}
}
