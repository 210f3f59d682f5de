package dynamorepo_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usermemory/usermemory/internal/docblock"
)

// TestBenchmarksRoundTrips writes BENCHMARKS.md's table of round trips
// (the block round-trips) from the requests the tests that measure them
// expect of each operation (reqRead and the others), which
// TestStoreRoundTrips, TestDeletionCost, TestGlassBoxOnDynamoDB and
// TestFirstFactRacesTheCreation assert against moto_server.
func TestBenchmarksRoundTrips(t *testing.T) {
	rows := []struct{ operation, want, note string }{
		{"getFacts", reqRead, ""},
		{"upsertFact, record has facts and is under the cap (or key already stored)", reqUpdate, ""},
		{"upsertFact, first fact (no record, or over an erasure fence)", reqFirstFact,
			"the per-key one refused with ALL_OLD, then the creation of the facts map; when a concurrent writer created the map first: " + requests(reqFirstFactRaced)},
		{"upsertFact, new key at the cap", reqRefusedSave, "UpdateItem refused with ALL_OLD, then a conditional PutItem"},
		{"removeFact, stored key or not (the tombstone is written either way)", reqUpdate, ""},
		{"removeFact, new tombstone at `maxTombstones` (the oldest fold into `clearedAt`)", reqRefusedSave, "UpdateItem refused with ALL_OLD, then a conditional PutItem"},
		{"clear, with or without a record", reqUpdate, ""},
		{"deleteByUser (erasure)", reqErase, "the fence, ALL_OLD gives the count"},
		{"extraction, with or without tombstones (a SET of a removed key left out)", reqReadSave, ""},
		{"extraction redelivered, or sent before an erasure or a clear", reqRead, "no model call, no write"},
		{"upsertFact or removeFact once a fact of the record ended (`endsAt` passed)", reqRefusedSave, "UpdateItem refused with ALL_OLD, then a conditional PutItem that drops what ended"},
		{"put with an end date (`validUntil`); keep or discard a pending fact", reqReadSave, "discard with nothing pending: " + requests(reqRead)},
	}
	lines := []string{"| operation | requests |", "|---|---|"}
	for _, r := range rows {
		cell := requests(r.want)
		if r.note != "" {
			cell += " (" + r.note + ")"
		}
		lines = append(lines, fmt.Sprintf("| %s | %s |", r.operation, cell))
	}
	docblock.Check(t, filepath.Join("..", "BENCHMARKS.md"), "round-trips", strings.Join(lines, "\n"))
}

// requests writes want, as counter.take writes it ("GetItem:1
// PutItem:1"), as the table does ("1 GetItem + 1 PutItem").
func requests(want string) string {
	var parts []string
	for _, part := range strings.Fields(want) {
		name, count, _ := strings.Cut(part, ":")
		parts = append(parts, count+" "+name)
	}
	return strings.Join(parts, " + ")
}
