package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/gateway"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/localtest/fault"
	"github.com/usermemory/usermemory/memory"
)

// TestPromptThroughADynamoDBStall reads the facts as a deployed gateway
// does, through dynamorepo and the real DynamoDB client, here against
// moto_server behind the local stack's fault injector: a stall shorter
// than the retry policy's total is ridden out (the attempts time out and
// the next one, after the stall, answers); a longer one gives the prompt
// the facts last read, and the error is reported.
func TestPromptThroughADynamoDBStall(t *testing.T) {
	target, err := url.Parse(motoserver.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0) // the attempts the client gave up on
	faults := fault.New(fault.DynamoDB, rp)
	proxy := httptest.NewServer(faults)
	defer proxy.Close()
	client := dynamodb.NewFromConfig(aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(proxy.URL) })
	ctx := context.Background()
	table := fmt.Sprintf("gateway-stall-%d", time.Now().UnixNano())
	if err := dynamorepo.CreateTable(ctx, client, table); err != nil {
		t.Fatal(err)
	}
	policy := gateway.RetryPolicy{MaxAttempts: 6, BaseDelay: 50 * time.Millisecond, AttemptTimeout: 400 * time.Millisecond, Total: 2 * time.Second}
	g, store, reports := flakyGateway(t, dynamorepo.New(client, table), &queue{}, gateway.Config{Retry: policy})
	if _, err := store.Put(ctx, ana, memory.FactInput{Key: "home_city", Value: "Lisbon"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.SystemPrompt(ctx, ana); err != nil {
		t.Fatal(err)
	}

	if err := faults.Set(fault.Spec{Kind: fault.Stall, For: 1200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	system, err := g.SystemPrompt(ctx, ana)
	if err != nil || !containsAll(system, `"Lisbon"`) || len(*reports) != 0 {
		t.Fatalf("through a 1.2 s stall: %q, %v, reports %v; want the stored facts", system, err, *reports)
	}
	t.Logf("figure: the prompt's read rode out a 1.2 s DynamoDB stall in %v", time.Since(start).Round(10*time.Millisecond))

	if err := faults.Set(fault.Spec{Kind: fault.Stall, For: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	defer faults.Clear()
	start = time.Now()
	system, err = g.SystemPrompt(ctx, ana)
	took := time.Since(start)
	if err != nil || !containsAll(system, `"Lisbon"`) || len(*reports) != 1 || (*reports)[0].Served != "last-known" {
		t.Fatalf("during a 10 s stall: %q, %v, reports %v; want the last-known facts, reported", system, err, *reports)
	}
	if took > policy.Total+500*time.Millisecond {
		t.Errorf("the prompt waited %v during the stall, over the policy's total %v", took, policy.Total)
	}
	t.Logf("figure: during a 10 s DynamoDB stall the prompt had the last-known facts after %v", took.Round(10*time.Millisecond))
}
