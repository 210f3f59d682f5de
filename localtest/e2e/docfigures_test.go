package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/usermemory/usermemory/internal/docblock"
)

// TestLocaltestDocDescribesTheSuite holds what docs/localtest.md says of
// the stack this suite starts to the suite's own options.
func TestLocaltestDocDescribesTheSuite(t *testing.T) {
	docblock.CheckFigures(t, filepath.Join("..", "..", "docs", "localtest.md"), docblock.Figures{
		"`TestMain` \\(with a ([0-9]+) s visibility timeout": int(stackOptions.VisibilityTimeout / time.Second),
	})
}

// TestBenchmarksDescribeTheBurst holds what BENCHMARKS.md says of
// TestNewUsersConcurrentWritesOfDistinctKeys to its constants and the
// suite's stack.
func TestBenchmarksDescribeTheBurst(t *testing.T) {
	docblock.CheckFigures(t, filepath.Join("..", "..", "BENCHMARKS.md"), docblock.Figures{
		"HTTP API at ([0-9]+) environments per function":                       stackOptions.MaxEnvironments,
		"`TestNewUsersConcurrentWritesOfDistinctKeys`: ([0-9]+) new users one": firstFactUsers,
		"one after another, ([0-9]+) PUTs of distinct keys each":               firstFactWriters,
		"0 of ([0-9]+) refused, 0 lost, every key stored":                      firstFactUsers * firstFactWriters,
		"end to end, ([0-9]+) new users × [0-9]+ PUTs at once":                 firstFactUsers,
		"end to end, [0-9]+ new users × ([0-9]+) PUTs at once":                 firstFactWriters,
		"PUTs at once over HTTP: 0 of ([0-9]+) refused":                        firstFactUsers * firstFactWriters,
	})
}
