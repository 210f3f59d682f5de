package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/functions/wire"
)

// EnvQueueURL names the setting of the queue the import messages go to:
// the extraction queue, whose extractor reads them.
const EnvQueueURL = "EXTRACTION_QUEUE_URL"

// main builds the function once per execution environment from the
// environment (see wire.ServeAPI and [build]) and serves its routes.
func main() { wire.ServeAPI(build) }

// build returns this function's NewHandlerFunc: an SQS client of the
// environment's configuration and the queue URL getenv names
// ([EnvQueueURL]); the error says the setting is missing.
func build(_ context.Context, env *wire.Env, getenv func(string) string) (httpapi.NewHandlerFunc, error) {
	url := strings.TrimSpace(getenv(EnvQueueURL))
	if url == "" {
		return nil, fmt.Errorf("imports: %s is empty: set it to the extraction queue's URL", EnvQueueURL)
	}
	return newHandler(sqs.NewFromConfig(env.AWS), url, time.Now), nil
}
