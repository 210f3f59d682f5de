package bedrock_test

import (
	"context"
	"testing"
	"time"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// TestStoreExtractThroughStandIn runs the core's extraction on this model,
// the real client and the stand-in: the operations reach the stored facts,
// a later forget removes one, and a malformed answer writes nothing.
func TestStoreExtractThroughStandIn(t *testing.T) {
	for _, mode := range []bedrock.OutputMode{bedrock.OutputTool, bedrock.OutputJSON} {
		t.Run(string(mode), func(t *testing.T) {
			s, url := standIn(t)
			m, _ := newModel(url, bedrock.WithOutputMode(mode))
			repo := memorytest.NewRepo()
			now := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
			store, err := memory.New(repo, memory.Config{CheapModelID: modelID}, memory.WithModel(m), memory.WithClock(func() time.Time { return now }))
			if err != nil {
				t.Fatal(err)
			}
			sc := memory.Scope{TenantID: "acme", UserID: "u-123"}
			ctx := context.Background()
			extract := func(thread string, prev, count int, turns ...memory.Turn) memory.ExtractResult {
				t.Helper()
				res, err := store.Extract(ctx, memory.ExtractRequest{Scope: sc, ThreadID: thread, PreviousTurnCount: prev, TurnCount: count, Turns: turns})
				if err != nil {
					t.Fatalf("Extract: %v", err)
				}
				return res
			}
			keys := func(facts []memory.Fact) map[string]string {
				out := map[string]string{}
				for _, f := range facts {
					out[f.Key] = f.Value
				}
				return out
			}

			res := extract("th-1", 0, 2,
				memory.Turn{Role: memory.RoleUser, Text: "Hi, I'm Ana from Lisbon, answer in Portuguese"},
				memory.Turn{Role: memory.RoleAssistant, Text: "Olá Ana!"})
			if res.Outcome != memory.OutcomeChanged || res.Sets != 3 || res.Usage.InputTokens == 0 {
				t.Fatalf("first extraction = %+v, want 3 sets and usage", res)
			}
			if got := keys(res.Facts); got["name"] != "Ana" || got["home_city"] != "Lisbon" || got["preferred_language"] != "Portuguese" {
				t.Errorf("facts = %v", got)
			}

			res = extract("th-2", 0, 2, memory.Turn{Role: memory.RoleUser, Text: "Please forget where I live. I work as a nurse"})
			if got := keys(res.Facts); res.Outcome != memory.OutcomeChanged || got["home_city"] != "" || got["role"] != "nurse" || len(got) != 3 {
				t.Errorf("second extraction = %s %v", res.Outcome, got)
			}

			// Stopped at max_tokens twice: at FirstMaxTokens, and again at
			// what the caps allow.
			s.Script(fakebedrock.Step{StopReason: "max_tokens"}, fakebedrock.Step{StopReason: "max_tokens"})
			res = extract("th-3", 0, 2, memory.Turn{Role: memory.RoleUser, Text: "I moved to Porto"})
			if res.Outcome != memory.OutcomeBadAnswer || memory.ErrorCode(res.Reported) != memory.CodeBadAnswer || keys(res.Facts)["home_city"] != "" {
				t.Errorf("malformed answer = %s %v %v, want bad_answer and nothing written", res.Outcome, res.Reported, keys(res.Facts))
			}

			s.Script(fakebedrock.AccessDenied())
			res = extract("th-3", 0, 2, memory.Turn{Role: memory.RoleUser, Text: "I moved to Porto"})
			if res.Outcome != memory.OutcomeModelFailed || memory.ErrorCode(res.Reported) != memory.CodeModelFailed {
				t.Errorf("access denied = %s %v, want model_failed", res.Outcome, res.Reported)
			}

			res = extract("th-3", 0, 2, memory.Turn{Role: memory.RoleUser, Text: "I moved to Porto"})
			if res.Outcome != memory.OutcomeChanged || keys(res.Facts)["home_city"] != "Porto" {
				t.Errorf("third extraction = %s %v", res.Outcome, keys(res.Facts))
			}
			if n, _ := s.Calls(); n != 6 {
				t.Errorf("stand-in calls = %d, want 6", n)
			}
		})
	}
}
