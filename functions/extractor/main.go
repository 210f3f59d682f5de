// Command extractor is the SQS-triggered Lambda function that reads the
// extraction messages gateways send after every answer (version 1 of
// schema/extraction-message.v1.json), runs isExtractDue, has Bedrock's
// cheap model extract facts when an extraction is due, and merges them into
// the user's record in DynamoDB. On the same queue it reads the import
// messages of the import route (schema/import-message.v1.json): a memory
// list pasted from another assistant, which memory.Store.Import reads
// into pending facts for the user's review. It answers with partial batch failures
// (ReportBatchItemFailures), logs one JSON line per record and writes
// CloudWatch Embedded Metric Format lines; see docs/extractor.md.
//
// Environment: those of package setup (TABLE_NAME, EXTRACT_EVERY_TURNS,
// CHEAP_MODEL_ID, TENANT_DAILY_MODEL_CALLS, MODEL_OUTPUT_MODE, …), and the
// idle read's IDLE_READ_SECONDS, IDLE_QUEUE_URL and IDLE_QUEUE_ARN
// ([IdleFromEnv]).
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/wire"
	"github.com/usermemory/usermemory/memory"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	h, err := fromEnv(context.Background(), os.Getenv, logger, os.Stdout)
	if err != nil {
		logger.Error("extractor: cannot start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

// fromEnv builds the handler once per execution environment: the settings
// read through getenv, the SDK clients (their configuration from the
// process environment, see wire.Load), the repository, the model, the
// budget and the store.
func fromEnv(ctx context.Context, getenv func(string) string, logger *slog.Logger, metrics io.Writer) (*Handler, error) {
	env, err := wire.Load(ctx, getenv)
	if err != nil {
		return nil, err
	}
	mode, err := bedrock.ParseOutputMode(env.Settings.ModelOutputMode)
	if err != nil {
		return nil, err
	}
	modelClient := bedrockruntime.NewFromConfig(env.AWS)
	model := bedrock.New(modelClient,
		bedrock.WithOutputMode(mode),
		bedrock.WithAttemptTimeout(env.Settings.ModelAttemptTimeout),
		bedrock.WithAllowedModels(env.Settings.AllowedModelIDs...),
		bedrock.WithObserver(modelCallLogger(logger)))
	opts := []memory.Option{memory.WithModel(model), memory.WithImportCalls(memory.ImportParallelCalls)}
	if n := env.Settings.TenantDailyModelCalls; n > 0 {
		budget := dynamorepo.NewBudget(env.DynamoDB, env.Settings.TableName, n,
			dynamorepo.WithErrorHandler(func(err error) {
				logger.Warn("budget storage failed: the call is refused", slog.String("reason", errorClass(err)))
			}))
		opts = append(opts, memory.WithUsageGate(budget))
	}
	store, err := env.Store(opts...)
	if err != nil {
		return nil, fmt.Errorf("extractor: %w", err)
	}
	idle, err := IdleFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	return NewHandler(store, WithLogger(logger), WithMetrics(metrics),
		WithIdleRead(idle.After, idle.QueueURL, idle.QueueARN, sqs.NewFromConfig(env.AWS)))
}

// modelCallLogger logs what each call of the cheap model did: attempts,
// retried error codes, stop reason, tokens and duration; never text.
func modelCallLogger(logger *slog.Logger) func(bedrock.Call) {
	return func(c bedrock.Call) {
		attrs := []slog.Attr{
			slog.String("modelId", c.ModelID),
			slog.String("mode", string(c.Mode)),
			slog.Int("attempts", c.Attempts),
			slog.Any("retried", c.Retried),
			slog.String("stopReason", c.StopReason),
			slog.Int("inputTokens", c.Usage.InputTokens),
			slog.Int("outputTokens", c.Usage.OutputTokens),
			slog.Float64("durationMs", ms(c.Duration)),
		}
		if c.Err != nil {
			attrs = append(attrs, slog.String("reason", errorClass(c.Err)))
		}
		logger.LogAttrs(context.Background(), slog.LevelInfo, "model call", attrs...)
	}
}
