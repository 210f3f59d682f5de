// Package factapi drives usermemory from outside, as its users do, for the
// test suites that check a running service (the end-to-end tests of the
// local stack and the black-box suite): requests to the fact API with a
// bearer token, and the turns of an extraction message as a gateway sends
// them.
package factapi

import (
	"bytes"
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

// Client sends requests to the fact API whose base URL is BaseURL, with
// HTTP (http.DefaultClient when nil).
type Client struct {
	BaseURL string
	HTTP    *http.Client
}

// Response is an answer of the fact API, read whole.
type Response struct {
	Status int
	Body   []byte
	Header http.Header
}

// Fact is a fact as the API returns it.
type Fact struct {
	Key               string `json:"key"`
	Value             string `json:"value"`
	UpdatedAt         string `json:"updatedAt"`
	Origin            string `json:"origin"`
	SourceThreadID    string `json:"sourceThreadId"`
	SourceThreadTitle string `json:"sourceThreadTitle"`
	Evidence          string `json:"evidence"`
	Category          string `json:"category"`
}

// Call sends one request as the memory page does (web/static/app.js): the
// bearer token when tok is not empty, and body as JSON with its content
// type when body is not nil. It fails tb when the request cannot be made
// or its answer not read; any status is returned.
func (c *Client) Call(tb testing.TB, method, path, tok string, body any) Response {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(c.BaseURL, "/")+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	return Response{Status: res.StatusCode, Body: b, Header: res.Header}
}

// Facts reads the facts at path (a GET of /v1/me/facts or of an admin's
// /v1/users/{userId}/facts), failing tb unless the answer is 200 with a
// list of facts.
func (c *Client) Facts(tb testing.TB, path, tok string) []Fact {
	tb.Helper()
	r := c.Call(tb, http.MethodGet, path, tok, nil)
	if r.Status != http.StatusOK {
		tb.Fatalf("GET %s = %d %s, want 200", path, r.Status, r.Body)
	}
	var out struct {
		Facts []Fact `json:"facts"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		tb.Fatalf("GET %s: %s: %v", path, r.Body, err)
	}
	return out.Facts
}

// Values returns the value of each fact by key.
func Values(fs []Fact) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Key] = f.Value
	}
	return m
}

// Turns returns the turns of a thread whose texts alternate, user first
// and the assistant's answer next, as a gateway sends them after answers.
func Turns(texts ...string) []producer.Turn {
	var turns []producer.Turn
	for i, text := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		turns = append(turns, producer.Turn{Role: role, Text: text})
	}
	return turns
}

// Put sets the fact key of the token's user to value (PUT
// /v1/me/facts/{key}), failing tb unless the answer is 200.
func (c *Client) Put(tb testing.TB, tok, key, value string) {
	tb.Helper()
	path := "/v1/me/facts/" + url.PathEscape(key)
	if r := c.Call(tb, http.MethodPut, path, tok, map[string]string{"value": value}); r.Status != http.StatusOK {
		tb.Fatalf("PUT %s %q = %d %s, want 200", path, value, r.Status, r.Body)
	}
}

// ImportView is an import as the API shows it.
type ImportView struct {
	ImportID    string         `json:"importId"`
	Source      string         `json:"source"`
	Status      string         `json:"status"`
	Reason      string         `json:"reason"`
	RequestedAt string         `json:"requestedAt"`
	DoneAt      string         `json:"doneAt"`
	Parts       int            `json:"parts"`
	Proposed    int            `json:"proposed"`
	LeftOut     map[string]int `json:"leftOut"`
}

// ImportStatus is the answer of GET /v1/me/imports/{importId}: the
// import, its pending facts, and the stored values they would replace.
type ImportStatus struct {
	Import   ImportView        `json:"import"`
	Pending  []Fact            `json:"pending"`
	Replaces map[string]string `json:"replaces"`
}

// Import asks for the import of text from source (POST /v1/me/imports),
// failing tb unless the answer is 202 with a queued import at its
// Location; it returns the import.
func (c *Client) Import(tb testing.TB, tok, source, text string) ImportView {
	tb.Helper()
	r := c.Call(tb, http.MethodPost, "/v1/me/imports", tok, map[string]string{"source": source, "text": text})
	var out struct {
		Import ImportView `json:"import"`
	}
	if r.Status != http.StatusAccepted || json.Unmarshal(r.Body, &out) != nil || out.Import.Status != "queued" {
		tb.Fatalf("POST /v1/me/imports = %d %s, want 202 with a queued import", r.Status, r.Body)
	}
	if loc := r.Header.Get("Location"); loc != "/v1/me/imports/"+out.Import.ImportID {
		tb.Fatalf("POST /v1/me/imports: Location %q, want /v1/me/imports/%s", loc, out.Import.ImportID)
	}
	return out.Import
}

// ImportStatus reads the import id (GET /v1/me/imports/{importId}),
// failing tb unless the answer is 200.
func (c *Client) ImportStatus(tb testing.TB, tok, id string) ImportStatus {
	tb.Helper()
	path := "/v1/me/imports/" + url.PathEscape(id)
	r := c.Call(tb, http.MethodGet, path, tok, nil)
	var out ImportStatus
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil {
		tb.Fatalf("GET %s = %d %s, want 200", path, r.Status, r.Body)
	}
	return out
}

// WaitImport polls the import id until its status is not queued, within
// limit, and returns it.
func (c *Client) WaitImport(tb testing.TB, tok, id string, limit time.Duration) ImportStatus {
	tb.Helper()
	for end := time.Now().Add(limit); ; time.Sleep(200 * time.Millisecond) {
		st := c.ImportStatus(tb, tok, id)
		if st.Import.Status != "queued" {
			return st
		}
		if time.Now().After(end) {
			tb.Fatalf("after %s the import %s is still queued", limit, id)
		}
	}
}

// KeepImport keeps every pending fact of the import id (POST
// /v1/me/imports/{importId}/keep), failing tb unless the answer is 200;
// it returns the kept facts.
func (c *Client) KeepImport(tb testing.TB, tok, id string) []Fact {
	tb.Helper()
	path := "/v1/me/imports/" + url.PathEscape(id) + "/keep"
	r := c.Call(tb, http.MethodPost, path, tok, nil)
	var out struct {
		Kept []Fact `json:"kept"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || out.Kept == nil {
		tb.Fatalf("POST %s = %d %s, want 200 with the kept facts", path, r.Status, r.Body)
	}
	return out.Kept
}

// DiscardImport discards every pending fact of the import id (DELETE
// /v1/me/imports/{importId}/pending), failing tb unless the answer is
// 200; it returns how many were discarded.
func (c *Client) DiscardImport(tb testing.TB, tok, id string) int {
	tb.Helper()
	path := "/v1/me/imports/" + url.PathEscape(id) + "/pending"
	r := c.Call(tb, http.MethodDelete, path, tok, nil)
	var out struct {
		Discarded *int `json:"discarded"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || out.Discarded == nil {
		tb.Fatalf("DELETE %s = %d %s, want 200 with a count", path, r.Status, r.Body)
	}
	return *out.Discarded
}

// ProblemCode returns the code of a problem answer, "" when r is not one.
func ProblemCode(r Response) string {
	var p struct {
		Code json.Number `json:"code"`
	}
	if json.Unmarshal(r.Body, &p) != nil {
		return ""
	}
	return fmt.Sprint(p.Code)
}
