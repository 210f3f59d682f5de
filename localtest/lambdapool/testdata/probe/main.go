// Command probe is a Lambda function for the pool's tests: it echoes its
// event, fails, sleeps (past its deadline if asked) or exits on request.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
)

type request struct {
	Do    string `json:"do"`
	Sleep int    `json:"sleepMs"`
}

type reply struct {
	Env map[string]string `json:"env"`
	PID int               `json:"pid"`
}

func handle(ctx context.Context, raw json.RawMessage) (reply, error) {
	var r request
	_ = json.Unmarshal(raw, &r)
	switch r.Do {
	case "fail":
		return reply{}, errors.New("probe failed on request")
	case "exit":
		os.Exit(3)
	case "sleep":
		// Sleeps whatever the deadline, as a hung function does: were it to
		// return at the deadline, its answer would race Lambda's timeout.
		time.Sleep(time.Duration(r.Sleep) * time.Millisecond)
	}
	env := map[string]string{}
	for _, k := range []string{"PROBE_VAR", "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_TIMEOUT", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_REGION"} {
		env[k] = os.Getenv(k)
	}
	if dl, ok := ctx.Deadline(); ok {
		env["deadline_ms"] = time.Until(dl).Round(time.Second).String()
	}
	return reply{Env: env, PID: os.Getpid()}, nil
}

func main() { lambda.Start(handle) }
