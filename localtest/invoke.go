package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/usermemory/usermemory/localtest/stack"
)

func invoke(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("invoke", flag.ContinueOnError)
	state := fs.String("state", stack.DefaultStateDir(), "state folder of the running stack")
	event := fs.String("e", "", "event file (- for standard input; default: {})")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./localtest invoke [-e events/X.json] FunctionLogicalId")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return flag.ErrHelp
	}
	info, err := stack.ReadInfo(*state)
	if err != nil {
		return err
	}
	payload := []byte("{}")
	switch *event {
	case "":
	case "-":
		if payload, err = io.ReadAll(os.Stdin); err != nil {
			return err
		}
	default:
		if payload, err = os.ReadFile(*event); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		info.LambdaURL+"/2015-03-31/functions/"+url.PathEscape(fs.Arg(0))+"/invocations", bytes.NewReader(payload))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("invoke %s: %s: %s", fs.Arg(0), resp.Status, bytes.TrimSpace(body))
	}
	fmt.Println(string(bytes.TrimSpace(body)))
	if fe := resp.Header.Get("X-Amz-Function-Error"); fe != "" {
		return fmt.Errorf("the function failed (%s)", fe)
	}
	return nil
}
