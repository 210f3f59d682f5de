package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// retention is the stack's windows in these tests: 14 days of backups,
// 4 days in the queue, 7 in the dead-letter queue.
var retention = memory.Retention{Backups: 14 * 24 * time.Hour, Queue: 4 * 24 * time.Hour, DeadLetterQueue: 7 * 24 * time.Hour}

// erased is the answer to an erasure of n facts at httpapitest.Now under
// retention: backups until 14 days later, messages until 11.
func erased(n int) string {
	return fmt.Sprintf(`{"removedFacts":%d,"erasedAt":"2026-11-29T22:00:00Z","backupsUntil":"2026-12-13T22:00:00Z","queuedMessagesUntil":"2026-12-10T22:00:00Z"}`, n)
}

// fixture is this function with the standard users seeded, and its
// table: an admin erases the user of the path in the token's tenant only,
// and a refused erasure erases nothing; it does not even call the
// repository.
var fixture = httpapitest.Fixture{NewHandler: newHandler(retention), Function: "EraseUserFunction", Events: "eraseuser-",
	Cases: []httpapitest.Case{
		{Event: "eraseuser-admin.json", Status: 200, Answer: erased(2)},
		{Event: "eraseuser-user-scope.json", Status: 403, Code: httpapi.CodeForbidden},
		{Name: "admin of globex erases u-123", Route: "DELETE /v1/users/{userId}", Token: httpapitest.AdminToken("globex"),
			Params: map[string]string{"userId": "u-123"}, Status: 200, Answer: erased(1),
			Stored: httpapitest.UserFacts{httpapitest.Ana: {"language": "Portuguese", "city": "Lisbon"},
				httpapitest.Bob: {"language": "German"}, httpapitest.OtherAna: {}}},
		{Name: "user scope", Route: "DELETE /v1/users/{userId}", Token: httpapitest.UserToken(),
			Params: map[string]string{"userId": "u-123"}, Status: 403},
		{Name: "user erasing themselves with both scopes in another tenant's name", Route: "DELETE /v1/users/{userId}",
			Token: &httpapitest.Token{Sub: "u-123", Tenant: "globex", Scope: "memory/user"}, Params: map[string]string{"userId": "u-123"}, Status: 403},
		{Name: "no tenant claim", Route: "DELETE /v1/users/{userId}", Token: &httpapitest.Token{Sub: "admin-7", Scope: "memory/admin"},
			Params: map[string]string{"userId": "u-123"}, Status: 401},
		{Name: "invalid user ID", Route: "DELETE /v1/users/{userId}", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"userId": "u-123/../u-456"}, Status: 400},
		{Name: "empty user ID", Route: "DELETE /v1/users/{userId}", Token: httpapitest.AdminToken("acme"),
			Params: map[string]string{"userId": ""}, Status: 400},
	},
	OnDynamoDB: []httpapitest.Case{{Event: "eraseuser-admin.json", Status: 200, Answer: erased(2),
		Stored: httpapitest.UserFacts{httpapitest.Ana: {}, httpapitest.OtherAna: {"language": "Finnish"}}}},
}

func TestFunction(t *testing.T) { fixture.Run(t) }

// TestErasure shows that an admin's erasure removes Ana's facts and leaves
// a fence, touches neither Bob nor Ana's namesake in another tenant, and
// that erasing again removes nothing more and keeps the fence.
func TestErasure(t *testing.T) {
	repo := fixture.Repo(t)
	h := fixture.Handler(t, repo)
	for _, c := range []httpapitest.Case{
		{Name: "first", Event: "eraseuser-admin.json", Status: 200, Answer: erased(2),
			Stored: httpapitest.UserFacts{httpapitest.Bob: {"language": "German"}, httpapitest.OtherAna: {"language": "Finnish"}}},
		{Name: "again", Event: "eraseuser-admin.json", Status: 200, Answer: erased(0)},
	} {
		httpapitest.Send(t, h, repo, c)
		rec, ok := repo.Record(httpapitest.Ana)
		if !ok || len(rec.Facts) != 0 || !rec.ErasedAt.Equal(httpapitest.Now) {
			t.Errorf("%s: ana's record after erasure: %+v, want a fence at %v", c.Name, rec, httpapitest.Now)
		}
	}
}
