package dynamorepo_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/memory"
)

func TestItemSize(t *testing.T) {
	S := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	N := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	tests := []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"string", map[string]types.AttributeValue{"pk": S("acme#u")}, 2 + 6},
		{"utf-8 bytes", map[string]types.AttributeValue{"é": S("日本")}, 2 + 6},
		{"number: significant digits halved, plus one", map[string]types.AttributeValue{"n": N("1732917600000")}, 1 + (8+1)/2 + 1},
		{"number with a sign and a fraction", map[string]types.AttributeValue{"n": N("-0.0012500")}, 1 + (3+1)/2 + 1},
		{"number zero", map[string]types.AttributeValue{"n": N("0")}, 1 + 1},
		{"bool", map[string]types.AttributeValue{"b": &types.AttributeValueMemberBOOL{Value: true}}, 1 + 1},
		{"empty map", map[string]types.AttributeValue{"facts": &types.AttributeValueMemberM{}}, 5 + 3},
		{"map: 3 bytes, 1 per element", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"ab": S("xyz"), "c": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"v": S("1")}},
		}}}, 1 + 3 + (1 + 2 + 3) + (1 + 1 + (3 + 1 + 1 + 1))},
		{"list", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{S("ab"), N("7")}}}, 1 + 3 + (1 + 2) + (1 + 2)},
	}
	for _, tt := range tests {
		if got := dynamorepo.ItemSize(tt.item); got != tt.want {
			t.Errorf("%s: itemSize = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestFullRecordFitsTheBudget builds the largest record a valid config
// allows (every key and value at maxFactChars runes of 4 bytes, every
// source thread ID and watermark at MaxIDLen bytes, every tombstone with a
// key of maxFactChars runes of 4 bytes) and checks that its
// item is within the config's bound, within memory.ItemBudget, and stored
// by moto.
func TestFullRecordFitsTheBudget(t *testing.T) {
	cfg := memory.Config{MaxFacts: 12, MaxFactChars: memory.MaxMaxFactChars, MaxThreads: memory.DefaultMaxThreads}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg = cfg.WithDefaults()
	at := time.Date(2999, 12, 31, 23, 59, 59, 999e6, time.UTC)
	id := func(prefix string, i int) string {
		s := prefix + strconv.Itoa(i)
		return s + strings.Repeat("x", memory.MaxIDLen-len(s))
	}
	var rec memory.Record
	for i := range cfg.MaxFacts {
		k := strconv.Itoa(i)
		rec.Facts = append(rec.Facts, memory.Fact{
			Key:            k + strings.Repeat("𝒜", cfg.MaxFactChars-len(k)),
			Value:          strings.Repeat("𝒱", cfg.MaxFactChars),
			UpdatedAt:      at,
			SourceThreadID: id("th", i),
		})
	}
	rec.Threads = map[string]memory.ThreadMark{}
	for i := range cfg.MaxThreads {
		rec.Threads[id("th", i)] = memory.ThreadMark{TurnCount: 1<<31 - 1, At: at}
	}
	rec.Tombstones = map[string]time.Time{}
	for i := range cfg.MaxTombstones {
		k := "gone" + strconv.Itoa(i)
		rec.Tombstones[k+strings.Repeat("𝒜", cfg.MaxFactChars-len(k))] = at
	}
	rec.ErasedAt = at
	rec.ClearedAt = at
	it, err := dynamorepo.EncodeRecord(scope, rec)
	if err != nil {
		t.Fatal(err)
	}
	size := dynamorepo.ItemSize(it)
	if size > cfg.MaxRecordBytes() || size > memory.ItemBudget {
		t.Errorf("a full record is %d bytes, over the config's bound %d or the budget %d", size, cfg.MaxRecordBytes(), memory.ItemBudget)
	}
	t.Logf("full record: %d bytes (bound %d, budget %d, limit %d)", size, cfg.MaxRecordBytes(), memory.ItemBudget, dynamorepo.MaxItemBytes)

	f := newFixture(t)
	if _, _, err := f.repo.Save(ctx, scope, rec); err != nil {
		t.Fatalf("Save of a full record: %v", err)
	}
	got := mustGet(t, f.repo, scope)
	if len(got.Facts) != cfg.MaxFacts || len(got.Threads) != cfg.MaxThreads {
		t.Errorf("stored %d facts and %d threads, want %d and %d", len(got.Facts), len(got.Threads), cfg.MaxFacts, cfg.MaxThreads)
	}
}
