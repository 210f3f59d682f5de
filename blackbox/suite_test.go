package blackbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/producer"
)

var httpc = &http.Client{Timeout: 30 * time.Second}

// newID returns an ID no other run uses, so that the suite can run again
// and again on one deployed stack.
func newID(prefix string) string { return prefix + "-" + strings.ToLower(rand.Text()[:10]) }

// mentions returns the fact whose value mentions word (case-insensitive).
func mentions(fs []factapi.Fact, word string) (factapi.Fact, bool) {
	for _, f := range fs {
		if strings.Contains(strings.ToLower(f.Value), strings.ToLower(word)) {
			return f, true
		}
	}
	return factapi.Fact{}, false
}

// waitMentions polls the user's facts until some value mentions each of
// words, within the target's model deadline, and returns them.
func (t *target) waitMentions(tb testing.TB, tok string, words ...string) []factapi.Fact {
	tb.Helper()
	var got []factapi.Fact
	for end := time.Now().Add(t.modelDeadline); ; time.Sleep(time.Second) {
		got = t.api.Facts(tb, "/v1/me/facts", tok)
		all := true
		for _, w := range words {
			if _, ok := mentions(got, w); !ok {
				all = false
			}
		}
		if all {
			return got
		}
		if time.Now().After(end) {
			tb.Fatalf("after %s the facts are %v, want values mentioning %q", t.modelDeadline, factapi.Values(got), words)
		}
	}
}

// answer sends the extraction message a gateway sends after an answer:
// the thread's turns from previous to count, user and assistant in turn.
func (t *target) answer(tb testing.TB, tenant, user, thread string, previous, count int, texts ...string) {
	tb.Helper()
	m := producer.Message{TenantID: tenant, UserID: user, ThreadID: thread, PreviousTurnCount: previous, TurnCount: count, Turns: factapi.Turns(texts...)}
	if err := t.gateway.Send(context.Background(), m); err != nil {
		tb.Fatalf("send the extraction message: %v", err)
	}
}

// newUser returns a user of the tenant that no other run uses, and a
// user token for them. The user's ID is the token's sub, as the API reads
// it: the local issuer's sub is the name the suite chose, a Cognito user
// pool's is an ID it assigns. The user is erased when the test ends, so
// that runs against a deployed stack leave nothing behind.
func (t *target) newUser(tb testing.TB, prefix string) (user, tok string) {
	tb.Helper()
	tok = t.userToken(tb, t.tenant, newID(prefix))
	user = subject(tb, tok)
	admin := t.adminToken(tb, t.tenant, t.cleanupAdmin)
	tb.Cleanup(func() {
		if r := t.api.Call(tb, http.MethodDelete, "/v1/users/"+url.PathEscape(user), admin, nil); r.Status != http.StatusOK {
			tb.Errorf("erasing the test user afterwards = %d %s, want 200", r.Status, r.Body)
		}
	})
	return user, tok
}

// subject returns the sub claim of the JWT tok, read without verifying
// it: the API verifies it.
func subject(tb testing.TB, tok string) string {
	tb.Helper()
	parts := strings.Split(tok, ".")
	var claims struct {
		Sub string `json:"sub"`
	}
	if len(parts) != 3 {
		tb.Fatalf("the token command printed %d parts, want a JWT", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(b, &claims) != nil || claims.Sub == "" {
		tb.Fatalf("the token's payload has no sub (%v)", err)
	}
	return claims.Sub
}

func (t *target) userToken(tb testing.TB, tenant, user string) string {
	return t.token(tb, tokenOptions{tenant: tenant, user: user})
}

func (t *target) adminToken(tb testing.TB, tenant, user string) string {
	return t.token(tb, tokenOptions{tenant: tenant, user: user, admin: true})
}

// TestFactsExtractedAfterAnAnswer: the first answer of a thread is due for
// extraction, and the model's facts show on the user's GET.
func TestFactsExtractedAfterAnAnswer(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "extract")
	thread := newID("th")
	tg.answer(t, tg.tenant, user, thread, 0, 2, "My name is Ana and I live in Lisbon.", "Nice to meet you, Ana!")
	got := tg.waitMentions(t, tok, "Ana", "Lisbon")
	for _, w := range []string{"Ana", "Lisbon"} {
		f, _ := mentions(got, w)
		if f.SourceThreadID != thread {
			t.Errorf("fact %s=%q: sourceThreadId %q, want %q", f.Key, f.Value, f.SourceThreadID, thread)
		}
		if _, err := time.Parse(time.RFC3339, f.UpdatedAt); err != nil {
			t.Errorf("fact %s: updatedAt %q: %v", f.Key, f.UpdatedAt, err)
		}
	}
	// Another user of the tenant and the same user ID in another tenant
	// see none of it.
	if fs := tg.api.Facts(t, "/v1/me/facts", tg.userToken(t, tg.tenant, newID("other"))); len(fs) != 0 {
		t.Errorf("another user reads %v, want nothing", factapi.Values(fs))
	}
	if fs := tg.api.Facts(t, "/v1/me/facts", tg.userToken(t, tg.otherTenant, user)); len(fs) != 0 {
		t.Errorf("the same user ID in another tenant reads %v, want nothing", factapi.Values(fs))
	}
}

// TestMemoryPage makes the requests of the memory page (web/static/app.js),
// in its order: list, edit (and a value too long), forget one, forget all,
// and the admin view's look-up and erasure.
func TestMemoryPage(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "page")
	key := func(k string) string { return "/v1/me/facts/" + url.PathEscape(k) }

	r := tg.api.Call(t, http.MethodGet, "/v1/me/facts", tok, nil)
	var list struct {
		Facts  []factapi.Fact `json:"facts"`
		Limits struct {
			MaxFacts     int `json:"maxFacts"`
			MaxFactChars int `json:"maxFactChars"`
		} `json:"limits"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &list) != nil || len(list.Facts) != 0 || list.Limits.MaxFacts < 1 || list.Limits.MaxFactChars < 1 {
		t.Fatalf("GET /v1/me/facts of a new user = %d %s, want 200, no facts and the limits", r.Status, r.Body)
	}
	for _, kv := range [][2]string{{"city", "Porto"}, {"city", "Lisbon"}, {"role", "nurse"}} {
		r := tg.api.Call(t, http.MethodPut, key(kv[0]), tok, map[string]string{"value": kv[1]})
		var out struct {
			Fact factapi.Fact `json:"fact"`
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || out.Fact.Key != kv[0] || out.Fact.Value != kv[1] {
			t.Fatalf("PUT %s %q = %d %s, want 200 and the fact", kv[0], kv[1], r.Status, r.Body)
		}
	}
	if got := factapi.Values(tg.api.Facts(t, "/v1/me/facts", tok)); fmt.Sprint(got) != "map[city:Lisbon role:nurse]" {
		t.Fatalf("after the edits: %v, want city Lisbon and role nurse", got)
	}
	// A value over the limit: a 4xx problem with a message for the person.
	r = tg.api.Call(t, http.MethodPut, key("city"), tok, map[string]string{"value": strings.Repeat("x", list.Limits.MaxFactChars+1)})
	var problem struct {
		Code        json.Number `json:"code"`
		UserMessage string      `json:"userMessage"`
	}
	if r.Status < 400 || r.Status > 499 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") ||
		json.Unmarshal(r.Body, &problem) != nil || problem.Code == "" || problem.UserMessage == "" {
		t.Errorf("PUT of a value over maxFactChars = %d %s %s, want a 4xx problem+json with code and userMessage", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if r := tg.api.Call(t, http.MethodDelete, key("city"), tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE city = %d %s, want 204", r.Status, r.Body)
	}
	if r := tg.api.Call(t, http.MethodDelete, key("city"), tok, nil); r.Status != http.StatusNoContent {
		t.Errorf("DELETE of a fact no longer there = %d %s, want 204", r.Status, r.Body)
	}
	if got := factapi.Values(tg.api.Facts(t, "/v1/me/facts", tok)); fmt.Sprint(got) != "map[role:nurse]" {
		t.Fatalf("after forgetting one: %v, want role nurse", got)
	}
	if r := tg.api.Call(t, http.MethodDelete, "/v1/me/facts", tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE /v1/me/facts = %d %s, want 204", r.Status, r.Body)
	}
	if got := tg.api.Facts(t, "/v1/me/facts", tok); len(got) != 0 {
		t.Fatalf("after forgetting all: %v, want none", factapi.Values(got))
	}

	// The admin view: look a user up, then erase them.
	tg.api.Put(t, tok, "language", "Portuguese")
	admin := tg.adminToken(t, tg.tenant, newID("admin"))
	users := "/v1/users/" + url.PathEscape(user)
	if got := factapi.Values(tg.api.Facts(t, users+"/facts", admin)); fmt.Sprint(got) != "map[language:Portuguese]" {
		t.Errorf("the admin reads %v, want language Portuguese", got)
	}
	r = tg.api.Call(t, http.MethodDelete, users, admin, nil)
	if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`"removedFacts":1`)) {
		t.Errorf("erase = %d %s, want 200 and removedFacts 1", r.Status, r.Body)
	}
	if got := tg.api.Facts(t, "/v1/me/facts", tok); len(got) != 0 {
		t.Errorf("after the erasure the user reads %v, want none", factapi.Values(got))
	}
}

// TestEraseWithAMessageInFlight: an erasure wins against the extraction of
// turns sent before it. The message stating name and city is sent, the
// user erased at once; a later message in the same FIFO group, sent after
// the erasure, states another fact. When that fact shows, the first message
// has been handled too (FIFO), and nothing of it may be there.
func TestEraseWithAMessageInFlight(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "erase")
	admin := tg.adminToken(t, tg.tenant, newID("admin"))
	tg.answer(t, tg.tenant, user, newID("th"), 0, 2, "My name is Ana and I live in Lisbon.", "Nice to meet you, Ana!")
	if r := tg.api.Call(t, http.MethodDelete, "/v1/users/"+url.PathEscape(user), admin, nil); r.Status != http.StatusOK {
		t.Fatalf("erase = %d %s, want 200", r.Status, r.Body)
	}
	// The fence compares the message's sentAt with the erasure's time:
	// leave a clear second between them for clocks that differ a little.
	time.Sleep(2 * time.Second)
	tg.answer(t, tg.tenant, user, newID("th"), 0, 2, "I work as a nurse.", "That must be demanding work.")
	got := tg.waitMentions(t, tok, "nurse")
	for _, w := range []string{"Ana", "Lisbon"} {
		if f, ok := mentions(got, w); ok {
			t.Errorf("after the erasure the extraction of an earlier message wrote %s=%q", f.Key, f.Value)
		}
	}
}

// TestBadTokensRefused: the authorizer refuses a missing, tampered,
// expired or foreign-audience token, the user scope on an admin route,
// and an admin of another tenant reaches none of the tenant's users.
func TestBadTokensRefused(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "auth")
	tg.api.Put(t, tok, "city", "Lisbon")
	refused := func(t *testing.T, method, path, tok string, want int) {
		t.Helper()
		if r := tg.api.Call(t, method, path, tok, nil); r.Status != want {
			t.Errorf("%s %s = %d %s, want %d", method, path, r.Status, r.Body, want)
		}
	}
	t.Run("none", func(t *testing.T) { refused(t, http.MethodGet, "/v1/me/facts", "", http.StatusUnauthorized) })
	t.Run("tampered", func(t *testing.T) {
		parts := strings.Split(tok, ".")
		if len(parts) != 3 {
			t.Fatalf("the token has %d parts, want 3", len(parts))
		}
		// Another user's claims under this token's signature.
		other := strings.Split(tg.userToken(t, tg.tenant, newID("other")), ".")
		refused(t, http.MethodGet, "/v1/me/facts", other[0]+"."+other[1]+"."+parts[2], http.StatusUnauthorized)
	})
	t.Run("expired", func(t *testing.T) {
		refused(t, http.MethodGet, "/v1/me/facts", tg.token(t, tokenOptions{tenant: tg.tenant, user: user, ttl: -time.Minute}), http.StatusUnauthorized)
	})
	t.Run("wrong audience", func(t *testing.T) {
		refused(t, http.MethodGet, "/v1/me/facts", tg.token(t, tokenOptions{tenant: tg.tenant, user: user, audience: "another-api"}), http.StatusUnauthorized)
	})
	t.Run("user scope on an admin route", func(t *testing.T) {
		refused(t, http.MethodGet, "/v1/users/"+url.PathEscape(user)+"/facts", tok, http.StatusForbidden)
		refused(t, http.MethodDelete, "/v1/users/"+url.PathEscape(user), tok, http.StatusForbidden)
	})
	t.Run("another tenant", func(t *testing.T) {
		admin := tg.adminToken(t, tg.otherTenant, newID("admin"))
		if got := tg.api.Facts(t, "/v1/users/"+url.PathEscape(user)+"/facts", admin); len(got) != 0 {
			t.Errorf("an admin of another tenant reads %v, want nothing", factapi.Values(got))
		}
		r := tg.api.Call(t, http.MethodDelete, "/v1/users/"+url.PathEscape(user), admin, nil)
		if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`"removedFacts":0`)) {
			t.Errorf("erase by an admin of another tenant = %d %s, want 200 and removedFacts 0", r.Status, r.Body)
		}
	})
	if got := factapi.Values(tg.api.Facts(t, "/v1/me/facts", tok)); got["city"] != "Lisbon" {
		t.Errorf("after the refusals the user's facts are %v, want city Lisbon still", got)
	}
}
