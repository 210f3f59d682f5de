package e2e

import (
	"encoding/json"
	"maps"
	"net/http"
	"testing"
)

// forgotten is the answer of DELETE .../threads/{threadId}/facts, by key.
func forgotten(t *testing.T, path, tok string) map[string]string {
	t.Helper()
	r := api.Call(t, http.MethodDelete, path, tok, nil)
	var body struct {
		ThreadID    string `json:"threadId"`
		ForgottenAt string `json:"forgottenAt"`
		Facts       []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"facts"`
	}
	if err := json.Unmarshal(r.Body, &body); r.Status != http.StatusOK || err != nil || body.ForgottenAt == "" {
		t.Fatalf("DELETE %s = %d %s (%v), want 200 with what was forgotten", path, r.Status, r.Body, err)
	}
	out := map[string]string{}
	for _, f := range body.Facts {
		out[f.Key] = f.Value
	}
	return out
}

// TestForgetThreadWhileAnOlderMessageOfItIsWithTheModel: forgetting a
// conversation removes exactly the facts it taught (not the one set by
// hand, not another thread's), and the extraction of a message of that
// thread sent before the forget, still with the model when the forget is
// answered, brings nothing back; a message of the thread sent after it is
// read as usual; the admin twin forgets another thread.
func TestForgetThreadWhileAnOlderMessageOfItIsWithTheModel(t *testing.T) {
	st.Converse().Reset()
	user := newUser("forgetthread")
	tok := userToken(t, tenant, user)
	api.Put(t, tok, "role", "nurse")
	st.Converse().Script(answer(0, op{Op: "SET", Key: "pet", Value: "cat", Evidence: "I have a cat"}))
	sendTurns(t, user, "th-a", 0, 2, "I have a cat.", "Nice")
	waitFacts(t, tok, map[string]string{"role": "nurse", "pet": "cat"})
	st.Converse().Script(answer(0, op{Op: "SET", Key: "language", Value: "Portuguese", Evidence: "I speak Portuguese"}))
	sendTurns(t, user, "th-b", 0, 2, "I speak Portuguese.", "Olá")
	waitFacts(t, tok, map[string]string{"role": "nurse", "pet": "cat", "language": "Portuguese"})
	waitQueueEmpty(t, st.Info.QueueURL)

	// A later message of th-a, due, with the model during the forget.
	st.Converse().Reset()
	dlq := queueDepth(t, st.Info.DLQURL)
	st.Converse().Script(heldAnswer())
	sendTurns(t, user, "th-a", 2, 6, "I'm Ana and I live in Lisbon.", "Hi Ana", "Yes.", "Sure")
	waitFor(t, "the extraction with the model", func() bool { return st.Converse().Active() == 1 })
	if got := forgotten(t, "/v1/me/threads/th-a/facts", tok); !maps.Equal(got, map[string]string{"pet": "cat"}) {
		t.Fatalf("forgotten = %v, want pet = cat alone", got)
	}
	if answered, active := countCalls(), st.Converse().Active(); active != 1 || answered != 0 {
		t.Fatalf("when the forget was answered the extraction was no longer with the model (%d calls answered, %d in progress): a loaded machine may need a longer slowFirst", answered, active)
	}
	waitExtractionDone(t, dlq)
	if got, want := facts(t, "/v1/me/facts", tok), map[string]string{"role": "nurse", "language": "Portuguese"}; !maps.Equal(got, want) {
		t.Fatalf("after forgetting th-a and the extraction of its older message: facts = %v, want %v", got, want)
	}

	// A message of th-a sent after the forget is read.
	st.Converse().Script(answer(0, op{Op: "SET", Key: "pet", Value: "dog", Evidence: "I have a dog"}))
	sendTurns(t, user, "th-a", 6, 12, "I have a dog now.", "Nice", "Yes.", "Ok", "Thanks.", "Bye")
	waitFacts(t, tok, map[string]string{"role": "nurse", "language": "Portuguese", "pet": "dog"})

	// The admin twin forgets th-b for the user, in the admin's tenant.
	admin := adminToken(t, tenant, newUser("admin"))
	if got := forgotten(t, "/v1/users/"+user+"/threads/th-b/facts", admin); !maps.Equal(got, map[string]string{"language": "Portuguese"}) {
		t.Fatalf("admin forgot %v, want language = Portuguese alone", got)
	}
	if got, want := facts(t, "/v1/me/facts", tok), map[string]string{"role": "nurse", "pet": "dog"}; !maps.Equal(got, want) {
		t.Fatalf("after the admin forgot th-b: facts = %v, want %v", got, want)
	}
}
