package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/usermemory/usermemory/claims"
	"github.com/usermemory/usermemory/localtest/stack"
	"github.com/usermemory/usermemory/localtest/token"
	"github.com/usermemory/usermemory/producer"
)

// The local stack's goals, which bench prints each measurement against
// (docs/localtest.md and BENCHMARKS.md give them): goals, not figures
// measured.
const (
	targetUp            = 10 * time.Second        // `go run ./localtest up` to ready
	targetReadP50       = 20 * time.Millisecond   // GET /v1/me/facts, warm, median
	targetExtractionP50 = 1500 * time.Millisecond // SendMessage to facts readable, median
)

// againstTarget writes got against the goal target: "(target ≤ 10s:
// 0.33 of it)".
func againstTarget(got, target time.Duration) string {
	return fmt.Sprintf("(target ≤ %s: %.2f of it)", target, got.Seconds()/target.Seconds())
}

// bench starts `go run ./localtest up` as a person would, times it to
// ready, measures the running stack from outside and stops it.
func bench(ctx context.Context, args []string) error {
	fs := newFlags("bench", "[-n 1000] [-extractions 50]")
	n := fs.Int("n", 1000, "GET requests to time")
	extractions := fs.Int("extractions", 50, "extractions to time")
	if err := fs.parse(args, false); err != nil {
		return err
	}
	state, err := os.MkdirTemp("", "usermemory-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)

	info, stop, err := benchUp(ctx, state)
	if err != nil {
		return err
	}
	defer stop()
	iss, err := token.Open(info.KeyFile)
	if err != nil {
		return err
	}
	b := &benchRun{info: info, client: &http.Client{Timeout: 30 * time.Second}, sign: func(user string) (string, error) {
		c, err := token.UserClaims(claims.Config{TenantClaim: info.TenantClaim, UserScope: info.UserScope},
			info.Issuer, info.Audience, user, "bench", nil)
		if err != nil {
			return "", err
		}
		return iss.Sign(c)
	}}
	if err := b.reads(*n); err != nil {
		return err
	}
	if err := b.extractions(ctx, *extractions); err != nil {
		return err
	}
	stop()
	if left, _ := filepath.Glob(filepath.Join(state, stack.InfoFile)); len(left) > 0 {
		return fmt.Errorf("bench: the stack did not stop cleanly (its state file is still there)")
	}
	return nil
}

// benchUp starts the stack as a person does, with go run on free ports,
// prints the time from the command to ready, and returns the stack's Info
// and a function that stops it (and may be called twice).
func benchUp(ctx context.Context, state string) (stack.Info, func(), error) {
	// Free ports: a stack a person runs keeps the default ones.
	cmd := exec.CommandContext(ctx, "go", "run", "./localtest", "up", "-state", state, "-api-port", "0", "-page-port", "0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		return stack.Info{}, nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return stack.Info{}, nil, err
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		})
	}
	lines := bufio.NewScanner(out)
	var reported string
	for lines.Scan() {
		if l := lines.Text(); strings.Contains(l, "ready in") {
			reported = strings.TrimSpace(l[strings.Index(l, "ready in")+len("ready in"):])
			break
		}
	}
	ready := time.Since(start)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if reported == "" {
		stop()
		return stack.Info{}, nil, fmt.Errorf("bench: the stack did not start (run go run ./localtest up to see why)")
	}
	info, err := stack.ReadInfo(state)
	if err != nil {
		stop()
		return stack.Info{}, nil, err
	}
	fmt.Printf("up to ready: %.1f s from the command (go run included), %s inside the process %s\n",
		ready.Seconds(), reported, againstTarget(ready, targetUp))
	return info, stop, nil
}

// benchRun times requests against a running stack.
type benchRun struct {
	info   stack.Info
	client *http.Client
	sign   func(user string) (string, error)
}

// reads times n sequential GET /v1/me/facts of a user with three facts,
// after 50 warm-up requests, and prints p50 and p99.
func (b *benchRun) reads(n int) error {
	tok, err := b.sign("reader")
	if err != nil {
		return err
	}
	for _, kv := range [][2]string{{"name", "Ana"}, {"home_city", "Lisbon"}, {"preferred_language", "Portuguese"}} {
		if _, err := do(b.client, http.MethodPut, b.info.APIURL+"/v1/me/facts/"+kv[0], tok, `{"value":"`+kv[1]+`"}`); err != nil {
			return err
		}
	}
	for range 50 {
		if _, err := do(b.client, http.MethodGet, b.info.APIURL+"/v1/me/facts", tok, ""); err != nil {
			return err
		}
	}
	lat := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := do(b.client, http.MethodGet, b.info.APIURL+"/v1/me/facts", tok, ""); err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
	}
	fmt.Printf("GET /v1/me/facts through the API emulator, warm, %d sequential requests: p50 %s, p99 %s; p50 %s\n",
		n, pct(lat, 50), pct(lat, 99), againstTarget(pct(lat, 50), targetReadP50))
	return nil
}

// extractions times, for n new users, a SendMessage until the facts are
// readable through the API, and prints p50 and p99.
func (b *benchRun) extractions(ctx context.Context, n int) error {
	sqsClient := sqs.NewFromConfig(b.info.AWSConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(b.info.AWSEndpoint) })
	p := producer.New(sqsClient, b.info.QueueURL)
	lat := make([]time.Duration, 0, n)
	for i := range n {
		user := "x-" + strings.ToLower(rand.Text()[:10])
		tok, err := b.sign(user)
		if err != nil {
			return err
		}
		t0 := time.Now()
		err = p.Send(ctx, producer.Message{TenantID: "bench", UserID: user, ThreadID: "th-1", TurnCount: 2,
			Turns: []producer.Turn{{Role: "user", Text: "Hi, I'm Ana and I live in Lisbon."}, {Role: "assistant", Text: "Hello Ana"}}})
		if err != nil {
			return err
		}
		if err := b.waitForFacts(tok, t0, i); err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
	}
	fmt.Printf("SendMessage to facts readable through the API, stand-in model, %d extractions: p50 %s, p99 %s; p50 %s\n",
		n, pct(lat, 50), pct(lat, 99), againstTarget(pct(lat, 50), targetExtractionP50))
	return nil
}

// waitForFacts polls the facts of tok's user until there is one, or fails
// 30 s after t0.
func (b *benchRun) waitForFacts(tok string, t0 time.Time, i int) error {
	for {
		body, err := do(b.client, http.MethodGet, b.info.APIURL+"/v1/me/facts", tok, "")
		if err != nil {
			return err
		}
		var got struct{ Facts []json.RawMessage }
		if json.Unmarshal(body, &got) == nil && len(got.Facts) > 0 {
			return nil
		}
		if time.Since(t0) > 30*time.Second {
			return fmt.Errorf("bench: extraction %d: no facts after 30 s", i)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func do(c *http.Client, method, url, tok, body string) ([]byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %s %s", method, url, resp.Status, b)
	}
	return b, nil
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(0, min(i, len(s)-1))].Round(10 * time.Microsecond)
}
