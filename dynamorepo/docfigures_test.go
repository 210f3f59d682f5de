package dynamorepo_test

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/docblock"
)

// TestBenchmarksDescribeTheConcurrencyTests holds what BENCHMARKS.md says
// of the concurrency tests' shape (writers, writes, keys, caps, model
// calls) to their constants. What they measure under concurrency (the
// retries) varies between runs and is printed, not held.
func TestBenchmarksDescribeTheConcurrencyTests(t *testing.T) {
	writes := upsertGoroutines * upsertWritesEach
	firsts := firstFactUsers * firstFactKeys
	docblock.CheckFigures(t, filepath.Join("..", "BENCHMARKS.md"), docblock.Figures{
		"`memory/`; ([0-9]+) concurrent writers: 0 lost updates":                                                 upsertGoroutines,
		"([0-9]+) goroutines × [0-9]+ writes":                                                                    upsertGoroutines,
		"[0-9]+ goroutines × ([0-9]+) writes":                                                                    upsertWritesEach,
		"keys of one user, `maxFacts` ([0-9]+),":                                                                 upsertMaxFacts,
		"`maxFacts` [0-9]+, ([0-9]+) distinct keys":                                                              upsertGoroutines + upsertSharedKeys,
		"([0-9]+) of [0-9]+ writes acknowledged":                                                                 writes,
		"[0-9]+ of ([0-9]+) writes acknowledged":                                                                 writes,
		"writes acknowledged, ([0-9]+) facts stored":                                                             upsertMaxFacts,
		"\\(([0-9]+) extractions, [0-9]+ edits\\)":                                                               racingExtractions,
		"extractions, ([0-9]+) edits\\)":                                                                         racingEdits,
		"exactly ([0-9]+) model calls":                                                                           racingExtractions,
		"([0-9,]+) writes of distinct keys for new users":                                                        firsts,
		"for new users, ([0-9]+) and [0-9]+ concurrent writers":                                                  firstFactWriters[0],
		"for new users, [0-9]+ and ([0-9]+) concurrent writers":                                                  firstFactWriters[1],
		"([0-9,]+) upserts through `memory.Store`":                                                               firsts,
		"([0-9]+) distinct keys for each of [0-9]+ users":                                                        firstFactKeys,
		"distinct keys for each of ([0-9]+) users":                                                               firstFactUsers,
		"started together, `maxFacts` ([0-9]+):":                                                                 firstFactKeys,
		"\\| ([0-9]+) \\| 0 of [0-9]+ \\| 0 \\| [0-9]+ UpdateItem \\([0-9]+ refused by their condition, retried": firstFactWriters[0],
		"\\| ([0-9]+) \\| 0 of [0-9]+ \\| 0 \\| [0-9]+ UpdateItem \\([0-9]+ refused by their condition\\)":       firstFactWriters[1],
		"\\| [0-9]+ \\| 0 of ([0-9,]+) \\| 0 \\|":                                                                firsts,
		"([0-9]+) writers of one key of a new user":                                                              sameKeyWriters,
	})
}

// TestScaleDescribesTheShards holds the shard count docs/scale.md writes
// in its account of the sharded budget to dynamorepo.DefaultBudgetShards.
// The load figures are the blocks the budget's load tests write.
func TestScaleDescribesTheShards(t *testing.T) {
	n := dynamorepo.DefaultBudgetShards
	docblock.CheckFigures(t, filepath.Join("..", "docs", "scale.md"), docblock.Figures{
		"`ceil\\(limit/([0-9]+)\\)`":                  n,
		"`([0-9]+) × ceil\\(limit/[0-9]+\\) − limit`": n,
		"\\(fewer than ([0-9]+); none when":           n,
		"the limit is a multiple of ([0-9]+)\\)":      n,
		"A limit under ([0-9]+) uses":                 n,
		"extractions spread over ([0-9]+) items":      n,
	})
}

// TestRunbookNamesTheItemCeiling holds the per-item write ceiling
// docs/runbook.md names to the one the budget's load test turns its
// counts into rates with.
func TestRunbookNamesTheItemCeiling(t *testing.T) {
	docblock.CheckFigures(t, filepath.Join("..", "docs", "runbook.md"), docblock.Figures{
		"one hot item \\(([0-9,]+) writes/s": itemWritesPerSecond,
	})
}

// TestBenchmarksRoundTrips holds the rows of BENCHMARKS.md's table of
// round trips to the requests the tests that measure them expect of each
// operation (reqRead and the others), which TestStoreRoundTrips,
// TestDeletionCost, TestGlassBoxOnDynamoDB and
// TestFirstFactRacesTheCreation assert against moto_server.
func TestBenchmarksRoundTrips(t *testing.T) {
	row := func(operation, requests string) string {
		return "\\| " + regexp.QuoteMeta(operation) + " \\| " + requests
	}
	const (
		firstFact = "upsertFact, first fact (no record, or over an erasure fence)"
		extract   = "extraction, with or without tombstones (a SET of a removed key left out)"
		ended     = "upsertFact or removeFact once a fact of the record ended (`endsAt` passed)"
		pending   = "put with an end date (`validUntil`); keep or discard a pending fact"
	)
	docblock.CheckFigures(t, filepath.Join("..", "BENCHMARKS.md"), docblock.Figures{
		row("getFacts", "([0-9]+) GetItem \\|"): requests(t, reqRead, "GetItem"),
		row("upsertFact, record has facts and is under the cap (or key already stored)", "([0-9]+) UpdateItem \\|"): requests(t, reqUpdate, "UpdateItem"),
		row(firstFact, "([0-9]+) UpdateItem"):                                                                                    requests(t, reqFirstFact, "UpdateItem"),
		row(firstFact, "[0-9]+ UpdateItem [^|]*; ([0-9]+) when a concurrent writer created"):                                     requests(t, reqFirstFactRaced, "UpdateItem"),
		row("upsertFact, new key at the cap", "([0-9]+) \\(UpdateItem refused"):                                                  requests(t, reqRefusedSave, ""),
		row("removeFact, stored key or not (the tombstone is written either way)", "([0-9]+) UpdateItem \\|"):                    requests(t, reqUpdate, "UpdateItem"),
		row("removeFact, new tombstone at `maxTombstones` (the oldest fold into `clearedAt`)", "([0-9]+) \\(UpdateItem refused"): requests(t, reqRefusedSave, ""),
		row("clear, with or without a record", "([0-9]+) UpdateItem \\|"):                                                        requests(t, reqUpdate, "UpdateItem"),
		row("deleteByUser (erasure)", "([0-9]+) PutItem"):                                                                        requests(t, reqErase, "PutItem"),
		row(extract, "([0-9]+) GetItem \\+"):                                                                                     requests(t, reqReadSave, "GetItem"),
		row(extract, "[0-9]+ GetItem \\+ ([0-9]+) PutItem \\|"):                                                                  requests(t, reqReadSave, "PutItem"),
		row("extraction redelivered, or sent before an erasure or a clear", "([0-9]+) GetItem, no model call"):                   requests(t, reqRead, "GetItem"),
		row(ended, "([0-9]+) \\(UpdateItem refused"):                                                                             requests(t, reqRefusedSave, ""),
		row(pending, "([0-9]+) GetItem \\+"):                                                                                     requests(t, reqReadSave, "GetItem"),
		row(pending, "[0-9]+ GetItem \\+ ([0-9]+) PutItem"):                                                                      requests(t, reqReadSave, "PutItem"),
		row(pending, "[^|]*\\(discard with nothing pending: ([0-9]+) GetItem\\)"):                                                requests(t, reqRead, "GetItem"),
	})
}

// requests returns the requests of op in want, as counter.take writes
// them ("GetItem:1 PutItem:1"), or of every operation when op is "".
func requests(t *testing.T, want, op string) int {
	t.Helper()
	n := 0
	for _, part := range strings.Fields(want) {
		name, count, _ := strings.Cut(part, ":")
		k, err := strconv.Atoi(count)
		if err != nil {
			t.Fatalf("requests %q: %v", want, err)
		}
		if op == "" || name == op {
			n += k
		}
	}
	return n
}
