package bedrock_test

import (
	"cmp"
	"context"
	"log"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/memory"
)

// This is how a function's main builds the model once, before
// lambda.Start, and hands it to the store.
func ExampleNew() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatalf("load AWS config: %v", err)
	}
	mode, err := bedrock.ParseOutputMode(cmp.Or(os.Getenv("MODEL_OUTPUT_MODE"), "tool"))
	if err != nil {
		log.Fatal(err)
	}
	model := bedrock.New(bedrockruntime.NewFromConfig(cfg),
		bedrock.WithOutputMode(mode),
		bedrock.WithAttemptTimeout(20*time.Second),
		bedrock.WithObserver(func(c bedrock.Call) {
			// IDs, counts and durations only: never the prompt or the answer.
			log.Printf("model=%s attempts=%d retried=%v took=%v stop=%s in=%d out=%d",
				c.ModelID, c.Attempts, c.Retried, c.Duration, c.StopReason, c.Usage.InputTokens, c.Usage.OutputTokens)
		}))
	var _ memory.Model = model
}
