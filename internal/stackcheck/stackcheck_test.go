package stackcheck

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/usermemory/usermemory/producer"
)

// fakeStack is a stack in one process: the page under /app/, the facts of
// each user by the token's sub, an erasure, and a queue whose messages
// become a fact at once unless lost.
type fakeStack struct {
	mu    sync.Mutex
	facts map[string][]fact
	lost  bool
}

func token(sub string) string {
	b, _ := json.Marshal(map[string]string{"sub": sub})
	return "h." + base64.RawURLEncoding.EncodeToString(b) + ".s"
}

func (f *fakeStack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sub, _ := subject(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/app":
		http.Redirect(w, r, "/app/", http.StatusMovedPermanently)
	case r.URL.Path == "/app/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html>"))
	case r.URL.Path == "/v1/me/facts" && sub != "":
		json.NewEncoder(w).Encode(map[string]any{"facts": f.facts[sub]})
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/users/"):
		delete(f.facts, strings.TrimPrefix(r.URL.Path, "/v1/users/"))
		w.Write([]byte(`{}`))
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeStack) Send(_ context.Context, m producer.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.lost {
		f.facts[m.UserID] = append(f.facts[m.UserID], fact{Key: "home_city", Value: "Lisbon"})
	}
	return nil
}

type subTokens struct{}

func (subTokens) Token(_ context.Context, _, user string, _ bool) (string, error) {
	return token("sub-" + user), nil
}

// TestRun: on a stack that works every step passes and the cleanup
// leaves no fact; a stack whose page is elsewhere, or whose messages are
// lost, fails that step and still cleans up.
func TestRun(t *testing.T) {
	for _, c := range []struct {
		name, page string
		lost       bool
		want       map[string]bool
	}{
		{"works", "/app/", false, map[string]bool{"page": true, "facts": true, "extraction": true, "cleanup": true}},
		{"no page", "/elsewhere/", false, map[string]bool{"page": false, "facts": true, "extraction": true, "cleanup": true}},
		{"lost message", "/app/", true, map[string]bool{"page": true, "facts": true, "extraction": false, "cleanup": true}},
	} {
		f := &fakeStack{facts: map[string][]fact{}, lost: c.lost}
		srv := httptest.NewServer(f)
		forgot := ""
		steps := Run(context.Background(), Target{PageURL: srv.URL + c.page, APIURL: srv.URL, Tokens: subTokens{}, Queue: f,
			Forget: func(_ context.Context, user string) error { forgot = user; return nil }, Wait: 50 * time.Millisecond})
		srv.Close()
		got := map[string]bool{}
		for _, s := range steps {
			got[s.Name] = s.Err == nil
		}
		if len(got) != len(c.want) || len(steps) != len(c.want) {
			t.Errorf("%s: steps %v, want %v", c.name, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s passed %v, want %v (%+v)", c.name, k, got[k], v, steps)
			}
		}
		if len(f.facts) != 0 || !strings.HasPrefix(forgot, "check-") {
			t.Errorf("%s: after the check %v facts left, forgot %q; want none left and the check's user forgotten", c.name, f.facts, forgot)
		}
	}
}

// TestPageOnly: without tokens (an external issuer) only the page is
// checked.
func TestPageOnly(t *testing.T) {
	srv := httptest.NewServer(&fakeStack{facts: map[string][]fact{}})
	defer srv.Close()
	steps := Run(context.Background(), Target{PageURL: srv.URL + "/app/", APIURL: srv.URL})
	if len(steps) != 1 || steps[0].Name != "page" || steps[0].Err != nil {
		t.Errorf("steps %+v, want the page alone, passing", steps)
	}
}

func TestSubject(t *testing.T) {
	if got, err := subject(token("abc")); got != "abc" || err != nil {
		t.Errorf("subject = %q, %v; want abc", got, err)
	}
	for _, bad := range []string{"", "a.b", "h." + base64.RawURLEncoding.EncodeToString([]byte(`{}`)) + ".s", "h.!!.s"} {
		if _, err := subject(bad); err == nil {
			t.Errorf("subject(%q) took it", bad)
		}
	}
}
