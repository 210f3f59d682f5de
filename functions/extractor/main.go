// Command extractor is the SQS-triggered Lambda function that reads the
// extraction messages gateways send after every answer (version 1 of
// schema/extraction-message.v1.json), runs isExtractDue, has Bedrock's
// cheap model extract facts when an extraction is due, and merges them into
// the user's record in DynamoDB. It answers with partial batch failures
// (ReportBatchItemFailures), logs one JSON line per record and writes
// CloudWatch Embedded Metric Format lines; see docs/extractor.md.
//
// Environment: those of package setup (TABLE_NAME, EXTRACT_EVERY_TURNS,
// CHEAP_MODEL_ID, TENANT_DAILY_MODEL_CALLS, MODEL_OUTPUT_MODE, …).
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/bedrock"
	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	h, err := fromEnv(os.Getenv, logger, os.Stdout)
	if err != nil {
		logger.Error("extractor: cannot start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

// fromEnv builds the handler once per execution environment: settings,
// SDK clients, repository, model, budget and store.
func fromEnv(getenv func(string) string, logger *slog.Logger, metrics io.Writer) (*Handler, error) {
	settings, err := setup.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	mode, err := bedrock.ParseOutputMode(settings.ModelOutputMode)
	if err != nil {
		return nil, err
	}
	cfg, err := setup.AWSConfig(getenv)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = setup.Endpoint(getenv, setup.ServiceDynamoDB)
	})
	repo := dynamorepo.New(db, settings.TableName, dynamorepo.WithFenceLifetime(time.Duration(settings.FenceDays)*24*time.Hour))
	modelClient := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		o.BaseEndpoint = setup.Endpoint(getenv, setup.ServiceBedrockRuntime)
	})
	model := bedrock.New(modelClient,
		bedrock.WithOutputMode(mode),
		bedrock.WithAttemptTimeout(settings.ModelAttemptTimeout),
		bedrock.WithAllowedModels(settings.AllowedModelIDs...),
		bedrock.WithObserver(modelCallLogger(logger)))
	opts := []memory.Option{memory.WithModel(model)}
	if settings.TenantDailyModelCalls > 0 {
		budget := dynamorepo.NewBudget(db, settings.TableName, settings.TenantDailyModelCalls,
			dynamorepo.WithErrorHandler(func(err error) {
				logger.Warn("budget storage failed: the call is refused", slog.String("reason", errorClass(err)))
			}))
		opts = append(opts, memory.WithUsageGate(budget))
	}
	store, err := memory.New(repo, settings.Memory, opts...)
	if err != nil {
		return nil, fmt.Errorf("extractor: %w", err)
	}
	return NewHandler(store, WithLogger(logger), WithMetrics(metrics))
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
