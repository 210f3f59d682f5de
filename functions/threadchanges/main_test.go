package main

import (
	"context"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// seedThreads stores, besides the standard users (whose facts are set by
// hand), what two conversations taught Ana: th-9 moved her home from
// Lisbon to Porto and added her pet, th-8 her role.
func seedThreads(t testing.TB, repo memory.Repository) {
	t.Helper()
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-9", "I moved to Porto and I have a cat.",
		memory.Operation{Op: memory.OpSet, Key: "city", Value: "Porto", Evidence: "I moved to Porto"},
		memory.Operation{Op: memory.OpSet, Key: "pet", Value: "cat", Evidence: "I have a cat"})
	httpapitest.SeedExtracted(t, repo, httpapitest.Ana, "th-8", "I work as a nurse.",
		memory.Operation{Op: memory.OpSet, Key: "role", Value: "nurse", Evidence: "I work as a nurse"})
	// Carol's city, set by th-7 in place of a value that is no longer
	// kept (her record was full).
	faro := memory.Fact{Key: "city", Value: "Faro", UpdatedAt: httpapitest.Now, Origin: memory.OriginConversation,
		SourceThreadID: "th-7", Replaced: true}
	if _, _, err := repo.Save(context.Background(), carol, memory.Record{Facts: []memory.Fact{faro}, Tombstones: map[string]time.Time{}}); err != nil {
		t.Fatal(err)
	}
}

// carol is a user of Ana's tenant whose city's earlier value is unknown,
// and carolToken her user token.
var (
	carol      = memory.Scope{TenantID: httpapitest.Ana.TenantID, UserID: "carol"}
	carolToken = &httpapitest.Token{Sub: carol.UserID, Tenant: carol.TenantID, Scope: "memory/user"}
	carols     = map[string]string{"city": "Faro"}
)

// Ana's facts: as the conversations left them, with th-9's city undone
// (Lisbon again), and with th-9's pet undone (removed).
var (
	anas         = map[string]string{"language": "Portuguese", "city": "Porto", "pet": "cat", "role": "nurse"}
	anasCityBack = map[string]string{"language": "Portuguese", "city": "Lisbon", "pet": "cat", "role": "nurse"}
	anasNoPet    = map[string]string{"language": "Portuguese", "city": "Porto", "role": "nurse"}
)

// The answers: th-9's two changes, the one left after its city was
// undone, none, and the two undos.
const (
	th9Changes = `{"threadId":"th-9","changes":[` +
		`{"key":"city","value":"Porto","previous":"Lisbon","at":"2026-11-29T22:00:00Z"},` +
		`{"key":"pet","value":"cat","at":"2026-11-29T22:00:00Z"}]}`
	th9PetOnly  = `{"threadId":"th-9","changes":[{"key":"pet","value":"cat","at":"2026-11-29T22:00:00Z"}]}`
	th9None     = `{"threadId":"th-9","changes":[]}`
	cityUndone  = `{"threadId":"th-9","key":"city","restored":"Lisbon","removed":false}`
	petUndone   = `{"threadId":"th-9","key":"pet","removed":true}`
	cityNothing = `{"threadId":"th-9","key":"city","removed":false}`
)

// bob is Bob's user token.
var bob = &httpapitest.Token{Sub: httpapitest.Bob.UserID, Tenant: httpapitest.Bob.TenantID, Scope: "memory/user"}

// fixture is this function over the standard users and Ana's two
// conversations: the changes a thread made, since a time or all of them,
// and the undo of one, for the token's own user (or the admin's target in
// the admin's tenant); another user sees and undoes nothing of Ana's; a
// refused request reads and writes nothing.
var fixture = httpapitest.Fixture{NewHandler: newHandler, Function: "ThreadChangesFunction", Events: "threadchanges-", Seed: seedThreads,
	Cases: []httpapitest.Case{
		{Event: "threadchanges-me.json", Status: 200, Answer: th9Changes, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Event: "threadchanges-admin.json", Status: 200, Answer: th9Changes, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Event: "threadchanges-bad-since.json", Status: 400, Code: httpapi.CodeInvalidSince, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Event: "threadchanges-undo-me.json", Status: 200, Answer: cityUndone, Stored: httpapitest.UserFacts{httpapitest.Ana: anasCityBack}},
		{Event: "threadchanges-undo-admin.json", Status: 200, Answer: petUndone, Stored: httpapitest.UserFacts{httpapitest.Ana: anasNoPet}},
		{Name: "another user sees no change of Ana's", Route: routeMe, Token: bob,
			Params: map[string]string{"threadId": "th-9"}, Status: 200, Answer: th9None, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "another user undoes nothing of Ana's", Route: routeUndoMe, Token: bob,
			Params: map[string]string{"threadId": "th-9", "key": "city"}, Status: 200, Answer: cityNothing,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas, httpapitest.Bob: {"language": "German"}}},
		{Name: "undo of a key the thread did not set", Route: routeUndoMe, Token: httpapitest.UserToken(),
			Params: map[string]string{"threadId": "th-8", "key": "city"}, Status: 200,
			Answer: `{"threadId":"th-8","key":"city","removed":false}`, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "admin of another tenant sees that tenant only", Route: routeAdmin, Token: httpapitest.AdminToken("globex"),
			Params: map[string]string{"userId": httpapitest.Ana.UserID, "threadId": "th-9"}, Status: 200, Answer: th9None,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "a thread ID a path may not hold", Route: routeMe, Token: httpapitest.UserToken(),
			Params: map[string]string{"threadId": "th 9"}, Status: 400, Code: memory.CodeInvalidID, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "undo: a thread ID a path may not hold", Route: routeUndoMe, Token: httpapitest.UserToken(),
			Params: map[string]string{"threadId": "th 9", "key": "city"}, Status: 400, Code: memory.CodeInvalidID,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "undo: a key with a character a key may not hold", Route: routeUndoMe, Token: httpapitest.UserToken(),
			Params: map[string]string{"threadId": "th-9", "key": "Bad Key!"}, Status: 400, Code: memory.CodeInvalidKeyChars,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "user scope on the admin route", Route: routeAdmin, Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-123", "threadId": "th-9"}, Status: 403, Code: httpapi.CodeForbidden,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "admin scope on the /me undo route", Route: routeUndoMe, Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"threadId": "th-9", "key": "city"}, Status: 403, Code: httpapi.CodeForbidden,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "no token", Route: routeMe, Params: map[string]string{"threadId": "th-9"}, Status: 401,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "no token on undo", Route: routeUndoMe, Params: map[string]string{"threadId": "th-9", "key": "city"}, Status: 401,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Name: "a change whose earlier value is unknown", Route: routeMe, Token: carolToken,
			Params: map[string]string{"threadId": "th-7"}, Status: 200,
			Answer: `{"threadId":"th-7","changes":[{"key":"city","value":"Faro","previousUnknown":true,"at":"2026-11-29T22:00:00Z"}]}`,
			Stored: httpapitest.UserFacts{carol: carols}},
		{Name: "undo of a change whose earlier value is unknown: 409, nothing changes", Route: routeUndoMe, Token: carolToken,
			Params: map[string]string{"threadId": "th-7", "key": "city"}, Status: 409, Code: memory.CodeEarlierValueUnknown,
			Stored: httpapitest.UserFacts{carol: carols}},
		{Name: "route this function does not serve", Route: "DELETE /v1/me/facts", Token: httpapitest.UserToken(), Status: 404},
	},
	// On DynamoDB, in order: the changes, the undo of the city, the
	// changes again (the city is Ana's own now), the same undo again
	// (nothing left to undo).
	OnDynamoDB: []httpapitest.Case{
		{Event: "threadchanges-me.json", Status: 200, Answer: th9Changes, Stored: httpapitest.UserFacts{httpapitest.Ana: anas}},
		{Event: "threadchanges-undo-me.json", Status: 200, Answer: cityUndone, Stored: httpapitest.UserFacts{httpapitest.Ana: anasCityBack}},
		{Name: "after the undo", Event: "threadchanges-admin.json", Status: 200, Answer: th9PetOnly,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anasCityBack}},
		{Name: "undo again", Event: "threadchanges-undo-me.json", Status: 200, Answer: cityNothing,
			Stored: httpapitest.UserFacts{httpapitest.Ana: anasCityBack}},
	},
}

func TestFunction(t *testing.T) { fixture.Run(t) }
