package dynamorepo

import (
	"fmt"
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

// TestStorageFiguresInTheDocs writes the block part-sizes of
// docs/decisions.md: the sizes of the parts of a stored record (a
// watermark, a hashed watermark, a quote, an end date, the empty pending
// map, a previous value) by ItemSize of the items encodeRecord writes, each part the
// difference between a record with it and one without (an end date, a
// number, its value alone).
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
	hashed := size(memory.Record{Threads: threads}) - one
	it, err := encodeRecord(userKey(memory.Scope{TenantID: "acme", UserID: "ana"}), memory.Record{}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	markSize := func(n int64) int {
		av, err := mark{TurnCount: n, At: at.UnixMilli()}.MarshalDynamoDBAttributeValue()
		if err != nil {
			t.Fatal(err)
		}
		return len(av.(*types.AttributeValueMemberS).Value)
	}
	if markSize(1) != markSize(9) || markSize(10) != markSize(99) {
		t.Fatalf("a mark's size varies within a number of digits")
	}
	prev := memory.PreviousValue{Value: strings.Repeat("v", 30), ReplacedAt: at, Origin: memory.OriginConversation, ThreadID: uuid,
		ThreadTitle: strings.Repeat("t", 20), Evidence: strings.Repeat("q", quoteChars), ValueThreadID: uuid,
		ValueOrigin: memory.OriginConversation, ValueThreadTitle: strings.Repeat("t", 20), ValueEvidence: strings.Repeat("q", quoteChars),
		ValueUpdatedAt: at, ValueSaidAt: at}
	withPrev := with(func(*memory.Fact) {})
	withPrev.History = map[string][]memory.PreviousValue{fact.Key: {prev}}
	previous := size(withPrev) - base
	docblock.Check(t, filepath.Join("..", "docs", "decisions.md"), "part-sizes", strings.Join([]string{
		"| part of a stored record | bytes |",
		"|---|---:|",
		fmt.Sprintf("| a watermark's value `\"<turn count>:<unix ms>\"`, turn count under 10 / 10 to 99 | %d / %d |", markSize(9), markSize(99)),
		fmt.Sprintf("| the watermark of a %d-character UUID thread ID (hashed key and value) | %d |", len(uuid), hashed),
		fmt.Sprintf("| an extracted fact's %d-character quote (`e`) | %d |", quoteChars, quote),
		fmt.Sprintf("| an end date (`u`, unix ms of midnight UTC; \"YYYY-MM-DD\" would take %d) | %d |", len(time.DateOnly), day),
		fmt.Sprintf("| the empty `pending` map | %d |", ItemSize(map[string]types.AttributeValue{attrPending: it[attrPending]})),
		fmt.Sprintf("| a previous value (`h`) of a 30-character value learned and replaced in conversations (%d-character thread IDs, 20-character titles, %d-character quotes), with its provenance | %d |", len(uuid), quoteChars, previous),
	}, "\n"))
}
