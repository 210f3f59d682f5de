package main

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/functions/httpapi"
	"github.com/usermemory/usermemory/internal/httpapitest"
	"github.com/usermemory/usermemory/memory"
)

// benchTable creates a table on moto_server with the facts of ana.
func benchTable(b *testing.B) (*dynamodb.Client, string) {
	b.Helper()
	client := httpapitest.DynamoClient(b)
	table := "bench-" + b.Name()
	ctx := context.Background()
	if err := dynamorepo.CreateTable(ctx, client, table); err != nil {
		b.Fatal(err)
	}
	repo := dynamorepo.New(client, table)
	httpapitest.Seed(b, repo, httpapitest.Ana, "language", "Portuguese", "city", "Lisbon", "role", "data engineer")
	return client, table
}

// BenchmarkGetFactsHandler is a warm invocation of the function in
// process: the event's JSON decoded as the runtime does, the identity
// checked, one GetItem on moto_server, the response encoded.
func BenchmarkGetFactsHandler(b *testing.B) {
	client, table := benchTable(b)
	store, err := memory.New(dynamorepo.New(client, table), memory.Config{})
	if err != nil {
		b.Fatal(err)
	}
	h, err := newHandler(store, httpapi.RequestConfig{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	invoke := lambda.NewHandler(h.Handle)
	payload := httpapitest.ReadEvent(b, "getfacts-me.json")
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := invoke.Invoke(ctx, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareGetItem is the baseline: the one GetItem the handler makes,
// with the same client on the same server.
func BenchmarkBareGetItem(b *testing.B) {
	client, table := benchTable(b)
	ctx := context.Background()
	// dynamorepo's key of ana: tenant#user.
	in := &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{dynamorepo.KeyAttribute: &types.AttributeValueMemberS{Value: "acme#u-123"}}}
	out, err := client.GetItem(ctx, in)
	if err != nil || len(out.Item) == 0 {
		b.Fatalf("GetItem: %v, item %v: the key is not dynamorepo's", err, out)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := client.GetItem(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}
