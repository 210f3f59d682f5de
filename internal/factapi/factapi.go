// Package factapi drives usermemory from outside, as its users do, for the
// test suites that check a running service (the end-to-end tests of the
// local stack and the black-box suite): requests to the fact API with a
// bearer token, and the turns of an extraction message as a gateway sends
// them.
package factapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

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
