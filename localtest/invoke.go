package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/usermemory/usermemory/localtest/stack"
)

// invoke runs one function with an event, like sam local invoke -e: on the
// running stack when there is one, else on a stack started for this one
// invocation (and then its log is printed to standard error).
func invoke(ctx context.Context, args []string) error {
	fs := newFlags("invoke", "[-state DIR] [-e events/X.json] FunctionLogicalId")
	state := fs.stateDir()
	event := fs.String("e", "", "event file (- for standard input; default: {})")
	if err := fs.parse(args, true); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fs.errorf("want one function's logical ID, not %d arguments", fs.NArg())
	}
	fn := fs.Arg(0)
	payload := []byte("{}")
	var err error
	switch *event {
	case "":
	case "-":
		payload, err = io.ReadAll(os.Stdin)
	default:
		payload, err = os.ReadFile(*event)
	}
	if err != nil {
		return err
	}
	info, err := stack.ReadInfo(*state)
	if err != nil {
		return invokeAlone(ctx, fn, payload)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		info.LambdaURL+"/2015-03-31/functions/"+url.PathEscape(fn)+"/invocations", bytes.NewReader(payload))
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
		return fmt.Errorf("invoke %s: %s: %s", fn, resp.Status, bytes.TrimSpace(body))
	}
	fmt.Println(string(bytes.TrimSpace(body)))
	if fe := resp.Header.Get("X-Amz-Function-Error"); fe != "" {
		return fmt.Errorf("the function failed (%s)", fe)
	}
	return nil
}

func invokeAlone(ctx context.Context, fn string, payload []byte) error {
	dir, err := os.MkdirTemp("", "usermemory-invoke")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(os.Stderr, "no running stack: starting one for this invocation…")
	s, err := stack.Start(ctx, stack.Options{StateDir: dir})
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.Invoke(ctx, fn, payload)
	if err != nil {
		return err
	}
	for id, name := range s.Info.Functions {
		if id == fn || name == fn {
			if b, err := os.ReadFile(filepath.Join(s.Info.LogDir, id+".log")); err == nil {
				os.Stderr.Write(b)
			}
		}
	}
	fmt.Println(string(bytes.TrimSpace(res.Payload)))
	if res.Err != nil {
		return fmt.Errorf("the function failed (%s)", res.Err.Type)
	}
	return nil
}
