package dynamorepo_test

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/docblock"
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
func seed(b testing.TB, s *memory.Store, n int) {
	b.Helper()
	for i := range n {
		if _, err := s.Put(ctx, scope, memory.FactInput{Key: "key_" + strconv.Itoa(i), Value: "value number " + strconv.Itoa(i)}); err != nil {
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
			getFacts(b, s)
		}
	})
}

// BenchmarkUpsertFact replaces one of 20 stored facts: the one-request path.
func BenchmarkUpsertFact(b *testing.B) {
	benchStore(b, func(b *testing.B, s *memory.Store) {
		i := 0
		for b.Loop() {
			i++
			upsertFact(b, s, i)
		}
	})
}

// getFacts is one operation of BenchmarkGetFacts: it reads the 20 facts
// benchStore seeded.
func getFacts(tb testing.TB, s *memory.Store) {
	facts, err := s.GetFacts(ctx, scope)
	if err != nil || len(facts) != 20 {
		tb.Fatalf("GetFacts = %d facts, %v", len(facts), err)
	}
}

// upsertFact is the i-th operation of BenchmarkUpsertFact: it replaces
// one of the 20 facts benchStore seeded.
func upsertFact(tb testing.TB, s *memory.Store, i int) {
	if _, err := s.Put(ctx, scope, memory.FactInput{Key: "key_" + strconv.Itoa(i%20), Value: "value " + strconv.Itoa(i)}); err != nil {
		tb.Fatal(err)
	}
}

// TestBenchmarksDoubleAllocations writes the block double-allocs of
// BENCHMARKS.md: the allocations per operation of the in-memory double,
// the baseline of BenchmarkGetFacts and BenchmarkUpsertFact, counted
// afresh: the mean over 1,000 of them, rounded, once the values are
// past strconv's small numbers as in a benchmark's steady state. The
// double's count does not depend on the machine; the SDK's, and every
// timing, stay printed with the command that measures them.
func TestBenchmarksDoubleAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("needs a build without -race: the race detector adds allocations; go test -run TestBenchmarksDoubleAllocations ./dynamorepo/ checks them")
	}
	s, err := memory.New(memorytest.NewRepo(), memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s, 20)
	i := 0
	for ; i < 1000; i++ {
		upsertFact(t, s, i)
	}
	get := meanAllocs(func() { getFacts(t, s) })
	upsert := meanAllocs(func() { i++; upsertFact(t, s, i) })
	docblock.Check(t, filepath.Join("..", "BENCHMARKS.md"), "double-allocs", fmt.Sprintf(
		"The double's allocations per operation (the mean of 1,000 operations, rounded): GetFacts %d, UpsertFact %d.", get, upsert))
}

// meanAllocs returns the mean number of allocations of 1,000 calls of op,
// rounded to the nearest whole number (testing.AllocsPerRun truncates,
// and the upsert's mean, a little over 7, would read 6 or 7 by chance).
func meanAllocs(op func()) int {
	const n = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		op()
	}
	runtime.ReadMemStats(&after)
	return int(math.Round(float64(after.Mallocs-before.Mallocs) / n))
}
