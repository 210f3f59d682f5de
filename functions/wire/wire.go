// Package wire builds what the functions run on, once per execution
// environment, before lambda.Start: the settings read from the
// environment, the AWS SDK configuration, the DynamoDB client, the
// repository and the store. It is the part of main that the functions
// share; the handlers know nothing of it.
package wire

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/setup"
	"github.com/usermemory/usermemory/memory"
)

// Env is what a function runs on, built by [Load].
type Env struct {
	// Settings are the function's settings, validated.
	Settings setup.Settings
	// AWS is the SDK configuration (see setup.AWSConfig).
	AWS aws.Config
	// DynamoDB is the client of the records' table.
	DynamoDB *dynamodb.Client
	// Repo is the repository over the table Settings name.
	Repo *dynamorepo.Repo
}

// Load reads the settings through getenv (os.Getenv in main), loads the
// SDK configuration from the process environment (setup.AWSConfig) and
// builds the DynamoDB client (see [DynamoDB]) and the repository. The error says which
// setting is wrong.
func Load(ctx context.Context, getenv func(string) string) (*Env, error) {
	settings, err := setup.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := setup.AWSConfig()
	if err != nil {
		return nil, err
	}
	db := DynamoDB(cfg, setup.DynamoDBAttemptTimeout)
	fence := time.Duration(settings.FenceDays) * 24 * time.Hour
	return &Env{
		Settings: settings,
		AWS:      cfg,
		DynamoDB: db,
		Repo:     dynamorepo.New(db, settings.TableName, dynamorepo.WithFenceLifetime(fence)),
	}, nil
}

// DynamoDB returns the DynamoDB client of cfg whose every attempt is
// bounded by attempt (see setup.DynamoDBAttemptTimeout): an attempt that
// hangs fails with a timeout, which the SDK's standard retryer retries
// within the caller's deadline.
func DynamoDB(cfg aws.Config, attempt time.Duration) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(attempt)
	})
}

// Store returns the store over e.Repo with the settings' caps and opts.
// The error is the store's refusal of the configuration.
func (e *Env) Store(opts ...memory.Option) (*memory.Store, error) {
	return memory.New(e.Repo, e.Settings.Memory, append(setup.StoreOptions(), opts...)...)
}

// FactAPI builds the handler of a fact API function: [Load], the store,
// then newHandler with the settings' authorization and log.
func FactAPI(ctx context.Context, getenv func(string) string, newHandler httpapi.NewHandlerFunc, log *slog.Logger) (*httpapi.Handler, error) {
	return API(ctx, getenv, func(context.Context, *Env, func(string) string) (httpapi.NewHandlerFunc, error) {
		return newHandler, nil
	}, log)
}

// BuildFunc returns the NewHandlerFunc of a function that needs more than
// the store (a queue client, a setting of its own), built from env and
// the settings getenv reads; its error says which setting is wrong.
type BuildFunc func(ctx context.Context, env *Env, getenv func(string) string) (httpapi.NewHandlerFunc, error)

// API builds the handler of an API function whose handler needs more than
// the store: [Load], the store, build, then its NewHandlerFunc with the
// settings' authorization and log.
func API(ctx context.Context, getenv func(string) string, build BuildFunc, log *slog.Logger) (*httpapi.Handler, error) {
	env, err := Load(ctx, getenv)
	if err != nil {
		return nil, err
	}
	store, err := env.Store()
	if err != nil {
		return nil, err
	}
	newHandler, err := build(ctx, env, getenv)
	if err != nil {
		return nil, err
	}
	return newHandler(store, httpapi.RequestConfigOf(env.Settings), log)
}

// ServeFactAPI is the whole main of a fact API function: it builds the
// handler with [FactAPI] from the process environment and hands it to the
// Lambda runtime. A wrong configuration is logged, saying why, and the
// process exits before lambda.Start.
func ServeFactAPI(newHandler httpapi.NewHandlerFunc) {
	ServeAPI(func(context.Context, *Env, func(string) string) (httpapi.NewHandlerFunc, error) {
		return newHandler, nil
	})
}

// ServeAPI is the whole main of an API function built by build (see
// [API]): as [ServeFactAPI], a wrong configuration is logged, saying why,
// and the process exits before lambda.Start.
func ServeAPI(build BuildFunc) {
	log := httpapi.NewLogger(os.Stdout)
	h, err := API(context.Background(), os.Getenv, build, log)
	if err != nil {
		log.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}
