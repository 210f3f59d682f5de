// Command hello is the baseline of scripts/bench-api.sh: the smallest Lambda
// function, built with the same flags as the real ones, to compare their
// bootstrap size and cold start against.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, json.RawMessage) (string, error) { return "hello", nil })
}
