package httpapitest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/motoserver"
	"github.com/usermemory/usermemory/memory"
)

// Seed stores facts for s in repo through a store, so that they are
// stored as the service stores them. Each fact is key=value.
func Seed(t testing.TB, repo memory.Repository, s memory.Scope, kv ...string) {
	t.Helper()
	store := NewStore(t, repo)
	for i := 0; i+1 < len(kv); i += 2 {
		if _, err := store.UpsertFact(context.Background(), s, kv[i], kv[i+1]); err != nil {
			t.Fatalf("seed %v: %v", s, err)
		}
	}
}

// Facts returns the stored facts of s as key → value.
func Facts(t testing.TB, repo memory.Repository, s memory.Scope) map[string]string {
	t.Helper()
	facts, err := NewStore(t, repo).GetFacts(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range facts {
		out[f.Key] = f.Value
	}
	return out
}

// DynamoClient returns a DynamoDB client, with dummy credentials, for the
// moto_server that the environment names (see motoserver.Endpoint):
// without one, t is skipped.
func DynamoClient(t testing.TB) *dynamodb.Client {
	t.Helper()
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(motoserver.Endpoint(t)),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// MotoRepo creates a fresh table on the moto_server of the environment
// and returns a dynamorepo.Repo over it; without a moto_server, t is
// skipped.
func MotoRepo(t testing.TB) *dynamorepo.Repo {
	t.Helper()
	client := DynamoClient(t)
	table := fmt.Sprintf("facts-%d-%d", os.Getpid(), time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := dynamorepo.CreateTable(ctx, client, table); err != nil {
		t.Fatalf("create table: %v", err)
	}
	return dynamorepo.New(client, table)
}
