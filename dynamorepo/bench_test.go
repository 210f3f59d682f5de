package dynamorepo_test

import (
	"strconv"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// benchRepos returns the repositories the benchmarks compare: the
// in-memory double as the baseline, and this package's on moto_server
// through the SDK's own HTTP client (one goroutine needs no serializing).
func benchRepos(b *testing.B) []struct {
	name string
	repo memory.Repository
} {
	b.Helper()
	return []struct {
		name string
		repo memory.Repository
	}{
		{"double", memorytest.NewRepo()},
		{"moto", dynamorepo.New(newClient(endpoint(b), nil, func(o *dynamodb.Options) { o.HTTPClient = awshttp.NewBuildableClient() }), newTable(b))},
	}
}

// seed stores n facts for scope through s.
func seed(b *testing.B, s *memory.Store, n int) {
	b.Helper()
	for i := range n {
		if _, err := s.UpsertFact(ctx, scope, "key_"+strconv.Itoa(i), "value number "+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStore runs loop as a sub-benchmark on each of benchRepos, over a
// store holding 20 facts seeded before the timer starts.
func benchStore(b *testing.B, loop func(b *testing.B, s *memory.Store)) {
	for _, r := range benchRepos(b) {
		b.Run(r.name, func(b *testing.B) {
			s, err := memory.New(r.repo, memory.Config{})
			if err != nil {
				b.Fatal(err)
			}
			seed(b, s, 20)
			b.ReportAllocs()
			b.ResetTimer()
			loop(b, s)
		})
	}
}

// BenchmarkGetFacts reads a record of 20 facts.
func BenchmarkGetFacts(b *testing.B) {
	benchStore(b, func(b *testing.B, s *memory.Store) {
		for b.Loop() {
			facts, err := s.GetFacts(ctx, scope)
			if err != nil || len(facts) != 20 {
				b.Fatalf("GetFacts = %d facts, %v", len(facts), err)
			}
		}
	})
}

// BenchmarkUpsertFact replaces one of 20 stored facts: the one-request path.
func BenchmarkUpsertFact(b *testing.B) {
	benchStore(b, func(b *testing.B, s *memory.Store) {
		i := 0
		for b.Loop() {
			i++
			if _, err := s.UpsertFact(ctx, scope, "key_"+strconv.Itoa(i%20), "value "+strconv.Itoa(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
