package httpapi

import (
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
)

// NewHandlerFunc builds a function's handler over the store.
type NewHandlerFunc func(store *memory.Store, auth Auth, log *slog.Logger) (*Handler, error)

// Run is the whole main of a fact API function: once per execution
// environment it reads and validates the settings from the environment,
// builds the DynamoDB client, the repository and the store, then the
// handler with newHandler, and hands it to the Lambda runtime. A wrong
// configuration is logged, saying why, and the process exits before
// lambda.Start.
func Run(newHandler NewHandlerFunc) {
	log := NewLogger(os.Stdout)
	h, err := wire(newHandler, log)
	if err != nil {
		log.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

func wire(newHandler NewHandlerFunc, log *slog.Logger) (*Handler, error) {
	settings, err := setup.FromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := setup.AWSConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = setup.Endpoint(os.Getenv, setup.ServiceDynamoDB)
	})
	fence := time.Duration(settings.FenceDays) * 24 * time.Hour
	repo := dynamorepo.New(db, settings.TableName, dynamorepo.WithFenceLifetime(fence))
	store, err := memory.New(repo, settings.Memory)
	if err != nil {
		return nil, err
	}
	return newHandler(store, AuthOf(settings), log)
}
