package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/usermemory/usermemory/producer"
)

// TestRedriveSkipsErasedUsers runs scripts/redrive against the stack's
// queues and table as an operator would: of two dead letters, the one of a
// user erased after it was sent is deleted, the other goes back to the
// extraction queue and the stack's extractor learns from it.
func TestRedriveSkipsErasedUsers(t *testing.T) {
	st.Converse().Reset()
	ctx := context.Background()
	erased, kept := newUser("redrive-erased"), newUser("redrive-kept")
	r := api.Call(t, http.MethodDelete, "/v1/users/"+erased, adminToken(t, tenant, newUser("admin")), nil)
	var answer struct{ ErasedAt time.Time }
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &answer) != nil {
		t.Fatalf("erase = %d %s", r.Status, r.Body)
	}
	dead := producer.New(sqsAPI, st.Info.DLQURL)
	for _, m := range []producer.Message{
		{TenantID: tenant, UserID: erased, ThreadID: "th-1", TurnCount: 2, SentAt: answer.ErasedAt.Add(-time.Minute),
			Turns: []producer.Turn{{Role: "user", Text: "I'm Ada."}, {Role: "assistant", Text: "Hi Ada"}}},
		{TenantID: tenant, UserID: kept, ThreadID: "th-1", TurnCount: 2,
			Turns: []producer.Turn{{Role: "user", Text: "I'm Bea."}, {Role: "assistant", Text: "Hi Bea"}}},
	} {
		if err := dead.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", "./scripts/redrive", "-region", st.Info.Region, "-endpoint", st.Info.AWSEndpoint,
		"-queue-url", st.Info.QueueURL, "-dlq-url", st.Info.DLQURL, "-table", st.Info.TableName)
	cmd.Dir, _ = filepath.Abs(filepath.Join("..", ".."))
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("redrive: %v\n%s", err, out)
	}
	var counts map[string]int
	if err := json.Unmarshal(out, &counts); err != nil || counts["redriven"] != 1 || counts["droppedErased"] != 1 {
		t.Fatalf("redrive printed %s, want 1 redriven and 1 dropped for an erased user", out)
	}
	waitFacts(t, userToken(t, tenant, kept), map[string]string{"name": "Bea"})
	if got := facts(t, "/v1/me/facts", userToken(t, tenant, erased)); len(got) != 0 {
		t.Errorf("the erased user has %v after the redrive, want nothing", got)
	}
	if n := queueDepth(t, st.Info.DLQURL); n != 0 {
		t.Errorf("the dead-letter queue holds %d messages after the redrive, want none", n)
	}
}
