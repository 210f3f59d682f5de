package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/producer"
)

func TestConversationEndsWithTheRightFacts(t *testing.T) {
	st.Converse().Reset()
	user := newUser("conv")
	tok := userToken(t, tenant, user)
	// The first answer of a thread is due for extraction.
	sendTurns(t, user, "th-1", 0, 2, "Hi, I'm Ana and I live in Lisbon.", "Hello Ana!")
	waitFacts(t, tok, map[string]string{"name": "Ana", "home_city": "Lisbon"})
	// Turns 3 and 4 cross no multiple of ExtractEveryTurns (6): not due,
	// no model call, nothing changes.
	calls, _ := st.Converse().Calls()
	sendTurns(t, user, "th-1", 2, 4, "Please answer in Portuguese.", "Claro!")
	waitQueueEmpty(t, st.Info.QueueURL)
	if n, _ := st.Converse().Calls(); n != calls {
		t.Errorf("model calls = %d after a message that is not due, want %d", n, calls)
	}
	// Turn 6 is due: the turns since the last extraction are read.
	sendTurns(t, user, "th-1", 4, 6, "Please answer in Portuguese.", "Claro!", "Also, forget where I live.", "Done.")
	waitFacts(t, tok, map[string]string{"name": "Ana", "preferred_language": "Portuguese"})
	// A redelivered message (same thread and turns) changes nothing and
	// calls no model.
	calls, _ = st.Converse().Calls()
	sendTurns(t, user, "th-1", 4, 6, "I live in Porto now.", "Noted.")
	waitQueueEmpty(t, st.Info.QueueURL)
	if n, _ := st.Converse().Calls(); n != calls {
		t.Errorf("model calls = %d after a redelivery, want %d", n, calls)
	}
	waitFacts(t, tok, map[string]string{"name": "Ana", "preferred_language": "Portuguese"})
}

func TestUserEditsForgetsOneForgetsAll(t *testing.T) {
	user := newUser("edit")
	tok := userToken(t, tenant, user)
	api.Put(t, tok, "city", "Porto")
	api.Put(t, tok, "city", "Lisbon")
	api.Put(t, tok, "role", "nurse")
	if got, want := facts(t, "/v1/me/facts", tok), map[string]string{"city": "Lisbon", "role": "nurse"}; !maps.Equal(got, want) {
		t.Fatalf("after edits: facts = %v, want %v", got, want)
	}
	// Another tenant's token for the same user ID sees none of it.
	if got := facts(t, "/v1/me/facts", userToken(t, "globex", user)); len(got) != 0 {
		t.Errorf("another tenant reads %v, want nothing", got)
	}
	// Another user of the tenant, whatever the path says, sees none of it.
	other := userToken(t, tenant, newUser("other"))
	if got := facts(t, "/v1/me/facts", other); len(got) != 0 {
		t.Errorf("another user reads %v, want nothing", got)
	}
	if r := api.Call(t, http.MethodDelete, "/v1/me/facts/city", tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE one = %d %s, want 204", r.Status, r.Body)
	}
	if got, want := facts(t, "/v1/me/facts", tok), map[string]string{"role": "nurse"}; !maps.Equal(got, want) {
		t.Fatalf("after forgetting one: facts = %v, want %v", got, want)
	}
	if r := api.Call(t, http.MethodDelete, "/v1/me/facts/city", tok, nil); r.Status != http.StatusNoContent {
		t.Errorf("DELETE of a missing key = %d, want 204", r.Status)
	}
	if r := api.Call(t, http.MethodDelete, "/v1/me/facts", tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE all = %d %s, want 204", r.Status, r.Body)
	}
	if got := facts(t, "/v1/me/facts", tok); len(got) != 0 {
		t.Fatalf("after forgetting all: facts = %v, want none", got)
	}
	// Bad input is a 4xx problem, never a 500.
	r := api.Call(t, http.MethodPut, "/v1/me/facts/city", tok, map[string]string{"value": strings.Repeat("x", 401)})
	if r.Status < 400 || r.Status >= 500 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("PUT of a too long value = %d %s %s, want a 4xx problem", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
}

// slowFirst is how long the stand-in holds the first extraction of the
// order tests: well under the stack's 2 s visibility timeout, so that the
// message is not redelivered meanwhile.
const slowFirst = 1500 * time.Millisecond

// holdFirstExtraction sends a user's first message, whose model call the
// stand-in holds for slowFirst, and a second one of the same user (so of
// the same FIFO message group) while the first is with the model.
func holdFirstExtraction(t *testing.T, user string) {
	t.Helper()
	st.Converse().Script(fakebedrock.Slow(slowFirst))
	sendTurns(t, user, "th-a", 0, 2, "I'm Ana and I live in Lisbon.", "Hi Ana")
	waitFor(t, "the first extraction with the model", func() bool { return st.Converse().Active() == 1 })
	sendTurns(t, user, "th-b", 0, 2, "Please answer in Portuguese.", "Claro")
}

func TestOneUsersMessagesRunInOrder(t *testing.T) {
	st.Converse().Reset()
	user := newUser("order")
	tok := userToken(t, tenant, user)
	holdFirstExtraction(t, user)
	// While the first is held, the second stays in the queue.
	for end := time.Now().Add(slowFirst / 2); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if a := st.Converse().Active(); a > 1 {
			t.Fatalf("%d extractions of one user with the model at once, want 1", a)
		}
	}
	waitFacts(t, tok, map[string]string{"name": "Ana", "home_city": "Lisbon", "preferred_language": "Portuguese"})
	n, calls := st.Converse().Calls()
	if n != 2 || len(calls) != 2 {
		t.Fatalf("model calls = %d, want 2", n)
	}
	first, second := calls[0], calls[1]
	if second.At.Before(first.At) {
		first, second = second, first
	}
	if first.Done.Sub(first.At) < slowFirst {
		t.Errorf("the first call took %s, want the scripted %s", first.Done.Sub(first.At), slowFirst)
	}
	if second.At.Before(first.Done) {
		t.Errorf("the second message reached the model %s before the first was answered", first.Done.Sub(second.At))
	}
}

func TestAdminErasesUserWhileAMessageWaits(t *testing.T) {
	st.Converse().Reset()
	user := newUser("erase")
	tok := userToken(t, tenant, user)
	api.Put(t, tok, "city", "Porto")
	// The first extraction of the user is with the model; the second
	// message waits behind it in the user's FIFO group.
	holdFirstExtraction(t, user)
	admin := adminToken(t, tenant, newUser("admin"))
	r := api.Call(t, http.MethodDelete, "/v1/users/"+user, admin, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("erase = %d %s, want 200", r.Status, r.Body)
	}
	// The erasure came while the first extraction was still with the
	// model and before the second reached it.
	answered, _ := st.Converse().Calls()
	switch active := st.Converse().Active(); {
	case active != 1:
		t.Fatalf("at the erasure the first extraction was no longer with the model (%d calls answered, %d in progress): a loaded machine may need a longer slowFirst", answered, active)
	case answered != 0:
		t.Fatalf("at the erasure %d model calls were answered while the first extraction was still with the model: the second message of the user did not wait", answered)
	}
	var erased struct {
		RemovedFacts int `json:"removedFacts"`
	}
	if err := json.Unmarshal(r.Body, &erased); err != nil || erased.RemovedFacts != 1 {
		t.Errorf("erase answered %s, want removedFacts 1", r.Body)
	}
	waitQueueEmpty(t, st.Info.QueueURL)
	if got := facts(t, "/v1/me/facts", tok); len(got) != 0 {
		t.Errorf("after the erasure and the waiting messages: facts = %v, want none", got)
	}
	if got := facts(t, "/v1/users/"+user+"/facts", admin); len(got) != 0 {
		t.Errorf("the admin reads %v after the erasure, want none", got)
	}
	// The second message, sent before the erasure and handled after it,
	// never reached the model: only the first extraction did.
	if n, _ := st.Converse().Calls(); n != 1 {
		t.Errorf("model calls = %d, want 1: the message that waited behind the erasure must be dropped unread", n)
	}
}

func TestPoisonMessageLandsInTheDeadLetterQueue(t *testing.T) {
	st.Converse().Reset()
	user := newUser("poison")
	tok := userToken(t, tenant, user)
	ctx := context.Background()
	poisonGroup := producer.GroupID(tenant, newUser("poisoned"))
	// One batch: a message that is not JSON and a good one, in two groups.
	good, err := gateway.Build(producer.Message{TenantID: tenant, UserID: user, ThreadID: "th-1", TurnCount: 2,
		Turns: []producer.Turn{{Role: "user", Text: "I'm Bea."}, {Role: "assistant", Text: "Hi Bea"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sqsAPI.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{
		QueueUrl: aws.String(st.Info.QueueURL),
		Entries: []sqstypes.SendMessageBatchRequestEntry{
			{Id: aws.String("poison"), MessageBody: aws.String("{not json"), MessageGroupId: aws.String(poisonGroup), MessageDeduplicationId: aws.String(newUser("p"))},
			{Id: aws.String("good"), MessageBody: good.MessageBody, MessageGroupId: good.MessageGroupId, MessageDeduplicationId: good.MessageDeduplicationId, MessageAttributes: good.MessageAttributes},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFacts(t, tok, map[string]string{"name": "Bea"})
	// maxReceiveCount receives, one visibility timeout apart, then the
	// queue's redrive moves it.
	var body string
	waitForWithin(t, "the poison message in the dead-letter queue", 60*time.Second, func() bool {
		out, err := sqsAPI.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(st.Info.DLQURL), WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			body = aws.ToString(m.Body)
			_, _ = sqsAPI.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(st.Info.DLQURL), ReceiptHandle: m.ReceiptHandle})
			return true
		}
		return false
	})
	if body != "{not json" {
		t.Errorf("dead-letter body = %q, want the poison message", body)
	}
}

func TestBedrockFaultsLeaveFactsUntouched(t *testing.T) {
	st.Converse().Reset()
	user := newUser("faults")
	tok := userToken(t, tenant, user)
	api.Put(t, tok, "home_city", "Porto")
	want := map[string]string{"home_city": "Porto"}
	faults := []fakebedrock.Step{
		fakebedrock.AccessDenied(),
		fakebedrock.ToolChoiceRefused(),
		{Input: json.RawMessage(`{"operations":"not a list"}`)},
		{StopReason: "max_tokens"},
		{NoToolUse: true, Text: "I think the user lives in Lisbon."},
		{Operations: []fakebedrock.Operation{{Op: "SET", Key: "", Value: "Lisbon"}}},
	}
	for i, f := range faults {
		steps := []fakebedrock.Step{f}
		if f.StopReason == "max_tokens" {
			// Asked twice: at bedrock.FirstMaxTokens, and at what the caps allow.
			steps = append(steps, f)
		}
		st.Converse().Script(steps...)
		sendTurns(t, user, "th-"+string(rune('a'+i)), 0, 2, "I'm Ana and I live in Lisbon.", "Hi")
		waitQueueEmpty(t, st.Info.QueueURL)
		if p := st.Converse().Pending(); p != 0 {
			t.Fatalf("fault %d: the model was not called (%d steps pending)", i, p)
		}
		if got := facts(t, "/v1/me/facts", tok); !maps.Equal(got, want) {
			t.Fatalf("after fault %d (%+v): facts = %v, want %v", i, f, got, want)
		}
	}
	// Throttling is retried, and then the answer is merged.
	st.Converse().Script(fakebedrock.Throttle())
	sendTurns(t, user, "th-z", 0, 2, "I live in Lisbon.", "Noted")
	waitFacts(t, tok, map[string]string{"home_city": "Lisbon"})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, what, deadline, cond)
}

func waitForWithin(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited %s for %s", d, what)
}
