package main

import (
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
)

// main wires the function once per execution environment and fails fast,
// saying why, when the configuration is wrong.
func main() {
	log := httpapi.NewLogger(os.Stdout)
	settings, err := setup.FromEnv(os.Getenv)
	if err != nil {
		log.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	cfg, err := setup.AWSConfig(os.Getenv)
	if err != nil {
		log.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = setup.Endpoint(os.Getenv, setup.ServiceDynamoDB)
	})
	repo := dynamorepo.New(db, settings.TableName, dynamorepo.WithFenceLifetime(time.Duration(settings.FenceDays)*24*time.Hour))
	store, err := memory.New(repo, settings.Memory)
	if err != nil {
		log.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	h, err := newHandler(store, httpapi.AuthOf(settings), log)
	if err != nil {
		log.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}
