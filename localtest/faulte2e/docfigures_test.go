package faulte2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/docblock"
)

// TestBenchmarksDescribeTheFaults holds what BENCHMARKS.md's "When a
// dependency stalls" says of these tests (their faults, counts, limits
// and the stack's visibility timeout) to their constants; the times they
// measure are printed ("figure:"), not held.
func TestBenchmarksDescribeTheFaults(t *testing.T) {
	s := func(d time.Duration) int { return int(d / time.Second) }
	docblock.CheckFigures(t, filepath.Join("..", "..", "BENCHMARKS.md"), docblock.Figures{
		"answer time during an ([0-9]+) s DynamoDB stall":                          s(apiStall),
		"no restart \\| ≤ ([0-9]+) s \\|":                                          s(recoveryLimit),
		"\\| ([0-9]+) writers × [0-9]+ PUTs through":                               stallWriters,
		"writers × ([0-9]+) PUTs through":                                          putsEach,
		"PUTs through a ([0-9]+) s stall then":                                     s(writersStall),
		"stall then ([0-9]+) s of throttling":                                      s(writersThrottle),
		"extractor, ([0-9]+) messages sent during a [0-9]+ s DynamoDB stall":       extractorMessages,
		"messages sent during a ([0-9]+) s DynamoDB stall":                         s(extractorStall),
		"extractor, ([0-9]+) messages sent during [0-9]+ s of DynamoDB throttling": extractorMessages,
		"messages sent during ([0-9]+) s of DynamoDB throttling":                   s(extractorThrottle),
		"\\(send timeout ([0-9]+) s\\)":                                            s(sendTimeout),
		"after [0-9.]+ s \\| ≤ ([0-9]+) s \\|":                                     s(sendTimeout + time.Second),
		"visibility timeout is ([0-9]+) s in this stack":                           s(visibility),
		"a record reported as failed comes back ([0-9]+) s after":                  s(visibility),
	})
	docblock.CheckFigures(t, filepath.Join("..", "..", "docs", "localtest.md"), docblock.Figures{
		"during an ([0-9]+) s DynamoDB stall a GET":                  s(apiStall),
		"never half; ([a-z]+) writers through a stall":               docblock.InWords(stallWriters),
		"([a-z]+) throttled model calls are retried within the call": docblock.InWords(modelThrottles),
	})
}
