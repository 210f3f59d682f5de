package e2e

import (
	"context"
	"testing"

	"github.com/usermemory/usermemory/internal/factapi"
	"github.com/usermemory/usermemory/producer"
)

// TestContextTurnsReachTheModelThroughTheQueue sends, through the queue
// and the real extractor, a "yes" whose question is in the context turns:
// the stand-in reads it as the answer, so the context reached the model.
// The same message without its context states nothing.
func TestContextTurnsReachTheModelThroughTheQueue(t *testing.T) {
	st.Converse().Reset()
	earlier := factapi.Turns("Olá! Can you help me write a birthday message for my grandmother?",
		"Of course! Shall I keep answering in Portuguese from now on?")
	for _, withContext := range []bool{true, false} {
		user := newUser("context")
		tok := userToken(t, tenant, user)
		sendTurns(t, user, "th-1", 0, 2, earlier[0].Text, earlier[1].Text)
		m := producer.Message{TenantID: tenant, UserID: user, ThreadID: "th-1", PreviousTurnCount: 4, TurnCount: 6,
			Turns: factapi.Turns("yes please", "Combinado!")}
		if withContext {
			m.ContextTurns = earlier
		}
		if err := gateway.Send(context.Background(), m); err != nil {
			t.Fatalf("send: %v", err)
		}
		if withContext {
			waitFacts(t, tok, map[string]string{"preferred_language": "Portuguese"})
			continue
		}
		waitQueueEmpty(t, st.Info.QueueURL)
		if got := facts(t, "/v1/me/facts", tok); len(got) != 0 {
			t.Errorf("without context: facts = %v, want none: a bare yes states nothing", got)
		}
	}
}
