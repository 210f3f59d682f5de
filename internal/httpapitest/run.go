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
	"github.com/usermemory/usermemory/memory/memorytest"
)

// Seed stores facts for s in repo through a store, so that they are
// stored as the service stores them. Each fact is key=value.
func Seed(t testing.TB, repo memory.Repository, s memory.Scope, kv ...string) {
	t.Helper()
	store := NewStore(t, repo)
	for i := 0; i+1 < len(kv); i += 2 {
		if _, err := store.Put(context.Background(), s, memory.FactInput{Key: kv[i], Value: kv[i+1]}); err != nil {
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

// SeedExtracted stores for s in repo what an extraction of the thread
// threadID makes of the user's turn said, when the model answers ops: as
// the service stores it (evidence checked against said, a fact of a
// special category kept pending, an end date). It fails t unless the
// extraction wrote something.
func SeedExtracted(t testing.TB, repo memory.Repository, s memory.Scope, threadID, said string, ops ...memory.Operation) {
	t.Helper()
	store, err := memory.New(repo, memory.Config{}, memory.WithClock(func() time.Time { return Now }),
		memory.WithModel(memorytest.NewModel(memorytest.Answer{Operations: ops})))
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Extract(context.Background(), memory.ExtractRequest{Scope: s, ThreadID: threadID,
		TurnCount: 2, Turns: []memory.Turn{{Role: memory.RoleUser, Text: said}, {Role: memory.RoleAssistant, Text: "Noted."}}})
	if err != nil || res.Outcome != memory.OutcomeChanged {
		t.Fatalf("seed extraction for %v: %+v, %v; want changed", s, res, err)
	}
}
