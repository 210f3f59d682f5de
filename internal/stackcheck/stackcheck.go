// Package stackcheck checks a running stack from outside, as its first
// users would, after a deploy: the memory page answers, a token of the
// stack's identity reads the facts, and one chat turn sent as a gateway
// sends it is read by the extractor (the model on AWS, the stand-in on
// the local stack) into a fact. Then it erases what it wrote.
//
// go run ./deploy check runs it against a deployed stack, with a user of
// the stack's user pool; localtest/e2e runs it against the local
// stack, whose state file plays the stack's outputs.
package stackcheck

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/usermemory/usermemory/producer"
)

// Tenant is the tenant of the check's user, which it makes and erases.
const Tenant = "deploy-check"

// Turn is the user turn the check sends, and Answer the assistant's: a
// home city and a name any model, and the stand-in, read as facts.
const (
	Turn   = "My name is Ana and I live in Lisbon."
	Answer = "Nice to meet you, Ana!"
)

// Tokens gives access tokens of the check's user: with the user scope,
// and with the admin scope too when admin.
type Tokens interface {
	Token(ctx context.Context, tenant, user string, admin bool) (string, error)
}

// Sender sends an extraction message to the stack's queue, as
// producer.Producer does.
type Sender interface {
	Send(ctx context.Context, m producer.Message) error
}

// Target is the stack the check reaches.
type Target struct {
	// PageURL is the memory page (the stack's output PageUrl), ending in
	// a slash; APIURL the fact API (ApiUrl).
	PageURL, APIURL string
	// HTTP sends the requests; nil is a client with a 30 s timeout.
	HTTP *http.Client
	// Tokens signs the check's user in; nil checks the page only (a stack
	// that trusts an external issuer).
	Tokens Tokens
	// Queue is the stack's extraction queue.
	Queue Sender
	// Forget, when not nil, removes the check's user from the identity
	// after its data is erased (the user pool's account).
	Forget func(ctx context.Context, user string) error
	// Wait bounds the wait for the extraction.
	Wait time.Duration
}

// Step is the outcome of one step of the check.
type Step struct {
	// Name is page, facts, extraction or cleanup.
	Name string
	// Err is nil when the step passed.
	Err error
	// Detail says what was seen.
	Detail string
}

// Run runs the check's steps in order and returns them; a step that fails
// stops the ones that need it, but the cleanup always runs once a user
// was made.
func Run(ctx context.Context, t Target) []Step {
	if t.HTTP == nil {
		t.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	steps := []Step{page(ctx, t)}
	if t.Tokens == nil {
		return steps
	}
	user := "check-" + strings.ToLower(rand.Text()[:10])
	tok, sub, err := signIn(ctx, t, user, false)
	if err != nil {
		return append(steps, Step{Name: "facts", Err: err})
	}
	facts := readFacts(ctx, t, tok)
	steps = append(steps, facts)
	if facts.Err == nil {
		steps = append(steps, extraction(ctx, t, tok, sub))
	}
	return append(steps, cleanup(ctx, t, user, sub))
}

// page asks for the page at PageURL (200, HTML) and at PageURL without
// its slash, which sends the browser to PageURL.
func page(ctx context.Context, t Target) Step {
	s := Step{Name: "page"}
	res, body, err := get(ctx, t.HTTP, t.PageURL, "")
	switch {
	case err != nil:
		s.Err = err
	case res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html"):
		s.Err = fmt.Errorf("GET %s answered %d %s, want 200 with the page: %.200s", t.PageURL, res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if s.Err != nil {
		return s
	}
	bare := strings.TrimSuffix(t.PageURL, "/")
	noRedirect := *t.HTTP
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, _, err = get(ctx, &noRedirect, bare, "")
	switch {
	case err != nil:
		s.Err = err
	case res.StatusCode != http.StatusMovedPermanently || !strings.HasSuffix(res.Header.Get("Location"), "/"):
		s.Err = fmt.Errorf("GET %s answered %d (Location %q), want 301 to the page", bare, res.StatusCode, res.Header.Get("Location"))
	default:
		s.Detail = fmt.Sprintf("%s answers 200, and %s sends there", t.PageURL, bare)
	}
	return s
}

// signIn returns a token of user, and the user's ID: the token's sub.
func signIn(ctx context.Context, t Target, user string, admin bool) (string, string, error) {
	tok, err := t.Tokens.Token(ctx, Tenant, user, admin)
	if err != nil {
		return "", "", fmt.Errorf("sign %s in: %w", user, err)
	}
	sub, err := subject(tok)
	if err != nil {
		return "", "", err
	}
	return tok, sub, nil
}

// subject reads the sub claim of tok, a JWT the stack's identity just
// issued; the API verifies it, this only reads which user it names.
func subject(tok string) (string, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", errors.New("the token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("the token's payload: %w", err)
	}
	var c struct {
		Sub string `json:"sub"`
	}
	if err := json.Unmarshal(b, &c); err != nil || c.Sub == "" {
		return "", fmt.Errorf("the token names no sub (%v)", err)
	}
	return c.Sub, nil
}

// readFacts reads the user's facts with tok: 200 and a list.
func readFacts(ctx context.Context, t Target, tok string) Step {
	facts, err := listFacts(ctx, t, tok)
	if err != nil {
		return Step{Name: "facts", Err: err}
	}
	return Step{Name: "facts", Detail: fmt.Sprintf("a token of the stack's identity reads the facts (%d)", len(facts))}
}

// fact is a fact as GET /v1/me/facts lists it.
type fact struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func listFacts(ctx context.Context, t Target, tok string) ([]fact, error) {
	u := strings.TrimSuffix(t.APIURL, "/") + "/v1/me/facts"
	res, body, err := get(ctx, t.HTTP, u, tok)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s answered %d: %.300s", u, res.StatusCode, body)
	}
	var out struct {
		Facts []fact `json:"facts"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return out.Facts, nil
}

// extraction sends the first exchange of a new thread of the user to the
// queue and waits until a fact of it is listed.
func extraction(ctx context.Context, t Target, tok, sub string) Step {
	s := Step{Name: "extraction"}
	thread := "check-" + strings.ToLower(rand.Text()[:10])
	m := producer.Message{TenantID: Tenant, UserID: sub, ThreadID: thread, TurnCount: 2,
		Turns: []producer.Turn{{Role: "user", Text: Turn}, {Role: "assistant", Text: Answer}}}
	if err := t.Queue.Send(ctx, m); err != nil {
		s.Err = fmt.Errorf("send the chat turn to the queue: %w", err)
		return s
	}
	start := time.Now()
	for {
		facts, err := listFacts(ctx, t, tok)
		if err != nil {
			s.Err = err
			return s
		}
		if len(facts) > 0 {
			s.Detail = fmt.Sprintf("one chat turn became %d fact(s) in %s (%s = %s)", len(facts), time.Since(start).Round(time.Second), facts[0].Key, facts[0].Value)
			return s
		}
		if time.Since(start) > t.Wait {
			s.Err = fmt.Errorf("no fact %s after the chat turn was sent: read the extractor's logs and the queue's age (docs/runbook.md)", t.Wait)
			return s
		}
		select {
		case <-ctx.Done():
			s.Err = ctx.Err()
			return s
		case <-time.After(2 * time.Second):
		}
	}
}

// cleanup erases the user's data (DELETE /v1/users/{userId}, with the
// admin scope), checks that the facts are gone, and removes the user
// from the identity.
func cleanup(ctx context.Context, t Target, user, sub string) Step {
	s := Step{Name: "cleanup"}
	admin, _, err := signIn(ctx, t, user, true)
	if err != nil {
		s.Err = err
		return s
	}
	u := strings.TrimSuffix(t.APIURL, "/") + "/v1/users/" + sub
	res, body, err := do(ctx, t.HTTP, http.MethodDelete, u, admin)
	switch {
	case err != nil:
		s.Err = err
	case res.StatusCode/100 != 2:
		s.Err = fmt.Errorf("DELETE %s answered %d: %.300s", u, res.StatusCode, body)
	}
	if s.Err == nil {
		if facts, err := listFacts(ctx, t, admin); err != nil || len(facts) != 0 {
			s.Err = fmt.Errorf("after the erasure the user has %d fact(s) (%v)", len(facts), err)
		}
	}
	if t.Forget != nil {
		s.Err = errors.Join(s.Err, t.Forget(ctx, user))
	}
	if s.Err == nil {
		s.Detail = "the check's user and its facts are erased"
	}
	return s
}

func get(ctx context.Context, c *http.Client, url, tok string) (*http.Response, []byte, error) {
	return do(ctx, c, http.MethodGet, url, tok)
}

// do sends one request with the bearer token tok (none when empty) and
// reads the answer whole.
func do(ctx context.Context, c *http.Client, method, url, tok string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res, body, err
}
