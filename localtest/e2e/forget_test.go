package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"testing"

	"github.com/usermemory/usermemory/internal/fakebedrock"
)

// The tests of this file check that forgetting lasts (docs/decisions.md,
// "Deletion"): a clear or the removal of one key wins against an
// extraction of turns sent before it, even when that extraction is still
// with the model when the user deletes; and that a new user's concurrent
// writes of distinct keys are never refused.

// heldAnswer is the stand-in's answer to "I'm Ana and I live in Lisbon.",
// quoting the user, held for slowFirst so that a deletion can come while
// it is with the model.
func heldAnswer() fakebedrock.Step {
	return answer(slowFirst,
		op{Op: "SET", Key: fakebedrock.KeyName, Value: "Ana", Evidence: "I'm Ana"},
		op{Op: "SET", Key: fakebedrock.KeyHomeCity, Value: "Lisbon", Evidence: "I live in Lisbon"})
}

// holdExtraction sends a message of user stating their name and city and
// waits until its extraction is with the model, which holds the answer
// (heldAnswer) for slowFirst.
func holdExtraction(t *testing.T, user, thread string) {
	t.Helper()
	st.Converse().Script(heldAnswer())
	sendTurns(t, user, thread, 0, 2, "I'm Ana and I live in Lisbon.", "Hi Ana")
	waitFor(t, "the extraction with the model", func() bool { return st.Converse().Active() == 1 })
}

// deleteWhileHeld sends a deletion with tok while the extraction of
// holdExtraction is with the model, and checks that it still was once
// the deletion was answered: the test means nothing otherwise.
func deleteWhileHeld(t *testing.T, path, tok string) {
	t.Helper()
	if r := api.Call(t, http.MethodDelete, path, tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE %s = %d %s, want 204", path, r.Status, r.Body)
	}
	if answered, active := countCalls(), st.Converse().Active(); active != 1 || answered != 0 {
		t.Fatalf("when the deletion was answered the extraction was no longer with the model (%d calls answered, %d in progress): a loaded machine may need a longer slowFirst", answered, active)
	}
}

// countCalls returns the number of model calls answered since the last
// reset of the stand-in.
func countCalls() int {
	n, _ := st.Converse().Calls()
	return n
}

// waitExtractionDone waits until the held extraction was answered and its
// message left the queue, then checks that it was handled rather than
// moved to the dead-letter queue, whose depth was dlq before. (A
// redelivery, on a machine so loaded that the extraction outlives the
// visibility timeout, was sent before the deletion too: it may call the
// model again, and must not undo the deletion either.)
func waitExtractionDone(t *testing.T, dlq int) {
	t.Helper()
	waitFor(t, "the model's answer", func() bool { return countCalls() >= 1 })
	waitQueueEmpty(t, st.Info.QueueURL)
	if d := queueDepth(t, st.Info.DLQURL); d != dlq {
		t.Fatalf("the dead-letter queue holds %d messages, %d before: the extraction failed instead of ending", d, dlq)
	}
}

func TestClearWhileAnExtractionIsWithTheModel(t *testing.T) {
	st.Converse().Reset()
	user := newUser("clear")
	tok := userToken(t, tenant, user)
	api.Put(t, tok, "role", "nurse")
	dlq := queueDepth(t, st.Info.DLQURL)
	holdExtraction(t, user, "th-1")
	deleteWhileHeld(t, "/v1/me/facts", tok)
	waitExtractionDone(t, dlq)
	// The answer of the extraction, which SETs two facts, came after the
	// clear: nothing of it is written, and nothing is left to redeliver.
	if got := facts(t, "/v1/me/facts", tok); len(got) != 0 {
		t.Fatalf("after a clear and the extraction of older turns: facts = %v, want none", got)
	}
	admin := adminToken(t, tenant, newUser("admin"))
	if got := facts(t, "/v1/users/"+user+"/facts", admin); len(got) != 0 {
		t.Fatalf("the admin reads %v after the clear, want none", got)
	}
	// Forgetting is not a ban: a message sent after the clear that states
	// the facts again sets them.
	sendTurns(t, user, "th-2", 0, 2, "I'm Ana and I live in Lisbon.", "Hi Ana")
	waitFacts(t, tok, map[string]string{"name": "Ana", "home_city": "Lisbon"})
}

func TestUserRemovesAKeyWhileAnOlderExtractionIsWithTheModel(t *testing.T) {
	user := newUser("forget")
	tok := userToken(t, tenant, user)
	removeKeyWhileHeld(t, user, tok, "/v1/me/facts/home_city", tok)
}

func TestAdminRemovesAKeyWhileAnOlderExtractionIsWithTheModel(t *testing.T) {
	user := newUser("forget")
	admin := adminToken(t, tenant, newUser("admin"))
	removeKeyWhileHeld(t, user, userToken(t, tenant, user), "/v1/users/"+user+"/facts/home_city", admin)
}

// removeKeyWhileHeld removes home_city of user by DELETE path with
// deleter while the extraction of an older message, which SETs name and
// home_city, is with the model; tok is the user's token.
func removeKeyWhileHeld(t *testing.T, user, tok, path, deleter string) {
	t.Helper()
	st.Converse().Reset()
	api.Put(t, tok, "home_city", "Porto")
	dlq := queueDepth(t, st.Info.DLQURL)
	holdExtraction(t, user, "th-1")
	deleteWhileHeld(t, path, deleter)
	waitExtractionDone(t, dlq)
	// The removed key stays removed; the extraction's other SET applies.
	if got, want := facts(t, "/v1/me/facts", tok), map[string]string{"name": "Ana"}; !maps.Equal(got, want) {
		t.Fatalf("after removing home_city and the extraction of an older message: facts = %v, want %v", got, want)
	}
	// Forgetting is not a ban: a later message that states the city again
	// sets it.
	sendTurns(t, user, "th-2", 0, 2, "I live in Lisbon.", "Noted")
	waitFacts(t, tok, map[string]string{"name": "Ana", "home_city": "Lisbon"})
}

// firstFactWriters is how many PUTs of distinct keys each new user gets at
// once in TestNewUsersConcurrentWritesOfDistinctKeys: the stack's
// environments per function (TestMain), and under the default maxFacts
// (30), so that every key is kept.
const firstFactWriters = 16

// firstFactUsers is how many new users TestNewUsersConcurrentWritesOfDistinctKeys
// writes, one after another.
const firstFactUsers = 4

func TestNewUsersConcurrentWritesOfDistinctKeys(t *testing.T) {
	refused, lost := 0, 0
	for u := range firstFactUsers {
		user := newUser("burst")
		tok := userToken(t, tenant, user)
		want := map[string]string{}
		status := make([]int, firstFactWriters)
		errs := make([]error, firstFactWriters)
		var wg sync.WaitGroup
		for i := range firstFactWriters {
			key, value := fmt.Sprintf("k%02d", i), fmt.Sprintf("value %d of user %d", i, u)
			want[key] = value
			wg.Go(func() {
				// call's t.Fatalf must not run off the test's goroutine.
				status[i], errs[i] = put(key, value, tok)
			})
		}
		wg.Wait()
		for i, s := range status {
			switch {
			case errs[i] != nil:
				t.Errorf("user %d: PUT k%02d: %v", u, i, errs[i])
			case s == http.StatusConflict:
				refused++
			case s != http.StatusOK:
				t.Errorf("user %d: PUT k%02d = %d, want 200", u, i, s)
			}
		}
		got := facts(t, "/v1/me/facts", tok)
		for i, s := range status {
			if key := fmt.Sprintf("k%02d", i); s == http.StatusOK && got[key] != want[key] {
				lost++
				t.Errorf("user %d: %s was acknowledged but reads %q, want %q", u, key, got[key], want[key])
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("user %d: facts = %v, want all %d keys written", u, got, firstFactWriters)
		}
	}
	if refused != 0 || lost != 0 {
		t.Errorf("of %d concurrent PUTs of distinct keys for new users, %d were refused with 409 and %d acknowledged writes were lost, want 0 and 0", firstFactUsers*firstFactWriters, refused, lost)
	}
}

// put writes one fact through the API and returns the status.
func put(key, value, tok string) (int, error) {
	body, err := json.Marshal(map[string]string{"value": value})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(http.MethodPut, st.Info.APIURL+"/v1/me/facts/"+key, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
