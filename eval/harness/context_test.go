package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/eval/gold"
	"github.com/usermemory/usermemory/eval/harness"
	"github.com/usermemory/usermemory/internal/fakebedrock"
	"github.com/usermemory/usermemory/memory"
)

// withoutContext is a model that never sees the context section: it
// passes only the new turns on, as the extractor did before context.
type withoutContext struct{ memory.Model }

func (m withoutContext) Extract(ctx context.Context, req memory.ModelRequest) (memory.ModelAnswer, error) {
	if _, recent, ok := strings.Cut(req.Transcript, memory.NewTurnsHeading+"\n\n"); ok {
		req.Transcript = recent
	}
	return m.Model.Extract(ctx, req)
}

// TestContextGoldConversationsHingeOnContext runs the gold conversations
// whose answer hinges on context turns through the real bedrock adapter
// and the stand-in: the fact the user's "yes" states is kept when the
// context reaches the model and missed when it does not, and the trip in
// the context is never kept.
func TestContextGoldConversationsHingeOnContext(t *testing.T) {
	s, err := fakebedrock.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.URL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	model := bedrock.New(client)
	convs, err := gold.Load(gold.Default())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]gold.Conversation{}
	for _, c := range convs {
		byID[c.ID] = c
	}
	cfg := memory.Config{CheapModelID: "us.amazon.nova-micro-v1:0"}
	tests := []struct {
		id, key, value string
		needsContext   bool
	}{
		{"context-yes-portuguese", "preferred_language", "Portuguese", true},
		{"context-yes-nickname", "name", "Bea", true},
		{"context-trip-in-context", "home_city", "Porto", false},
	}
	for _, tt := range tests {
		conv, ok := byID[tt.id]
		if !ok {
			t.Fatalf("no gold conversation %s", tt.id)
		}
		for _, m := range []memory.Model{model, withoutContext{model}} {
			_, blind := m.(withoutContext)
			got, err := harness.Run(context.Background(), m, cfg, conv)
			if err != nil {
				t.Fatal(err)
			}
			facts := map[string]string{}
			for _, f := range got.Facts {
				facts[f.Key] = f.Value
			}
			if want := !blind || !tt.needsContext; (facts[tt.key] == tt.value) != want {
				t.Errorf("%s, context blinded %v: facts %v; want %s=%s kept: %v", tt.id, blind, facts, tt.key, tt.value, want)
			}
			for _, v := range facts {
				if strings.Contains(strings.ToLower(v), "madrid") {
					t.Errorf("%s, context blinded %v: the trip in the context was kept: %v", tt.id, blind, facts)
				}
			}
		}
	}
}
