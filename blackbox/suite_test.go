package blackbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/usermemory/usermemory/producer"
)

var httpc = &http.Client{Timeout: 30 * time.Second}

// newID returns an ID no other run uses, so that the suite can run again
// and again on one deployed stack.
func newID(prefix string) string { return prefix + "-" + strings.ToLower(rand.Text()[:10]) }

type fact struct {
	Key            string `json:"key"`
	Value          string `json:"value"`
	UpdatedAt      string `json:"updatedAt"`
	SourceThreadID string `json:"sourceThreadId"`
}

type response struct {
	status int
	body   []byte
	header http.Header
}

// call sends one request as the memory page does (web/static/app.js):
// the bearer token, and a JSON body with its content type when there is one.
func (t *target) call(tb testing.TB, method, path, tok string, body any) response {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(t.apiURL, "/")+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := httpc.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	return response{status: res.StatusCode, body: b, header: res.Header}
}

// facts reads the facts at path (GET, 200 wanted).
func (t *target) facts(tb testing.TB, path, tok string) []fact {
	tb.Helper()
	r := t.call(tb, http.MethodGet, path, tok, nil)
	if r.status != http.StatusOK {
		tb.Fatalf("GET %s = %d %s, want 200", path, r.status, r.body)
	}
	var out struct {
		Facts []fact `json:"facts"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		tb.Fatalf("GET %s: %s: %v", path, r.body, err)
	}
	return out.Facts
}

func values(fs []fact) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Key] = f.Value
	}
	return m
}

// mentions returns the fact whose value mentions word (case-insensitive).
func mentions(fs []fact, word string) (fact, bool) {
	for _, f := range fs {
		if strings.Contains(strings.ToLower(f.Value), strings.ToLower(word)) {
			return f, true
		}
	}
	return fact{}, false
}

// waitMentions polls the user's facts until some value mentions each of
// words, within the target's model deadline, and returns them.
func (t *target) waitMentions(tb testing.TB, tok string, words ...string) []fact {
	tb.Helper()
	var got []fact
	for end := time.Now().Add(t.modelDeadline); ; time.Sleep(time.Second) {
		got = t.facts(tb, "/v1/me/facts", tok)
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
			tb.Fatalf("after %s the facts are %v, want values mentioning %q", t.modelDeadline, values(got), words)
		}
	}
}

// answer sends the extraction message a gateway sends after an answer:
// the thread's turns from previous to count, user and assistant in turn.
func (t *target) answer(tb testing.TB, tenant, user, thread string, previous, count int, texts ...string) {
	tb.Helper()
	m := producer.Message{TenantID: tenant, UserID: user, ThreadID: thread, PreviousTurnCount: previous, TurnCount: count}
	for i, text := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		m.Turns = append(m.Turns, producer.Turn{Role: role, Text: text})
	}
	if err := t.gateway.Send(context.Background(), m); err != nil {
		tb.Fatalf("send the extraction message: %v", err)
	}
}

// eraseAfter erases the user when the test ends, so that runs against a
// deployed stack leave nothing behind.
func (t *target) eraseAfter(tb testing.TB, tenant, user string) {
	tb.Helper()
	admin := t.adminToken(tb, tenant, newID("cleanup"))
	tb.Cleanup(func() {
		if r := t.call(tb, http.MethodDelete, "/v1/users/"+url.PathEscape(user), admin, nil); r.status != http.StatusOK {
			tb.Errorf("erasing the test user afterwards = %d %s, want 200", r.status, r.body)
		}
	})
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
	user, thread := newID("extract"), newID("th")
	tok := tg.userToken(t, tg.tenant, user)
	tg.eraseAfter(t, tg.tenant, user)
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
	if fs := tg.facts(t, "/v1/me/facts", tg.userToken(t, tg.tenant, newID("other"))); len(fs) != 0 {
		t.Errorf("another user reads %v, want nothing", values(fs))
	}
	if fs := tg.facts(t, "/v1/me/facts", tg.userToken(t, tg.otherTenant, user)); len(fs) != 0 {
		t.Errorf("the same user ID in another tenant reads %v, want nothing", values(fs))
	}
}

// TestMemoryPage makes the requests of the memory page (web/static/app.js),
// in its order: list, edit (and a value too long), forget one, forget all,
// and the admin view's look-up and erasure.
func TestMemoryPage(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user := newID("page")
	tok := tg.userToken(t, tg.tenant, user)
	tg.eraseAfter(t, tg.tenant, user)
	key := func(k string) string { return "/v1/me/facts/" + url.PathEscape(k) }

	r := tg.call(t, http.MethodGet, "/v1/me/facts", tok, nil)
	var list struct {
		Facts  []fact `json:"facts"`
		Limits struct {
			MaxFacts     int `json:"maxFacts"`
			MaxFactChars int `json:"maxFactChars"`
		} `json:"limits"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &list) != nil || len(list.Facts) != 0 || list.Limits.MaxFacts < 1 || list.Limits.MaxFactChars < 1 {
		t.Fatalf("GET /v1/me/facts of a new user = %d %s, want 200, no facts and the limits", r.status, r.body)
	}
	for _, kv := range [][2]string{{"city", "Porto"}, {"city", "Lisbon"}, {"role", "nurse"}} {
		r := tg.call(t, http.MethodPut, key(kv[0]), tok, map[string]string{"value": kv[1]})
		var out struct {
			Fact fact `json:"fact"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil || out.Fact.Key != kv[0] || out.Fact.Value != kv[1] {
			t.Fatalf("PUT %s %q = %d %s, want 200 and the fact", kv[0], kv[1], r.status, r.body)
		}
	}
	if got := values(tg.facts(t, "/v1/me/facts", tok)); fmt.Sprint(got) != "map[city:Lisbon role:nurse]" {
		t.Fatalf("after the edits: %v, want city Lisbon and role nurse", got)
	}
	// A value over the limit: a 4xx problem with a message for the person.
	r = tg.call(t, http.MethodPut, key("city"), tok, map[string]string{"value": strings.Repeat("x", list.Limits.MaxFactChars+1)})
	var problem struct {
		Code        json.Number `json:"code"`
		UserMessage string      `json:"userMessage"`
	}
	if r.status < 400 || r.status > 499 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") ||
		json.Unmarshal(r.body, &problem) != nil || problem.Code == "" || problem.UserMessage == "" {
		t.Errorf("PUT of a value over maxFactChars = %d %s %s, want a 4xx problem+json with code and userMessage", r.status, r.header.Get("Content-Type"), r.body)
	}
	if r := tg.call(t, http.MethodDelete, key("city"), tok, nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE city = %d %s, want 204", r.status, r.body)
	}
	if r := tg.call(t, http.MethodDelete, key("city"), tok, nil); r.status != http.StatusNoContent {
		t.Errorf("DELETE of a fact no longer there = %d %s, want 204", r.status, r.body)
	}
	if got := values(tg.facts(t, "/v1/me/facts", tok)); fmt.Sprint(got) != "map[role:nurse]" {
		t.Fatalf("after forgetting one: %v, want role nurse", got)
	}
	if r := tg.call(t, http.MethodDelete, "/v1/me/facts", tok, nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE /v1/me/facts = %d %s, want 204", r.status, r.body)
	}
	if got := tg.facts(t, "/v1/me/facts", tok); len(got) != 0 {
		t.Fatalf("after forgetting all: %v, want none", values(got))
	}

	// The admin view: look a user up, then erase them.
	if r := tg.call(t, http.MethodPut, key("language"), tok, map[string]string{"value": "Portuguese"}); r.status != http.StatusOK {
		t.Fatalf("PUT language = %d %s, want 200", r.status, r.body)
	}
	admin := tg.adminToken(t, tg.tenant, newID("admin"))
	users := "/v1/users/" + url.PathEscape(user)
	if got := values(tg.facts(t, users+"/facts", admin)); fmt.Sprint(got) != "map[language:Portuguese]" {
		t.Errorf("the admin reads %v, want language Portuguese", got)
	}
	r = tg.call(t, http.MethodDelete, users, admin, nil)
	if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"removedFacts":1`)) {
		t.Errorf("erase = %d %s, want 200 and removedFacts 1", r.status, r.body)
	}
	if got := tg.facts(t, "/v1/me/facts", tok); len(got) != 0 {
		t.Errorf("after the erasure the user reads %v, want none", values(got))
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
	user := newID("erase")
	tok := tg.userToken(t, tg.tenant, user)
	tg.eraseAfter(t, tg.tenant, user)
	admin := tg.adminToken(t, tg.tenant, newID("admin"))
	tg.answer(t, tg.tenant, user, newID("th"), 0, 2, "My name is Ana and I live in Lisbon.", "Nice to meet you, Ana!")
	if r := tg.call(t, http.MethodDelete, "/v1/users/"+url.PathEscape(user), admin, nil); r.status != http.StatusOK {
		t.Fatalf("erase = %d %s, want 200", r.status, r.body)
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
	user := newID("auth")
	tok := tg.userToken(t, tg.tenant, user)
	tg.eraseAfter(t, tg.tenant, user)
	if r := tg.call(t, http.MethodPut, "/v1/me/facts/city", tok, map[string]string{"value": "Lisbon"}); r.status != http.StatusOK {
		t.Fatalf("PUT = %d %s, want 200", r.status, r.body)
	}
	refused := func(t *testing.T, method, path, tok string, want int) {
		t.Helper()
		if r := tg.call(t, method, path, tok, nil); r.status != want {
			t.Errorf("%s %s = %d %s, want %d", method, path, r.status, r.body, want)
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
		if got := tg.facts(t, "/v1/users/"+url.PathEscape(user)+"/facts", admin); len(got) != 0 {
			t.Errorf("an admin of another tenant reads %v, want nothing", values(got))
		}
		r := tg.call(t, http.MethodDelete, "/v1/users/"+url.PathEscape(user), admin, nil)
		if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"removedFacts":0`)) {
			t.Errorf("erase by an admin of another tenant = %d %s, want 200 and removedFacts 0", r.status, r.body)
		}
	})
	if got := values(tg.facts(t, "/v1/me/facts", tok)); got["city"] != "Lisbon" {
		t.Errorf("after the refusals the user's facts are %v, want city Lisbon still", got)
	}
}
