package blackbox

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/factapi"
)

// TestForgetConversation: forgetting a conversation forgets what its
// thread taught, not a fact set by hand nor another thread's, and a
// message of that thread sent just before the forget (its extraction
// possibly still running) brings nothing back.
func TestForgetConversation(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "forgetthread")
	tg.api.Put(t, tok, "diet", "vegetarian")
	work, home := newID("th"), newID("th")
	tg.answer(t, tg.tenant, user, work, 0, 2, "I work as a nurse.", "That must be demanding work.")
	tg.waitMentions(t, tok, "nurse")
	tg.answer(t, tg.tenant, user, home, 0, 2, "My name is Ana and I live in Lisbon.", "Nice to meet you, Ana!")
	tg.waitMentions(t, tok, "Ana", "Lisbon")

	// A later message of the home thread, then at once the forget.
	tg.answer(t, tg.tenant, user, home, 2, 6, "I have just moved to Porto.", "Lovely!", "It is by the sea.", "A good place.")
	r := tg.api.Call(t, http.MethodDelete, "/v1/me/threads/"+url.PathEscape(home)+"/facts", tok, nil)
	var body struct {
		ThreadID    string         `json:"threadId"`
		ForgottenAt string         `json:"forgottenAt"`
		Facts       []factapi.Fact `json:"facts"`
		Pending     []factapi.Fact `json:"pending"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &body) != nil || body.ThreadID != home || body.Pending == nil {
		t.Fatalf("DELETE the home thread's facts = %d %s, want 200 with what was forgotten", r.Status, r.Body)
	}
	if _, err := time.Parse(time.RFC3339, body.ForgottenAt); err != nil {
		t.Errorf("forgottenAt %q: %v", body.ForgottenAt, err)
	}
	if f, ok := mentions(body.Facts, "Ana"); !ok || f.SourceThreadID != home {
		t.Errorf("the forget's answer %v lacks the home thread's fact mentioning Ana", factapi.Values(body.Facts))
	}
	// The city is Lisbon, or Porto when the late message was read before
	// the forget arrived: the home thread's either way.
	city, ok := mentions(body.Facts, "Lisbon")
	if !ok {
		city, ok = mentions(body.Facts, "Porto")
	}
	if !ok || city.SourceThreadID != home {
		t.Errorf("the forget's answer %v lacks the home thread's fact mentioning Lisbon or Porto", factapi.Values(body.Facts))
	}
	// A later message of the work thread is the sync point: once it is
	// read, the home thread's late message has been read (or refused) too.
	time.Sleep(2 * time.Second)
	tg.answer(t, tg.tenant, user, work, 2, 6, "At work I speak German.", "Noted.", "Thanks.", "Any time.")
	got := tg.waitMentions(t, tok, "German", "nurse", "vegetarian")
	for _, w := range []string{"Ana", "Lisbon", "Porto"} {
		if f, ok := mentions(got, w); ok {
			t.Errorf("after the forget the home thread's fact %s=%q is back", f.Key, f.Value)
		}
	}
}
