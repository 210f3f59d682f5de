package dynamorepo

import (
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/memory"
)

// TestStorageFiguresInTheDocs holds the sizes docs/decisions.md gives the
// parts of a stored record (a hashed watermark, a quote, an end date, the
// empty pending map) to ItemSize of the items encodeRecord writes, each
// part the difference between a record with it and one without (an end
// date, a number, its value alone).
func TestStorageFiguresInTheDocs(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	size := func(rec memory.Record) int {
		it, err := encodeRecord(userKey(memory.Scope{TenantID: "acme", UserID: "ana"}), rec, "v1")
		if err != nil {
			t.Fatal(err)
		}
		return ItemSize(it)
	}
	fact := memory.Fact{Key: "home_city", Value: "Lisbon", UpdatedAt: at, Origin: memory.OriginConversation, SourceThreadID: "th-9"}
	with := func(f func(*memory.Fact)) memory.Record {
		g := fact
		f(&g)
		return memory.Record{Facts: []memory.Fact{g}}
	}
	base := size(with(func(*memory.Fact) {}))
	const quoteChars = 40 // the cost profile's quote
	quote := size(with(func(f *memory.Fact) { f.Evidence = strings.Repeat("q", quoteChars) })) - base
	midnight := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	day := numberSize(strconv.FormatInt(midnight.UnixMilli(), 10))
	threads := map[string]memory.ThreadMark{"th-9": {TurnCount: 6, At: at}}
	one := size(memory.Record{Threads: maps.Clone(threads)})
	uuid := "0b5e8f6a-3c2d-4e1f-9a7b-6c5d4e3f2a1b"
	threads[memory.ThreadKey(uuid)] = memory.ThreadMark{TurnCount: 42, At: at}
	mark := size(memory.Record{Threads: threads}) - one
	it, err := encodeRecord(userKey(memory.Scope{TenantID: "acme", UserID: "ana"}), memory.Record{}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	docblock.CheckFigures(t, filepath.Join("..", "docs", "decisions.md"), docblock.Figures{
		"UUID's watermark went from [0-9]+ bytes \\(the ID and a map `\\{n, t\\}`\\) to ([0-9]+)": mark,
		"now that a watermark is ([0-9]+) bytes":                                                  mark,
		"costs its quote plus ([0-9]+) bytes":                                                     quote - quoteChars,
		"the profile's [0-9]+-character quote: ([0-9]+) bytes":                                    quote,
		"the profile's ([0-9]+)-character quote":                                                  quoteChars,
		"unix ms of midnight UTC: ([0-9]+) bytes":                                                 day,
		"where \"YYYY-MM-DD\" would take ([0-9]+)":                                                len(time.DateOnly),
		"empty when nothing waits \\(([0-9]+) bytes\\)":                                           ItemSize(map[string]types.AttributeValue{attrPending: it[attrPending]}),
	})
	docblock.CheckFigures(t, filepath.Join("..", "docs", "cost.md"), docblock.Figures{
		"SHA-256 \\(13 bytes\\); ([0-9]+) bytes instead of 54": mark,
	})
	if len(uuid) != 36 {
		t.Fatalf("the UUID has %d characters", len(uuid))
	}
}
