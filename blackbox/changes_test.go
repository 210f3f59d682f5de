package blackbox

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// threadChanges is the answer of GET .../threads/{threadId}/changes.
type threadChanges struct {
	ThreadID string `json:"threadId"`
	Changes  []struct {
		Key      string  `json:"key"`
		Value    string  `json:"value"`
		Previous *string `json:"previous"`
		At       string  `json:"at"`
	} `json:"changes"`
}

// changes reads what thread changed since, as a gateway does after an
// answer whose extraction ran.
func (t *target) changes(tb testing.TB, tok, thread string, since time.Time) threadChanges {
	tb.Helper()
	r := t.api.Call(tb, http.MethodGet, "/v1/me/threads/"+url.PathEscape(thread)+"/changes?since="+
		url.QueryEscape(since.UTC().Format(time.RFC3339)), tok, nil)
	var out threadChanges
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || out.ThreadID != thread || out.Changes == nil {
		tb.Fatalf("GET the thread's changes = %d %s, want 200 with a list", r.Status, r.Body)
	}
	return out
}

// TestMemoryUpdatedUndo: after an extraction, the thread's changes since
// the message list what it learned, and the user's Undo of one removes
// the new fact, which is then listed neither as a fact nor as a change;
// a since that is no time is refused with its code.
func TestMemoryUpdatedUndo(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "changes")
	thread := newID("th")
	// A minute's margin for the clocks of the suite and the stack.
	before := time.Now().Add(-time.Minute)
	tg.answer(t, tg.tenant, user, thread, 0, 2, "I work as a nurse.", "That must be demanding work.")
	tg.waitMentions(t, tok, "nurse")

	got := tg.changes(t, tok, thread, before)
	key := ""
	for _, c := range got.Changes {
		if strings.Contains(strings.ToLower(c.Value), "nurse") {
			key = c.Key
			if c.Previous != nil {
				t.Errorf("change %s = %q has a previous value %q on a new user", c.Key, c.Value, *c.Previous)
			}
		}
	}
	if key == "" {
		t.Fatalf("the thread's changes %+v name no nurse", got.Changes)
	}
	if late := tg.changes(t, tok, thread, time.Now().Add(time.Hour)); len(late.Changes) != 0 {
		t.Errorf("changes since an hour ahead = %+v, want none", late.Changes)
	}

	bad := tg.api.Call(t, http.MethodGet, "/v1/me/threads/"+url.PathEscape(thread)+"/changes?since=yesterday", tok, nil)
	if code, _ := problemOf(t, bad.Status, bad.Header, bad.Body); bad.Status != http.StatusBadRequest || code != "5380000000214" {
		t.Errorf("since=yesterday = %d code %s, want 400 code 5380000000214 (httpapi.CodeInvalidSince)", bad.Status, code)
	}

	r := tg.api.Call(t, http.MethodPost, "/v1/me/threads/"+url.PathEscape(thread)+"/changes/"+url.PathEscape(key)+"/undo", tok, nil)
	var undone struct {
		Key     string `json:"key"`
		Removed bool   `json:"removed"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &undone) != nil || !undone.Removed {
		t.Fatalf("undo %s = %d %s, want 200 with removed", key, r.Status, r.Body)
	}
	facts, _ := tg.memoryLists(t, "/v1/me/facts", tok)
	for _, f := range facts {
		if f["key"] == key {
			t.Errorf("after the undo the fact %s = %v is still there", key, f["value"])
		}
	}
	for _, c := range tg.changes(t, tok, thread, before).Changes {
		if c.Key == key {
			t.Errorf("after the undo the change %s = %q is still listed", c.Key, c.Value)
		}
	}

	// The same turns sent again (a gateway's retry, a redelivery) do not
	// bring the undone fact back. A message of another thread, behind it
	// in the user's FIFO group, shows when it has been handled.
	tg.answer(t, tg.tenant, user, thread, 0, 2, "I work as a nurse.", "That must be demanding work.")
	tg.answer(t, tg.tenant, user, newID("th"), 0, 2, "Please answer in Portuguese.", "Claro.")
	tg.waitMentions(t, tok, "Portuguese")
	facts, _ = tg.memoryLists(t, "/v1/me/facts", tok)
	for _, f := range facts {
		if f["key"] == key {
			t.Errorf("the same turns sent again brought the undone fact %s = %v back", key, f["value"])
		}
	}
}
