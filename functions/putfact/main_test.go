package main

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// fixture is this function on repositories left empty: every fact a test
// finds was written by the function. Its table shows that a token writes
// only its own user's facts in its own tenant, whatever the path or the
// body say, and that refused requests write nothing.
var fixture = httpapitest.Fixture{NewHandler: newHandler, Empty: true, Function: "PutFactFunction", Events: "putfact-",
	Cases: []httpapitest.Case{
		{Event: "putfact-me.json", Status: 200},
		{Event: "putfact-encoded-key.json", Status: 200},
		{Event: "putfact-admin.json", Status: 200},
		{Event: "putfact-base64.json", Status: 200},
		{Event: "putfact-too-long.json", Status: 400, Code: memory.CodeFactTooLong},
		{Event: "putfact-empty-value.json", Status: 400, Code: memory.CodeEmptyFact},
		{Event: "putfact-unknown-field.json", Status: 400, Code: httpapi.CodeUnknownField},
		{Event: "putfact-tenant-in-body.json", Status: 400, Code: httpapi.CodeIdentityInBody},
		{Event: "putfact-user-in-body.json", Status: 400, Code: httpapi.CodeIdentityInBody},
		{Event: "putfact-malformed-json.json", Status: 400, Code: httpapi.CodeMalformedBody},
		{Event: "putfact-wrong-content-type.json", Status: 415, Code: httpapi.CodeUnsupportedMediaType},
		{Event: "putfact-too-large.json", Status: 413, Code: httpapi.CodeBodyTooLarge},
		{Name: "own fact", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city, Body: `{"value":"Porto"}`, Status: 200,
			Stored: httpapitest.UserFacts{ana: {"city": "Porto"}, bob: {}, otherAna: {}}},
		{Name: "a userId in the path of a /me route is ignored", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "city", "userId": "u-456"}, Body: `{"value":"Porto"}`, Status: 200,
			Stored: httpapitest.UserFacts{ana: {"city": "Porto"}, bob: {}, otherAna: {}}},
		{Name: "same user ID, other tenant", Route: "PUT /v1/me/facts/{key}",
			Token:  &httpapitest.Token{Sub: "u-123", Tenant: "globex", Scope: "memory/user"},
			Params: city, Body: `{"value":"Porto"}`, Status: 200,
			Stored: httpapitest.UserFacts{ana: {}, bob: {}, otherAna: {"city": "Porto"}}},
		{Name: "tenant in the body", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Porto","tenantId":"globex"}`, Status: 400, Stored: nothing},
		{Name: "user in the body, other case", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Porto","UserId":"u-456"}`, Status: 400, Stored: nothing},
		{Name: "member named Value is unknown", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"Value":"Porto"}`, Status: 400, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "value not a string", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":42}`, Status: 400, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "two objects", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"a"}{"value":"b"}`, Status: 400, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "an array", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `["value"]`, Status: 400, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "a remember call the user approved, forwarded by a gateway", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Porto","origin":"remember_tool"}`, Status: 200,
			Answer: `{"fact":{"key":"city","value":"Porto","updatedAt":"2026-11-29T22:00:00Z","origin":"remember_tool"}}`,
			Stored: httpapitest.UserFacts{ana: {"city": "Porto"}}},
		{Name: "origin manual named", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Porto","origin":"manual"}`, Status: 200,
			Answer: `{"fact":{"key":"city","value":"Porto","updatedAt":"2026-11-29T22:00:00Z","origin":"manual"}}`},
		{Name: "origin conversation is the extractor's", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Porto","origin":"conversation"}`, Status: 400, Code: memory.CodeInvalidOrigin, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "origin not a string", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Porto","origin":1}`, Status: 400, Code: httpapi.CodeMalformedBody, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "key a canonical form would rewrite", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "Bad Key!"}, Body: `{"value":"Porto"}`, Status: 400, Code: memory.CodeInvalidKeyChars,
			Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "key with separators only changes case and separators", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "Home-City.Now"}, Body: `{"value":"Porto"}`, Status: 200,
			Stored: httpapitest.UserFacts{ana: {"home_city_now": "Porto"}}},
		{Name: "empty key", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: map[string]string{"key": " - "},
			Body: `{"value":"Porto"}`, Status: 400, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "admin writes a user of the token's tenant", Route: "PUT /v1/users/{userId}/facts/{key}", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"userId": "u-456", "key": "role"}, Body: `{"value":"pilot"}`, Status: 200,
			Stored: httpapitest.UserFacts{ana: {}, bob: {"role": "pilot"}, otherAna: {}}},
		{Name: "user scope on the admin route", Route: "PUT /v1/users/{userId}/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-456", "key": "role"}, Body: `{"value":"pilot"}`, Status: 403,
			Stored: httpapitest.UserFacts{bob: {}}},
		{Name: "admin path user ID with a separator", Route: "PUT /v1/users/{userId}/facts/{key}", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"userId": "u-456#x", "key": "role"}, Body: `{"value":"pilot"}`, Status: 400,
			Stored: httpapitest.UserFacts{bob: {}}},
		{Name: "no tenant claim", Route: "PUT /v1/me/facts/{key}", Token: &httpapitest.Token{Sub: "u-123", Scope: "memory/user"},
			Params: city, Body: `{"value":"Porto"}`, Status: 401, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "tenant claim named by the config only", Route: "PUT /v1/me/facts/{key}",
			Token:  &httpapitest.Token{Sub: "u-123", Tenant: "acme", TenantClaim: "custom:tenant", Scope: "memory/user"},
			Params: city, Body: `{"value":"Porto"}`, Status: 401, Stored: httpapitest.UserFacts{ana: {}}},
		{Name: "a temporary fact", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"2026-12-05"}`, Status: 200,
			Answer: `{"fact":{"key":"city","value":"Paris","updatedAt":"2026-11-29T22:00:00Z","origin":"manual","validUntil":"2026-12-05"}}`,
			Stored: httpapitest.UserFacts{ana: {"city": "Paris"}}},
		{Name: "validUntil today is its last day", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"2026-11-29"}`, Status: 200, Stored: httpapitest.UserFacts{ana: {"city": "Paris"}}},
		{Name: "validUntil null", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":null}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil in the past", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"2026-11-28"}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil over a year ahead", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"2027-12-01"}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil not a date", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"Friday"}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil not a string", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":20261205}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil with a time", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"2026-12-05T23:25:53Z"}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil with one-digit day", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"2026-12-5"}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil a day the month lacks", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"2027-02-30"}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil without hyphens", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":"20261205"}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "validUntil empty", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(), Params: city,
			Body: `{"value":"Paris","validUntil":""}`, Status: 400, Code: memory.CodeInvalidValidUntil, Stored: nothing},
		{Name: "a card number is never stored", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "card"}, Body: `{"value":"4111 1111 1111 1111"}`, Status: 400,
			Code: memory.CodeSecretRefused, Stored: nothing},
		{Name: "a password is never stored", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "wifi_password"}, Body: `{"value":"hunter2-Blue"}`, Status: 400,
			Code: memory.CodeSecretRefused, Stored: nothing},
		{Name: "a social security number is never stored", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "ssn"}, Body: `{"value":"123-45-6789"}`, Status: 400,
			Code: memory.CodeSecretRefused, Stored: nothing},
		{Name: "a number of an SSN's shape under another name is a fact", Route: "PUT /v1/me/facts/{key}", Token: httpapitest.UserToken(),
			Params: map[string]string{"key": "order_number"}, Body: `{"value":"123-45-6789"}`, Status: 200,
			Stored: httpapitest.UserFacts{ana: {"order_number": "123-45-6789"}}},
	},
	OnDynamoDB: []httpapitest.Case{
		{Event: "putfact-me.json", Status: 200},
		{Event: "putfact-encoded-key.json", Status: 200},
		{Event: "putfact-admin.json", Status: 200},
		{Event: "putfact-tenant-in-body.json", Status: 400, Stored: httpapitest.UserFacts{
			ana: {"language": "Portuguese", "home_city": "Lisbon", "role": "data engineer"}}},
	},
}

// The users of the table, the path parameters of most of its cases, and
// what a refused write leaves stored.
var (
	ana, bob, otherAna = httpapitest.Ana, httpapitest.Bob, httpapitest.OtherAna
	city               = map[string]string{"key": "city"}
	nothing            = httpapitest.UserFacts{ana: {}, bob: {}, otherAna: {}}
)

func TestFunction(t *testing.T) { fixture.Run(t) }

func TestResponse(t *testing.T) {
	repo := memorytest.NewRepo()
	resp := httpapitest.Invoke(t, fixture.Handler(t, repo), httpapitest.ReadEvent(t, "putfact-encoded-key.json"))
	want := `{"fact":{"key":"home_city","value":"Lisbon","updatedAt":"2026-11-29T22:00:00Z","origin":"manual"}}`
	if resp.StatusCode != 200 || resp.Body != want {
		t.Errorf("got %d %s, want 200 %s", resp.StatusCode, resp.Body, want)
	}
	if diff := cmp.Diff(map[string]string{"home_city": "Lisbon"}, httpapitest.Facts(t, repo, httpapitest.Ana)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

func TestTooLongSaysHowLong(t *testing.T) {
	resp := httpapitest.Invoke(t, fixture.Handler(t, memorytest.NewRepo()), httpapitest.ReadEvent(t, "putfact-too-long.json"))
	var p httpapi.Problem
	if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
		t.Fatal(err)
	}
	if p.UserMessage == "" || !strings.Contains(p.UserMessage, "200") {
		t.Errorf("userMessage %q, want one that names the limit", p.UserMessage)
	}
}

func TestBase64BodyLimits(t *testing.T) {
	ev := httpapitest.NewEvent("PUT /v1/me/facts/{key}", httpapitest.UserToken(), map[string]string{"key": "city"}, "")
	ev.Headers["content-type"] = "application/json; charset=utf-8"
	ev.IsBase64Encoded = true
	ev.Body = "!!not base64"
	resp := httpapitest.Invoke(t, fixture.Handler(t, memorytest.NewRepo()), httpapitest.Marshal(t, ev))
	if resp.StatusCode != 400 || httpapitest.ProblemCode(resp) != httpapi.CodeMalformedBody {
		t.Errorf("broken base64: got %d %s", resp.StatusCode, resp.Body)
	}
	ev.Body = base64.StdEncoding.EncodeToString([]byte(`{"value":"` + strings.Repeat("x", httpapi.DefaultMaxBodyBytes) + `"}`))
	resp = httpapitest.Invoke(t, fixture.Handler(t, memorytest.NewRepo()), httpapitest.Marshal(t, ev))
	if resp.StatusCode != 413 {
		t.Errorf("large base64: got %d %s", resp.StatusCode, resp.Body)
	}
	ev.Headers["content-type"] = "application/json; charset=latin1"
	ev.Body = base64.StdEncoding.EncodeToString([]byte(`{"value":"Porto"}`))
	resp = httpapitest.Invoke(t, fixture.Handler(t, memorytest.NewRepo()), httpapitest.Marshal(t, ev))
	if resp.StatusCode != 415 {
		t.Errorf("latin1: got %d %s", resp.StatusCode, resp.Body)
	}
}

func TestConflictIs409WithUserMessage(t *testing.T) {
	repo := memorytest.NewRepo()
	httpapitest.Seed(t, repo, httpapitest.Ana, "language", "Portuguese")
	// Fill to the cap so that the write goes through Save, then make every
	// Save lose to a concurrent writer.
	for i := range memory.DefaultMaxFacts {
		httpapitest.Seed(t, repo, httpapitest.Ana, "k"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v")
	}
	repo.BeforeSave = func() {
		rec, _ := repo.Record(httpapitest.Ana)
		repo.Put(httpapitest.Ana, rec)
	}
	resp := httpapitest.Exchange(t, httpapitest.LoadSpec(t), fixture.Handler(t, repo), httpapitest.ReadEvent(t, "putfact-encoded-key.json"))
	if resp.StatusCode != 409 || httpapitest.ProblemCode(resp) != memory.CodeConflict {
		t.Errorf("got %d %s, want 409 code %d", resp.StatusCode, resp.Body, memory.CodeConflict)
	}
}
