package webtest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/producer"
)

// op is one operation of a scripted model answer, in the operations
// tool's JSON form: evidence (the user's words), validUntil and category.
type op = fakebedrock.Operation

// learn sends, as a gateway does, one extraction message of user's thread
// with the user's text and an answer, has the Bedrock stand-in answer ops,
// and waits until the extractor stored waitKey, as a fact or a pending
// fact.
func learn(t *testing.T, tok, user, thread, title, said, waitKey string, ops ...op) {
	t.Helper()
	input, err := json.Marshal(map[string]any{"operations": ops})
	if err != nil {
		t.Fatal(err)
	}
	st.Converse().Script(fakebedrock.Step{Input: input})
	gateway := producer.New(sqs.New(sqs.Options{
		Region: st.Info.Region, Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(st.Info.AWSEndpoint),
	}), st.Info.QueueURL)
	err = gateway.Send(context.Background(), producer.Message{TenantID: "acme", UserID: user, ThreadID: thread, ThreadTitle: title, TurnCount: 2,
		Turns: []producer.Turn{{Role: "user", Text: said}, {Role: "assistant", Text: "Good to know!"}}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !holds(t, tok, waitKey); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the extraction did not store %s within 30 s", waitKey)
		}
	}
}

// holds reports whether the user of tok has key as a fact or a pending
// fact.
func holds(t *testing.T, tok, key string) bool {
	t.Helper()
	return factValues(t, tok, "/v1/me/facts")[key] != "" || pendingValues(t, tok)[key] != ""
}

// pendingValues returns the pending facts of the holder of tok, key to
// value.
func pendingValues(t *testing.T, tok string) map[string]string {
	t.Helper()
	status, body := api(t, tok, http.MethodGet, "/v1/me/facts", "")
	if status != http.StatusOK {
		t.Fatalf("GET /v1/me/facts: %d %v", status, body)
	}
	pending, ok := body["pending"].([]any)
	if !ok {
		t.Fatalf("GET /v1/me/facts has no pending list: %v", body)
	}
	out := map[string]string{}
	for _, f := range pending {
		m := f.(map[string]any)
		out[m["key"].(string)] = m["value"].(string)
	}
	return out
}

// nextFriday is the date of the next Friday after today (UTC), as a
// validUntil: "I'm in Paris until Friday".
func nextFriday() time.Time {
	d := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	for d.Weekday() != time.Friday {
		d = d.AddDate(0, 0, 1)
	}
	return d
}
