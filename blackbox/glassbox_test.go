package blackbox

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The problem codes of the glass-box contract, as the API documents them.
const (
	codePendingNotFound   = "5380000000111"
	codeInvalidValidUntil = "5380000000112"
	codeSecretRefused     = "5380000000113"
)

// problemOf decodes a problem+json answer: its code and userMessage.
func problemOf(tb testing.TB, status int, header http.Header, body []byte) (code, userMessage string) {
	tb.Helper()
	var p struct {
		Code        json.Number `json:"code"`
		UserMessage string      `json:"userMessage"`
	}
	if !strings.HasPrefix(header.Get("Content-Type"), "application/problem+json") || json.Unmarshal(body, &p) != nil {
		tb.Errorf("answer %d %s %s, want problem+json", status, header.Get("Content-Type"), body)
	}
	return p.Code.String(), p.UserMessage
}

// memoryLists reads GET path and returns its facts and pending facts as
// raw objects; both lists must be present.
func (t *target) memoryLists(tb testing.TB, path, tok string) (facts, pending []map[string]any) {
	tb.Helper()
	r := t.api.Call(tb, http.MethodGet, path, tok, nil)
	var body struct {
		Facts   []map[string]any  `json:"facts"`
		Pending *[]map[string]any `json:"pending"`
	}
	if err := json.Unmarshal(r.Body, &body); r.Status != http.StatusOK || err != nil || body.Facts == nil || body.Pending == nil {
		tb.Fatalf("GET %s = %d %s, want 200 with facts and pending lists", path, r.Status, r.Body)
	}
	return body.Facts, *body.Pending
}

// TestSecretsRefusedOnPut: a fact set by hand that holds a secret (a card
// number, an IBAN, an API key, a private key, a password) is refused with
// 400 and its code, with a message for the person, and nothing is stored.
func TestSecretsRefusedOnPut(t *testing.T) {
	tg := need(t)
	t.Parallel()
	_, tok := tg.newUser(t, "secret")
	for _, kv := range [][2]string{
		{"card", "4111 1111 1111 1111"},
		{"bank_account", "DE89 3704 0044 0532 0130 00"},
		{"aws", "AKIA" + "IOSFODNN7EXAMPLE"},
		{"github", "ghp_" + "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"},
		{"ssh", "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAA"},
		{"wifi_password", "hunter2"},
		{"note", "my password is Tr0ub4dor&3"},
		{"ssn", "123-45-6789"},
		{"note", "o meu CPF é 111.444.777-35"},
	} {
		r := tg.api.Call(t, http.MethodPut, "/v1/me/facts/"+url.PathEscape(kv[0]), tok, map[string]string{"value": kv[1]})
		code, msg := problemOf(t, r.Status, r.Header, r.Body)
		if r.Status != http.StatusBadRequest || code != codeSecretRefused || msg == "" {
			t.Errorf("PUT %s = %d code %s %q, want 400 code %s with a userMessage", kv[0], r.Status, code, msg, codeSecretRefused)
		}
		if strings.Contains(string(r.Body), kv[1]) {
			t.Errorf("PUT %s: the refusal repeats the secret: %s", kv[0], r.Body)
		}
	}
	if facts, _ := tg.memoryLists(t, "/v1/me/facts", tok); len(facts) != 0 {
		t.Errorf("after the refusals the user has %v, want nothing", facts)
	}
	// A phone number is no secret, nor an order number of an SSN's shape.
	tg.api.Put(t, tok, "phone", "+351 912 345 678")
	tg.api.Put(t, tok, "order_number", "123-45-6789")
}

// TestValidUntil: a fact set by hand may end on a day from today to a
// year ahead; GET returns that day; a past day, a day too far ahead or a
// date that is not YYYY-MM-DD is refused with its code, and nothing is
// stored.
func TestValidUntil(t *testing.T) {
	tg := need(t)
	t.Parallel()
	_, tok := tg.newUser(t, "until")
	// Days are counted in UTC; keep a day of margin from each bound for a
	// run across midnight.
	today := time.Now().UTC()
	ok := today.AddDate(0, 0, 3).Format(time.DateOnly)
	r := tg.api.Call(t, http.MethodPut, "/v1/me/facts/current_city", tok, map[string]string{"value": "Paris", "validUntil": ok})
	var put struct {
		Fact map[string]any `json:"fact"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &put) != nil || put.Fact["validUntil"] != ok {
		t.Fatalf("PUT with validUntil %s = %d %s, want 200 and the fact with it", ok, r.Status, r.Body)
	}
	facts, _ := tg.memoryLists(t, "/v1/me/facts", tok)
	if len(facts) != 1 || facts[0]["validUntil"] != ok {
		t.Errorf("GET = %v, want current_city with validUntil %s", facts, ok)
	}
	// A lasting fact has no validUntil member.
	tg.api.Put(t, tok, "home_city", "Lisbon")
	facts, _ = tg.memoryLists(t, "/v1/me/facts", tok)
	for _, f := range facts {
		if _, has := f["validUntil"]; f["key"] == "home_city" && has {
			t.Errorf("a lasting fact has validUntil: %v", f)
		}
	}
	for _, bad := range []string{today.AddDate(0, 0, -2).Format(time.DateOnly), today.AddDate(1, 0, 3).Format(time.DateOnly), "next friday", "2026-13-01",
		today.AddDate(0, 0, 2).Add(23*time.Hour + 25*time.Minute).Format(time.RFC3339), ""} {
		r := tg.api.Call(t, http.MethodPut, "/v1/me/facts/trip", tok, map[string]string{"value": "Rome", "validUntil": bad})
		if code, _ := problemOf(t, r.Status, r.Header, r.Body); r.Status != http.StatusBadRequest || code != codeInvalidValidUntil {
			t.Errorf("PUT with validUntil %q = %d code %s, want 400 code %s", bad, r.Status, code, codeInvalidValidUntil)
		}
	}
	if facts, _ := tg.memoryLists(t, "/v1/me/facts", tok); len(facts) != 2 {
		t.Errorf("after the refusals: %v, want current_city and home_city only", facts)
	}
}

// TestPendingAnswersWithNothingPending: GET has a pending list, empty for
// a new user (for the admin too); keeping a key with nothing pending is a
// 404 with its code; discarding one is a 204, twice; neither touches the
// fact of the same key.
func TestPendingAnswersWithNothingPending(t *testing.T) {
	tg := need(t)
	t.Parallel()
	user, tok := tg.newUser(t, "pending")
	tg.api.Put(t, tok, "home_city", "Lisbon")
	if _, pending := tg.memoryLists(t, "/v1/me/facts", tok); len(pending) != 0 {
		t.Errorf("a new user's pending = %v, want []", pending)
	}
	admin := tg.adminToken(t, tg.tenant, newID("admin"))
	if _, pending := tg.memoryLists(t, "/v1/users/"+url.PathEscape(user)+"/facts", admin); len(pending) != 0 {
		t.Errorf("the admin reads pending %v, want []", pending)
	}
	r := tg.api.Call(t, http.MethodPost, "/v1/me/pending/home_city/keep", tok, nil)
	if code, _ := problemOf(t, r.Status, r.Header, r.Body); r.Status != http.StatusNotFound || code != codePendingNotFound {
		t.Errorf("keep with nothing pending = %d code %s, want 404 code %s", r.Status, code, codePendingNotFound)
	}
	for range 2 {
		if r := tg.api.Call(t, http.MethodDelete, "/v1/me/pending/home_city", tok, nil); r.Status != http.StatusNoContent {
			t.Errorf("discard with nothing pending = %d %s, want 204", r.Status, r.Body)
		}
	}
	if facts, _ := tg.memoryLists(t, "/v1/me/facts", tok); len(facts) != 1 || facts[0]["value"] != "Lisbon" {
		t.Errorf("after keep and discard of nothing: %v, want home_city Lisbon untouched", facts)
	}
	// Keep and discard are the user's: no token, no answer.
	if r := tg.api.Call(t, http.MethodPost, "/v1/me/pending/home_city/keep", "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("keep without a token = %d, want 401", r.Status)
	}
}
