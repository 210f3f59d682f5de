package blackbox

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/factapi"
)

// exportDoc is the export document as a client reads it.
type exportDoc struct {
	Format     int            `json:"format"`
	ExportedAt string         `json:"exportedAt"`
	TenantID   string         `json:"tenantId"`
	UserID     string         `json:"userId"`
	Facts      []factapi.Fact `json:"facts"`
	Forgotten  []struct {
		Key         string `json:"key"`
		ForgottenAt string `json:"forgottenAt"`
	} `json:"forgotten"`
	ErasedAt string `json:"erasedAt"`
	Threads  []struct {
		ThreadKey string `json:"threadKey"`
		TurnCount int    `json:"turnCount"`
	} `json:"threads"`
}

// export reads the export at path, failing tb unless it is a 200 with the
// document.
func (t *target) export(tb testing.TB, path, tok string) exportDoc {
	tb.Helper()
	r := t.api.Call(tb, http.MethodGet, path, tok, nil)
	var d exportDoc
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &d) != nil || d.Format != 1 {
		tb.Fatalf("GET %s = %d %s, want 200 and an export of format 1", path, r.Status, r.Body)
	}
	return d
}

// TestExportHoldsEverything: a user who set two facts and forgot one
// downloads the kept fact, the forgotten key with its time and their own
// IDs; an admin of the tenant downloads the same, an admin of another
// tenant nothing of it, a user token does not reach the admin route.
func TestExportHoldsEverything(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "export")
	tg.api.Put(t, tok, "home_city", "Lisbon")
	tg.api.Put(t, tok, "pet", "a cat")
	if r := tg.api.Call(t, http.MethodDelete, "/v1/me/facts/pet", tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("forget pet = %d %s", r.Status, r.Body)
	}
	mine := tg.export(t, "/v1/me/export", tok)
	if mine.TenantID != tg.tenant || mine.UserID != user || len(mine.Facts) != 1 || mine.Facts[0].Key != "home_city" ||
		mine.Facts[0].Value != "Lisbon" || len(mine.Forgotten) != 1 || mine.Forgotten[0].Key != "pet" {
		t.Errorf("export %+v, want %s/%s with home_city = Lisbon and pet forgotten", mine, tg.tenant, user)
	}
	if _, err := time.Parse(time.RFC3339, mine.Forgotten[0].ForgottenAt); err != nil {
		t.Errorf("forgottenAt %q: %v", mine.Forgotten[0].ForgottenAt, err)
	}
	path := "/v1/users/" + url.PathEscape(user) + "/export"
	if theirs := tg.export(t, path, tg.adminToken(t, tg.tenant, newID("admin"))); len(theirs.Facts) != 1 || theirs.UserID != user {
		t.Errorf("the admin's export %+v, want the user's fact", theirs)
	}
	if other := tg.export(t, path, tg.adminToken(t, tg.otherTenant, newID("admin"))); len(other.Facts)+len(other.Forgotten) != 0 {
		t.Errorf("an admin of another tenant exports %+v, want nothing", other)
	}
	if r := tg.api.Call(t, http.MethodGet, path, tok, nil); r.Status != http.StatusForbidden {
		t.Errorf("a user token on the admin export = %d, want 403", r.Status)
	}
}

// TestErasureSaysWhatRemains: the erasure answers the facts removed, its
// time and the later dates until which backups and queued messages may
// hold the user's data, within the windows AWS allows; the export
// afterwards holds no fact and the erasure's time.
func TestErasureSaysWhatRemains(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "erased")
	tg.api.Put(t, tok, "home_city", "Lisbon")
	r := tg.api.Call(t, http.MethodDelete, "/v1/users/"+url.PathEscape(user), tg.adminToken(t, tg.tenant, newID("admin")), nil)
	var got struct {
		RemovedFacts                                int
		ErasedAt, BackupsUntil, QueuedMessagesUntil string
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &got) != nil || got.RemovedFacts != 1 {
		t.Fatalf("erase = %d %s, want 200 with removedFacts 1", r.Status, r.Body)
	}
	at, err1 := time.Parse(time.RFC3339, got.ErasedAt)
	backups, err2 := time.Parse(time.RFC3339, got.BackupsUntil)
	queued, err3 := time.Parse(time.RFC3339, got.QueuedMessagesUntil)
	day := 24 * time.Hour
	if err1 != nil || err2 != nil || err3 != nil || backups.Sub(at) < day || backups.Sub(at) > 35*day ||
		queued.Sub(at) < day || queued.Sub(at) > 28*day {
		t.Errorf("erasure answer %s: want backups 1 to 35 days and messages 1 to 28 days after the erasure", r.Body)
	}
	after := tg.export(t, "/v1/me/export", tok)
	if len(after.Facts) != 0 || after.ErasedAt != got.ErasedAt {
		t.Errorf("export after the erasure %+v, want no fact and erasedAt %s", after, got.ErasedAt)
	}
}
