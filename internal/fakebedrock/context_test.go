package fakebedrock_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// recording is a bedrock.API that keeps the text of every user message
// the adapter sends, and passes the call on.
type recording struct {
	api  bedrock.API
	mu   sync.Mutex
	sent []string
}

func (r *recording) Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	r.mu.Lock()
	for _, m := range in.Messages {
		for _, c := range m.Content {
			if t, ok := c.(*types.ContentBlockMemberText); ok && m.Role == types.ConversationRoleUser {
				r.sent = append(r.sent, t.Value)
			}
		}
	}
	r.mu.Unlock()
	return r.api.Converse(ctx, in, optFns...)
}

// TestContextTurnsReachTheModel runs an extraction through the real store
// and bedrock adapter against the stand-in: the context turns are in the
// request, marked as already read, and the stand-in reads the "yes" of the
// new turns as the answer to the question in them; without the context
// the same "yes" states nothing, and a fact in the context alone is not
// extracted.
func TestContextTurnsReachTheModel(t *testing.T) {
	_, client := start(t)
	rec := &recording{api: client}
	store, err := memory.New(memorytest.NewRepo(), memory.Config{CheapModelID: modelID}, memory.WithModel(bedrock.New(rec)))
	if err != nil {
		t.Fatal(err)
	}
	question := "Shall I keep answering in Portuguese from now on?"
	tests := []struct {
		user    string
		context []memory.Turn
		want    map[string]string
	}{
		{"u-with", []memory.Turn{{Role: memory.RoleUser, Text: "I live in Lisbon. Olá!"}, {Role: memory.RoleAssistant, Text: "Olá! " + question}},
			map[string]string{"preferred_language": "Portuguese"}},
		{"u-without", nil, map[string]string{}},
	}
	for i, tt := range tests {
		sc := memory.Scope{TenantID: "acme", UserID: tt.user}
		res, err := store.Extract(context.Background(), memory.ExtractRequest{Scope: sc, ThreadID: "th-1",
			PreviousTurnCount: 5, TurnCount: 7, ContextTurns: tt.context,
			Turns: []memory.Turn{{Role: memory.RoleUser, Text: "yes"}, {Role: memory.RoleAssistant, Text: "Combinado!"}}})
		if err != nil || res.ModelCalls != 1 {
			t.Fatalf("%s: Extract = %+v, %v", tt.user, res, err)
		}
		got := map[string]string{}
		for _, f := range res.Facts {
			got[f.Key] = f.Value
		}
		if len(got) != len(tt.want) || got["preferred_language"] != tt.want["preferred_language"] {
			t.Errorf("%s: facts %v, want %v", tt.user, got, tt.want)
		}
		sent := rec.sent[i]
		if hasContext := strings.HasPrefix(sent, memory.ContextHeading) && strings.Contains(sent, question); hasContext != (tt.context != nil) {
			t.Errorf("%s: the user message sent:\n%s", tt.user, sent)
		}
	}
}
