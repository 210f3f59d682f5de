package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/usermemory/usermemory/functions/setup"
)

// main reads the page's settings from the environment once per execution
// environment (setup.Page), failing fast on a bad one, and serves the page.
func main() {
	s, err := setup.Page(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lambda.Start(newHandler(s))
}
