package faulte2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/localtest/fault"
)

// answerLimit is the most a request may take during a fault: the
// operation's AnswerBound and a second for API Gateway's emulator, the
// runtime emulator and the function to answer.
const answerLimit = httpapi.AnswerBound + time.Second

// The faults of the API's tests, whose figures BENCHMARKS.md records: the
// stall of TestAPIDuringDynamoDBStall, the limit of the first 200 after a
// fault, and TestNoAcknowledgedWriteLost's writers, their PUTs, and the
// stall then throttling they write through.
const (
	apiStall        = 8 * time.Second
	recoveryLimit   = 10 * time.Second
	stallWriters    = 3
	putsEach        = 8
	writersStall    = 5 * time.Second
	writersThrottle = 3 * time.Second
)

// check503 fails t unless r is the API's 503: problem+json with
// CodeUnavailable, Retry-After and a userMessage that, for a write, says
// it may have been applied and that a retry is safe.
func check503(t *testing.T, what string, r factapi.Response, write bool) {
	t.Helper()
	var p httpapi.Problem
	if err := json.Unmarshal(r.Body, &p); err != nil || r.Status != http.StatusServiceUnavailable ||
		r.Header.Get("Content-Type") != httpapi.ProblemContentType || p.Code != httpapi.CodeUnavailable ||
		r.Header.Get("Retry-After") != fmt.Sprint(httpapi.RetryAfterSeconds) || p.UserMessage == "" {
		t.Errorf("%s: got %d %v %s, want 503 problem+json with code %d and Retry-After", what, r.Status, r.Header, r.Body, httpapi.CodeUnavailable)
		return
	}
	if write && !strings.Contains(p.UserMessage, "may or may not") {
		t.Errorf("%s: a write's 503 says %q, not that it may or may not have been applied", what, p.UserMessage)
	}
}

// TestAPIDuringDynamoDBStall stalls DynamoDB for 8 s and sends a GET, a
// PUT and a DELETE at once: each answers 503 problem+json within the
// bound. The PUT and DELETE are applied or not, never half: the facts are
// the old ones or the new ones. Once the stall ends, the API answers 200
// again without a restart.
func TestAPIDuringDynamoDBStall(t *testing.T) {
	user := newUser("stall")
	tok := userToken(t, user)
	api.Put(t, tok, "home_city", "Lisbon")
	api.Put(t, tok, "language", "Portuguese")
	const stall = apiStall
	inject(t, fault.DynamoDB.Name, fault.Spec{Kind: fault.Stall, For: stall})
	began := time.Now()
	calls := []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/v1/me/facts", nil},
		{http.MethodPut, "/v1/me/facts/home_city", map[string]string{"value": "Porto"}},
		{http.MethodDelete, "/v1/me/facts/language", nil},
	}
	took := make([]time.Duration, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			start := time.Now()
			r := api.Call(t, c.method, c.path, tok, c.body)
			took[i] = time.Since(start)
			check503(t, c.method+" "+c.path, r, c.method != http.MethodGet)
			if took[i] > answerLimit {
				t.Errorf("%s %s answered after %s, over %s", c.method, c.path, took[i], answerLimit)
			}
		})
	}
	wg.Wait()
	t.Logf("figure: answer time during an %s DynamoDB stall: GET %s, PUT %s, DELETE %s (bound %s)",
		stall, took[0].Round(time.Millisecond), took[1].Round(time.Millisecond), took[2].Round(time.Millisecond), httpapi.AnswerBound)

	time.Sleep(time.Until(began.Add(stall)))
	after := recovered(t, tok, recoveryLimit)
	t.Logf("figure: first 200 after the stall ended: %s", after.Round(time.Millisecond))
	got := factapi.Values(api.Facts(t, "/v1/me/facts", tok))
	if c := got["home_city"]; c != "Lisbon" && c != "Porto" {
		t.Errorf("home_city = %q after a PUT answered 503: want the old value or the new one", c)
	}
	if l, ok := got["language"]; ok && l != "Portuguese" {
		t.Errorf("language = %q after a DELETE answered 503: want the old value or none", l)
	}
	if len(got) > 2 {
		t.Errorf("facts %v: more than were written", got)
	}
}

// TestNoAcknowledgedWriteLost runs three writers on one user's facts,
// each writing its own keys one after another, through a 5 s DynamoDB
// stall and then 3 s of throttling. Every write answered 200 is stored
// with its value; every write answered 503 is stored with its value or
// not at all; no other answer is allowed.
func TestNoAcknowledgedWriteLost(t *testing.T) {
	user := newUser("writers")
	tok := userToken(t, user)
	const writers, perWriter = stallWriters, putsEach
	type outcome struct {
		key, value string
		status     int
	}
	results := make([][]outcome, writers)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				key, value := fmt.Sprintf("w%d_k%d", w, i), fmt.Sprintf("v%d-%d", w, i)
				r := api.Call(t, http.MethodPut, "/v1/me/facts/"+key, tok, map[string]string{"value": value})
				results[w] = append(results[w], outcome{key, value, r.Status})
				if r.Status == http.StatusServiceUnavailable {
					check503(t, "PUT "+key, r, true)
				}
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Millisecond):
				}
			}
		})
	}
	time.Sleep(time.Second)
	inject(t, fault.DynamoDB.Name, fault.Spec{Kind: fault.Stall, For: writersStall})
	time.Sleep(writersStall)
	inject(t, fault.DynamoDB.Name, fault.Spec{Kind: fault.Throttle, For: writersThrottle})
	wg.Wait()
	close(stop)
	time.Sleep(writersThrottle)
	recovered(t, tok, recoveryLimit)

	got := factapi.Values(api.Facts(t, "/v1/me/facts", tok))
	counts := map[int]int{}
	for _, rs := range results {
		for _, o := range rs {
			counts[o.status]++
			v, stored := got[o.key]
			switch {
			case o.status == http.StatusOK && v != o.value:
				t.Errorf("PUT %s answered 200 but the fact is %q (stored: %t): an acknowledged write was lost", o.key, v, stored)
			case o.status == http.StatusServiceUnavailable && stored && v != o.value:
				t.Errorf("PUT %s answered 503 and the fact is %q: half applied", o.key, v)
			case o.status != http.StatusOK && o.status != http.StatusServiceUnavailable:
				t.Errorf("PUT %s answered %d, want 200 or 503", o.key, o.status)
			}
		}
	}
	if counts[http.StatusServiceUnavailable] == 0 || counts[http.StatusOK] == 0 {
		t.Errorf("answers %v: the faults should have made some writes answer 503 and the others 200", counts)
	}
	t.Logf("figure: writes through a 5 s stall then 3 s of throttling: %d answered 200 (all stored), %d answered 503; %d facts stored",
		counts[http.StatusOK], counts[http.StatusServiceUnavailable], len(got))
}
