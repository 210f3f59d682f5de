package dynamorepo_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/usermemory/usermemory/dynamorepo"
	"github.com/usermemory/usermemory/internal/docblock"
	"github.com/usermemory/usermemory/internal/samtemplate"
	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
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
			t.Errorf("%s: ItemSize = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestItemLayout holds the stored form of a record to the one the package
// doc describes, attribute by attribute, and decodes it back: items written
// before attributevalue encoded them must read the same, and their size is
// in BENCHMARKS.md.
func TestItemLayout(t *testing.T) {
	S := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	N := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	M := func(m map[string]types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: m}
	}
	at := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC) // 1795989600000 ms
	const uuid = "5f0c1a7e-8b2d-4c3e-9a4f-6d7e8f901234"
	rec := memory.Record{
		Facts: []memory.Fact{
			{Key: "city", Value: "Lisbon", UpdatedAt: at, Origin: memory.OriginConversation, SourceThreadID: "th-1", SourceThreadTitle: "Moving house"},
			{Key: "name", Value: "Ana", UpdatedAt: at.Add(time.Millisecond), Origin: memory.OriginRememberTool},
			{Key: "trip", Value: "Paris", UpdatedAt: at, Origin: memory.OriginConversation, SourceThreadID: "th-1",
				Evidence: "I'm in Paris this week", ValidUntil: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}, // 1796428800000 ms
		},
		Pending: []memory.Fact{{Key: "health", Value: "diabetic", UpdatedAt: at, Origin: memory.OriginConversation,
			SourceThreadID: "th-1", Evidence: "I'm diabetic", Category: "health"}},
		Expires: at.Add(7*24*time.Hour + 999*time.Microsecond), // rounded down
		Threads: map[string]memory.ThreadMark{"th-1": {TurnCount: 6, At: at},
			uuid: {TurnCount: 12, At: at.Add(time.Second)}}, // stored under its ThreadKey
		Tombstones: map[string]time.Time{"pet": at.Add(time.Microsecond)}, // rounded up
		ErasedAt:   at.Add(-time.Hour),
		ClearedAt:  at.Add(-time.Minute),
	}
	it, err := dynamorepo.EncodeRecord(scope, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]types.AttributeValue{
		dynamorepo.KeyAttribute: S(scope.TenantID + "#" + scope.UserID),
		"ver":                   it["ver"],
		"facts": M(map[string]types.AttributeValue{
			"city": M(map[string]types.AttributeValue{"v": S("Lisbon"), "t": N("1795989600000"), "s": S("th-1"), "n": S("Moving house")}),
			"name": M(map[string]types.AttributeValue{"v": S("Ana"), "t": N("1795989600001"), "o": S("remember_tool")}),
			"trip": M(map[string]types.AttributeValue{"v": S("Paris"), "t": N("1795989600000"), "s": S("th-1"),
				"e": S("I'm in Paris this week"), "u": N("1796428800000")}),
		}),
		"pending": M(map[string]types.AttributeValue{
			"health": M(map[string]types.AttributeValue{"v": S("diabetic"), "t": N("1795989600000"), "s": S("th-1"),
				"e": S("I'm diabetic"), "c": S("health")}),
		}),
		"endsAt":    N("1796594400000"),
		"threads":   M(map[string]types.AttributeValue{"th-1": S("6:1795989600000"), "#5KkS6upF9_Pr": S("12:1795989601000")}),
		"removed":   M(map[string]types.AttributeValue{"pet": N("1795989600001")}),
		"erasedAt":  N("1795986000000"),
		"clearedAt": N("1795989540000"),
	}
	if v, ok := it["ver"].(*types.AttributeValueMemberS); !ok || v.Value == "" {
		t.Errorf("ver = %#v, want a non-empty string", it["ver"])
	}
	if diff := cmp.Diff(want, it, cmpopts.IgnoreUnexported(types.AttributeValueMemberS{}, types.AttributeValueMemberN{}, types.AttributeValueMemberM{})); diff != "" {
		t.Errorf("item (-want +got):\n%s", diff)
	}

	back, err := dynamorepo.DecodeRecord(it)
	if err != nil {
		t.Fatal(err)
	}
	rec.Version = it["ver"].(*types.AttributeValueMemberS).Value
	rec.Tombstones["pet"] = at.Add(time.Millisecond)
	rec.Expires = at.Add(7 * 24 * time.Hour)
	rec.Threads = map[string]memory.ThreadMark{"th-1": rec.Threads["th-1"], memory.ThreadKey(uuid): rec.Threads[uuid]}
	if diff := cmp.Diff(rec, back); diff != "" {
		t.Errorf("decoded record (-want +got):\n%s", diff)
	}

	// No thread, no tombstone, no erasure, no clear, nothing pending or
	// ending: threads, erasedAt, clearedAt and endsAt are left out; facts,
	// removed and pending stay, empty (SetFact and DeleteFact update
	// entries of all three).
	it, err = dynamorepo.EncodeRecord(scope, memory.Record{})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]types.AttributeValue{
		dynamorepo.KeyAttribute: S(scope.TenantID + "#" + scope.UserID),
		"ver":                   it["ver"],
		"facts":                 M(map[string]types.AttributeValue{}),
		"removed":               M(map[string]types.AttributeValue{}),
		"pending":               M(map[string]types.AttributeValue{}),
	}
	if diff := cmp.Diff(want, it, cmpopts.IgnoreUnexported(types.AttributeValueMemberS{}, types.AttributeValueMemberM{})); diff != "" {
		t.Errorf("empty record's item (-want +got):\n%s", diff)
	}

	got, err := dynamorepo.DecodeRecord(map[string]types.AttributeValue{
		"ver": S("v1"), "facts": want["facts"], "removed": want["removed"], "erasedAt": N("0"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "v1" || got.Facts == nil || len(got.Facts) != 0 || got.Tombstones == nil || !got.ErasedAt.Equal(time.UnixMilli(0)) || !got.ClearedAt.IsZero() || got.Threads != nil ||
		got.Pending != nil || !got.Expires.IsZero() {
		t.Errorf("decoded %+v, want version v1, empty facts and tombstones, erasedAt at 0 ms, no clear, nil threads, no pending fact, no Expires", got)
	}
}

// TestFactsWithoutOriginRead: an item written before origins were stored
// reads its facts as from a conversation when they have a source thread,
// else as set by hand.
func TestFactsWithoutOriginRead(t *testing.T) {
	S := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	N := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	M := func(m map[string]types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: m}
	}
	got, err := dynamorepo.DecodeRecord(map[string]types.AttributeValue{
		"ver": S("v1"), "removed": M(map[string]types.AttributeValue{}),
		"facts": M(map[string]types.AttributeValue{
			"city": M(map[string]types.AttributeValue{"v": S("Lisbon"), "t": N("1"), "s": S("th-1")}),
			"name": M(map[string]types.AttributeValue{"v": S("Ana"), "t": N("2")}),
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []memory.Fact{
		{Key: "city", Value: "Lisbon", UpdatedAt: time.UnixMilli(1).UTC(), Origin: memory.OriginConversation, SourceThreadID: "th-1"},
		{Key: "name", Value: "Ana", UpdatedAt: time.UnixMilli(2).UTC(), Origin: memory.OriginManual},
	}
	if diff := cmp.Diff(want, got.Facts); diff != "" {
		t.Errorf("facts of an old item (-want +got):\n%s", diff)
	}
}

// TestFullRecordFitsTheBudget holds memory.RecordBytes, the core's bound
// of a record's stored size, to the item's size by DynamoDB's rules
// (ItemSize) for the largest records at the edge caps: the smallest
// (1/16), the template's largest (MaxFacts and MaxFactChars at their
// MaxValue), the defaults, the longest keys with the most facts Validate
// accepts with them, and memory's largest caps (MaxFactsUpperBound facts of
// MaxFactCharsUpperBound characters, which Validate refuses: as many facts
// as fit). Each record is full of 4-byte runes, with memory.MaxHistory
// previous values per fact and memory.Config.MaxImportedPending pending
// facts of imports (see fullRecord); the core fits it within
// memory.ItemBudget (memory.Config.FitRecord), and moto, whose PutItem enforces
// the 400 KB limit, stores it and reads it back. It writes the sizes into
// the block record-sizes of docs/decisions.md.
func TestFullRecordFitsTheBudget(t *testing.T) {
	if memory.MaxStoredRecordBytes != dynamorepo.MaxItemBytes {
		t.Errorf("memory.MaxStoredRecordBytes %d is not DynamoDB's item limit %d", memory.MaxStoredRecordBytes, dynamorepo.MaxItemBytes)
	}
	facts, chars := templateMaxValue(t, "MaxFacts"), templateMaxValue(t, "MaxFactChars")
	widest := memory.Config{MaxFactChars: memory.MaxFactCharsUpperBound}
	for widest.MaxFacts = 1; widest.Validate() == nil; widest.MaxFacts++ {
	}
	widest.MaxFacts--
	f := newFixture(t)
	rows := []string{
		"| record | facts | pending facts | imported pending facts kept | characters | previous values kept | bound (`memory.RecordBytes`) | measured item | share of `memory.ItemBudget` |",
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|",
	}
	names := []string{"the smallest", "the template's largest", "the defaults", "the longest keys", "memory's largest caps"}
	for i, cfg := range []memory.Config{{MaxFacts: 1, MaxFactChars: 16}, {MaxFacts: facts, MaxFactChars: chars}, {}, widest,
		{MaxFacts: memory.MaxFactsUpperBound, MaxFactChars: memory.MaxFactCharsUpperBound}} {
		cfg = cfg.WithDefaults()
		full := fullRecord(cfg)
		checkBound(t, names[i]+", unfitted", full)
		rec := cfg.FitRecord(full)
		size := checkBound(t, names[i], rec)
		if memory.RecordBytes(rec) > memory.ItemBudget {
			t.Errorf("%s: the fitted record's bound is %d bytes, over the budget %d", names[i], memory.RecordBytes(rec), memory.ItemBudget)
		}
		kept, imported := 0, 0
		for _, h := range rec.History {
			kept += len(h)
		}
		for _, p := range rec.Pending {
			if p.Origin == memory.OriginImported {
				imported++
			}
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %d of %d | %s | %d of %d | %s | %s | %d %% |", names[i],
			len(rec.Facts), len(rec.Pending)-imported, imported, cfg.MaxImportedPending(), docblock.Thousands(cfg.MaxFactChars),
			kept, memory.MaxHistory*len(rec.Facts), docblock.Thousands(memory.RecordBytes(rec)), docblock.Thousands(size),
			100*memory.RecordBytes(rec)/memory.ItemBudget))

		s := memory.Scope{TenantID: "acme", UserID: "full-" + strconv.Itoa(i)}
		if _, _, err := f.repo.Save(ctx, s, rec); err != nil {
			t.Fatalf("%s: Save of a full record: %v", names[i], err)
		}
		got := mustGet(t, f.repo, s)
		sortByKey := cmpopts.SortSlices(func(a, b memory.Fact) bool { return a.Key < b.Key })
		if diff := cmp.Diff(rec, got, cmpopts.EquateEmpty(), sortByKey, cmpopts.IgnoreFields(memory.Record{}, "Version", "Threads", "Tails")); diff != "" ||
			len(got.Threads) != len(rec.Threads) || len(got.Tails) != len(rec.Tails) {
			t.Errorf("%s: the full record read back (-written +read):\n%.2000s", names[i], diff)
		}
	}
	rows = append(rows, "", fmt.Sprintf("`memory.ItemBudget` %s bytes; DynamoDB's item limit (`dynamorepo.MaxItemBytes`) %s bytes.",
		docblock.Thousands(memory.ItemBudget), docblock.Thousands(dynamorepo.MaxItemBytes)))
	docblock.Check(t, filepath.Join("..", "docs", "decisions.md"), "record-sizes", strings.Join(rows, "\n"))
}

// checkBound returns the size of rec's item by DynamoDB's rules
// (ItemSize: the developer guide's "Item sizes and formats",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html,
// read 2026-12-07) and fails the test when memory.RecordBytes is below it.
func checkBound(t *testing.T, name string, rec memory.Record) int {
	t.Helper()
	it, err := dynamorepo.EncodeRecord(scope, rec)
	if err != nil {
		t.Fatal(err)
	}
	size := dynamorepo.ItemSize(it)
	if bound := memory.RecordBytes(rec); bound < size {
		t.Errorf("%s: memory.RecordBytes %d is below the item's size %d", name, bound, size)
	}
	return size
}

// templateMaxValue returns the MaxValue of the Number parameter name of
// template.yaml.
func templateMaxValue(t *testing.T, name string) int {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := samtemplate.Decode(src)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := raw["Parameters"].(map[string]any)[name].(map[string]any)
	n, err := strconv.Atoi(fmt.Sprint(p["MaxValue"]))
	if err != nil {
		t.Fatalf("template.yaml: %s has no MaxValue: %v", name, err)
	}
	return n
}

// fullRecord returns the largest record under cfg: MaxFacts facts (as
// many as fit memory.ItemBudget with their tombstones, pending facts,
// watermarks and marks, when cfg's caps are over what Validate accepts)
// and MaxPending pending facts with keys and values of MaxFactChars runes
// of 4 bytes, each from a thread ID of MaxIDLen bytes with a title of
// MaxThreadTitleChars runes of 4 bytes, evidence of MaxEvidenceChars runes
// of 4 bytes, the longest stored origin and category, an end date and a
// replaced value; memory.MaxHistory previous values per fact, each as
// large with its own provenance; MaxThreads watermarks, each with a
// forget fence, and memory.MaxTails unread tails of MaxIDLen-byte thread
// IDs; MaxTombstones tombstones with keys of MaxFactChars runes of 4
// bytes; MaxImportedPending imported pending facts as large as the
// others, memory.MaxImports import marks and memory.MaxDeclined declined
// digests (fullImports); every time at its latest.
func fullRecord(cfg memory.Config) memory.Record {
	at := time.Date(2999, 12, 31, 23, 59, 59, 999e6, time.UTC)
	id := func(prefix string, i int) string {
		s := prefix + strconv.Itoa(i)
		return s + strings.Repeat("x", memory.MaxIDLen-len(s))
	}
	longest := slices.MaxFunc(memory.Categories, func(a, b string) int { return len(a) - len(b) })
	day := time.Date(2999, 12, 31, 0, 0, 0, 0, time.UTC)
	full := func(prefix string, i int) memory.Fact {
		k := prefix + strconv.Itoa(i)
		return memory.Fact{Key: k + strings.Repeat("𝒜", cfg.MaxFactChars-len(k)), Value: strings.Repeat("𝒱", cfg.MaxFactChars),
			UpdatedAt: at, Origin: memory.OriginRememberTool, SourceThreadID: id("th", i),
			SourceThreadTitle: strings.Repeat("𝒯", memory.MaxThreadTitleChars), Evidence: strings.Repeat("𝒮", memory.MaxEvidenceChars),
			ValidUntil: day, Category: longest, SaidAt: at, Replaced: true}
	}
	rec := memory.Record{Threads: map[string]memory.ThreadMark{}, Tombstones: map[string]time.Time{},
		ErasedAt: at, ClearedAt: at, Expires: at, Tails: map[string]memory.Tail{}}
	fullImports(&rec, at, id)
	for i := range cfg.MaxThreads {
		rec.Threads[id("th", i)] = memory.ThreadMark{TurnCount: 1<<31 - 1, At: at, ForgottenAt: at}
	}
	for i := range memory.MaxTails {
		rec.Tails[id("tail", i)] = memory.Tail{TurnCount: 1<<31 - 1, SentAt: at}
	}
	// Over the caps Validate accepts, a fact, pending fact or tombstone
	// comes only while the record without history still fits.
	room := func(extra int) bool {
		return cfg.Validate() == nil || memory.RecordBytes(rec)+extra <= memory.ItemBudget
	}
	for i := range cfg.MaxFacts {
		if f := full("f", i); room(memory.RecordBytes(memory.Record{Facts: []memory.Fact{f}})) {
			rec.Facts = append(rec.Facts, f)
		}
	}
	for i := range cfg.MaxPending {
		if f := full("p", i); room(memory.RecordBytes(memory.Record{Facts: []memory.Fact{f}})) {
			rec.Pending = append(rec.Pending, f)
		}
	}
	for i := range cfg.MaxTombstones {
		k := "gone" + strconv.Itoa(i)
		k += strings.Repeat("𝒜", cfg.MaxFactChars-len(k))
		if room(memory.RecordBytes(memory.Record{Tombstones: map[string]time.Time{k: at}})) {
			rec.Tombstones[k] = at
		}
	}
	for i := range cfg.MaxImportedPending() {
		f := full("q", i) // after the "p" ones, so that the first pending fact stays one of them
		f.Origin, f.SourceThreadID = memory.OriginImported, id("imp", 0)
		rec.Pending = append(rec.Pending, f)
	}
	rec.History = map[string][]memory.PreviousValue{}
	for _, f := range rec.Facts {
		for i := range memory.MaxHistory {
			rec.History[f.Key] = append(rec.History[f.Key], memory.PreviousValue{
				Value: strings.Repeat("𝒱", cfg.MaxFactChars), ReplacedAt: at.Add(-time.Duration(i) * time.Millisecond), Origin: memory.OriginRememberTool,
				ThreadID: id("th", i), ThreadTitle: strings.Repeat("𝒯", memory.MaxThreadTitleChars),
				Evidence: strings.Repeat("𝒮", memory.MaxEvidenceChars), ValueThreadID: id("tv", i),
				ValueOrigin: memory.OriginRememberTool, ValueThreadTitle: strings.Repeat("𝒯", memory.MaxThreadTitleChars),
				ValueEvidence: strings.Repeat("𝒮", memory.MaxEvidenceChars), ValueUpdatedAt: at, ValueSaidAt: at,
				ValueValidUntil: day, ValueCategory: longest, ValueReplaced: true})
		}
	}
	return rec
}

func TestItemSizeLimit(t *testing.T) {
	f := newFixture(t)
	// A record over 400 KB is refused before any request.
	big := memory.Record{}
	value := strings.Repeat("é", 1000) // 2000 bytes
	for i := range 210 {
		big.Facts = append(big.Facts, fact("key_"+strconv.Itoa(i), value, t0))
	}
	_, _, err := f.repo.Save(ctx, scope, big)
	if !errors.Is(err, dynamorepo.ErrItemTooLarge) {
		t.Fatalf("Save of a %d-fact record: err = %v, want ErrItemTooLarge", len(big.Facts), err)
	}
	checkRequests(t, f.count, "")
	if it := f.rawItem(t, "acme#u-1"); it != nil {
		t.Fatal("an oversized record was stored")
	}
	// Just under the limit, it is sent and stored.
	big.Facts = big.Facts[:195]
	if _, _, err := f.repo.Save(ctx, scope, big); err != nil {
		t.Fatalf("Save of a %d-fact record: %v", len(big.Facts), err)
	}
	checkRequests(t, f.count, "PutItem:1")

	// moto itself rejects an oversized PutItem the same way DynamoDB does
	// (its threshold, 405,000 bytes, is a little under DynamoDB's 400 KiB),
	// and accepts one of 400,000 bytes.
	raw := func(n int) error {
		_, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(f.table),
			Item: map[string]types.AttributeValue{
				dynamorepo.KeyAttribute: &types.AttributeValueMemberS{Value: "raw"},
				"d":                     &types.AttributeValueMemberS{Value: strings.Repeat("x", n)},
			},
		})
		return err
	}
	if err := raw(dynamorepo.MaxItemBytes + 1); err == nil || !strings.Contains(err.Error(), "Item size has exceeded") {
		t.Errorf("raw oversized PutItem: err = %v, want moto's item size error", err)
	}
	if err := raw(400_000 - len("pk") - len("raw") - len("d")); err != nil {
		t.Errorf("raw PutItem under the limit: %v", err)
	}
}

func TestCorruptItems(t *testing.T) {
	f := newFixture(t)
	S := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	N := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	M := func(m map[string]types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: m}
	}
	NULL := &types.AttributeValueMemberNULL{Value: true}
	goodFact := M(map[string]types.AttributeValue{"v": S("x"), "t": N("1")})
	tests := []struct {
		name  string
		attrs map[string]types.AttributeValue
		want  string
	}{
		{"no version", map[string]types.AttributeValue{"facts": M(nil)}, "ver is missing"},
		{"version a number", map[string]types.AttributeValue{"ver": N("1")}, "ver holds a value that is not a string"},
		{"facts a string", map[string]types.AttributeValue{"ver": S("v"), "facts": S("x")}, "facts holds a string where a map is expected"},
		{"fact a string", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": S("x")})}, "facts holds a string where a map is expected"},
		{"fact value a number", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": N("1"), "t": N("1")})})}, "facts holds a value that is not a string"},
		{"fact time a string", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": S("x"), "t": S("now")})})}, "facts holds a value that is not a number"},
		{"fact time missing", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": S("x")})})}, "facts holds an entry without v or t"},
		{"fact time a fraction", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": S("x"), "t": N("1.5")})})}, "facts holds a number that is not an integer"},
		{"source a number", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": S("x"), "t": N("1"), "s": N("2")})})}, "facts holds a value that is not a string"},
		{"threads a list", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": goodFact}), "threads": &types.AttributeValueMemberL{}}, "threads holds a list where a map is expected"},
		{"thread count a string", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": M(map[string]types.AttributeValue{"n": S("2"), "t": N("1")})})}, "threads holds a value that is not a number"},
		// attributevalue alone would read these as a string or a zero.
		{"version NULL", map[string]types.AttributeValue{"ver": NULL}, "ver holds a value that is not a string"},
		{"fact value NULL", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": NULL, "t": N("1")})})}, "facts holds"},
		{"erasedAt NULL", map[string]types.AttributeValue{"ver": S("v"), "erasedAt": NULL}, "erasedAt holds a value that is not a number"},
		{"clearedAt a fraction", map[string]types.AttributeValue{"ver": S("v"), "clearedAt": N("1.5")}, "clearedAt holds a number that is not an integer"},
		{"tombstone a string", map[string]types.AttributeValue{"ver": S("v"), "removed": M(map[string]types.AttributeValue{"a": S("now")})}, "removed holds a value that is not a number"},
		{"watermark without a colon", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("2")})}, `threads holds the watermark "2", not <turn count or digest>:<unix ms>`},
		{"watermark time not a number", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("2:soon")})}, `threads holds the watermark "2:soon", not <turn count or digest>:<unix ms>`},
		{"watermark count negative", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("-2:1")})}, `threads holds the watermark "-2:1", not <turn count or digest>:<unix ms>`},
		{"watermark digest not base64", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("#AAAAAAAAAAA!:1")})}, `threads holds the watermark "#AAAAAAAAAAA!:1", not <turn count or digest>:<unix ms>`},
		{"watermark digest too short", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("#AAAA:1")})}, `threads holds the watermark "#AAAA:1", not <turn count or digest>:<unix ms>`},
		{"watermark digest time not a number", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("#AAAAAAAAAAAA:soon")})}, `threads holds the watermark "#AAAAAAAAAAAA:soon", not <turn count or digest>:<unix ms>`},
		{"watermark forget time not a number", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("2:1:soon")})}, `threads holds the watermark "2:1:soon", not <turn count or digest>:<unix ms>[:<unix ms>]`},
		{"watermark forget time zero", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("2:1:0")})}, `threads holds the watermark "2:1:0", not <turn count or digest>:<unix ms>[:<unix ms>]`},
		{"watermark with a fourth part", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": S("2:1:3:4")})}, `threads holds the watermark "2:1:3:4", not <turn count or digest>:<unix ms>[:<unix ms>]`},
		{"watermark a number", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": N("2")})}, "threads holds a watermark that is neither a string nor a map"},
		{"thread time missing", map[string]types.AttributeValue{"ver": S("v"), "threads": M(map[string]types.AttributeValue{"th": M(map[string]types.AttributeValue{"n": N("2")})})}, "threads holds an entry without n or t"},
		{"erasedAt a string", map[string]types.AttributeValue{"ver": S("v"), "erasedAt": S("yesterday")}, "erasedAt holds a value that is not a number"},
		{"evidence a number", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": S("x"), "t": N("1"), "e": N("2")})})}, "facts holds a value that is not a string"},
		{"end date a string", map[string]types.AttributeValue{"ver": S("v"), "facts": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": S("x"), "t": N("1"), "u": S("2026-12-05")})})}, "facts holds a value that is not a number"},
		{"pending a list", map[string]types.AttributeValue{"ver": S("v"), "pending": &types.AttributeValueMemberL{}}, "pending holds a list where a map is expected"},
		{"pending fact without a time", map[string]types.AttributeValue{"ver": S("v"), "pending": M(map[string]types.AttributeValue{"a": M(map[string]types.AttributeValue{"v": S("x")})})}, "pending holds an entry without v or t"},
		{"endsAt a string", map[string]types.AttributeValue{"ver": S("v"), "endsAt": S("friday")}, "endsAt holds a value that is not a number"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memory.Scope{TenantID: "acme", UserID: "corrupt-" + strconv.Itoa(i)}
			tt.attrs[dynamorepo.KeyAttribute] = S(s.TenantID + "#" + s.UserID)
			if _, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: tt.attrs}); err != nil {
				t.Fatal(err)
			}
			rec, err := f.repo.Get(ctx, s)
			if !errors.Is(err, dynamorepo.ErrCorruptItem) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Get = %+v, %v; want an ErrCorruptItem saying %q", rec, err, tt.want)
			}
			// The same item returned with a failed condition is an error too.
			if _, _, err := f.repo.Save(ctx, s, memory.Record{Version: "not-it"}); !errors.Is(err, dynamorepo.ErrCorruptItem) {
				t.Errorf("Save over a corrupt item: err = %v, want ErrCorruptItem", err)
			}
		})
	}
}

// TestOldWatermarksRead stores an item in the form written before
// watermarks were strings (thread ID -> {n, t}, a 36-character UUID among
// them) and checks that it reads under memory.ThreadKey, that a
// redelivered extraction of the UUID thread is a duplicate (one GetItem, no
// model call), and that the next extraction saves every watermark in the
// new form.
func TestOldWatermarksRead(t *testing.T) {
	f := newFixture(t)
	S := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	N := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	M := func(m map[string]types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: m}
	}
	const uuid = "5f0c1a7e-8b2d-4c3e-9a4f-6d7e8f901234"
	old := map[string]types.AttributeValue{
		dynamorepo.KeyAttribute: S(scope.TenantID + "#" + scope.UserID),
		"ver":                   S("old"),
		"facts":                 M(map[string]types.AttributeValue{"city": M(map[string]types.AttributeValue{"v": S("Lisbon"), "t": N("1795989600000"), "s": S(uuid)})}),
		"removed":               M(map[string]types.AttributeValue{}),
		"threads": M(map[string]types.AttributeValue{
			uuid:   M(map[string]types.AttributeValue{"n": N("6"), "t": N("1795989600000")}),
			"th-1": M(map[string]types.AttributeValue{"n": N("2"), "t": N("1795989500000")}),
		}),
	}
	if _, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: old}); err != nil {
		t.Fatal(err)
	}
	oldSize := dynamorepo.ItemSize(f.rawItem(t, "acme#u-1"))
	f.count.take()

	got := mustGet(t, f.repo, scope)
	want := map[string]memory.ThreadMark{
		"#5KkS6upF9_Pr": {TurnCount: 6, At: time.UnixMilli(1795989600000).UTC()},
		"th-1":          {TurnCount: 2, At: time.UnixMilli(1795989500000).UTC()},
	}
	if diff := cmp.Diff(want, got.Threads); diff != "" {
		t.Errorf("watermarks of an old item (-want +got):\n%s", diff)
	}
	f.count.take()

	model := memorytest.NewModel()
	s := newStore(t, f, memory.Config{}, memory.WithModel(model), memory.WithClock(memorytest.StepClock(t0)))
	res, err := s.Extract(ctx, extractReq(uuid, 0, 6, time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != memory.OutcomeDuplicate || model.Calls() != 0 {
		t.Errorf("redelivery of turns 0-6 of %s: outcome %q, %d model calls; want duplicate, none", uuid, res.Outcome, model.Calls())
	}
	checkRequests(t, f.count, "GetItem:1")

	model.Push(memorytest.Answer{Operations: []memory.Operation{set("pet", "cat")}})
	if _, err := s.Extract(ctx, extractReq("th-2", 0, 2, time.Time{})); err != nil {
		t.Fatal(err)
	}
	checkRequests(t, f.count, "GetItem:1 PutItem:1")
	item := f.rawItem(t, "acme#u-1")
	threads, ok := item["threads"].(*types.AttributeValueMemberM)
	if !ok {
		t.Fatalf("threads after the save: %#v", item["threads"])
	}
	for _, key := range []string{"#5KkS6upF9_Pr", "th-1"} {
		v, ok := threads.Value[key].(*types.AttributeValueMemberS)
		if !ok || v.Value != map[string]string{"#5KkS6upF9_Pr": "6:1795989600000", "th-1": "2:1795989500000"}[key] {
			t.Errorf("watermark %s after the save = %#v, want the string form", key, threads.Value[key])
		}
	}
	if _, ok := threads.Value[uuid]; ok || len(threads.Value) != 3 {
		t.Errorf("watermarks after the save: %d, the UUID key still there: %v; want 3 under their keys", len(threads.Value), ok)
	}
	t.Logf("old item %d bytes; after one more fact and thread, in the new form, %d bytes", oldSize, dynamorepo.ItemSize(item))
}

// fullImports sets in rec the largest import marks and declined digests:
// memory.MaxImports marks with IDs of MaxIDLen bytes, sources of
// MaxImportSourceChars runes of 4 bytes, the longest status and reason and
// every count at its largest; memory.MaxDeclined digests at the time at.
func fullImports(rec *memory.Record, at time.Time, id func(string, int) string) {
	most := math.MaxInt64 / 2 // 19 digits, with room to count more
	for i := range memory.MaxImports {
		rec.Imports = append(rec.Imports, memory.ImportMark{ID: id("imp", i), Source: strings.Repeat("𝒮", memory.MaxImportSourceChars),
			RequestedAt: at, DoneAt: at, Status: memory.ImportRefused, Reason: memory.ImportReasonTenantBudget, Parts: most, Statements: most, Proposed: most,
			LeftOut: memory.ImportLeftOut{Secrets: most, Instructions: most, Unsupported: most, Ended: most, Known: most, Declined: most, Deletes: most,
				Skipped: most, OverCap: most, NoRoom: most}})
	}
	rec.Declined = map[string]time.Time{}
	for i := range memory.MaxDeclined {
		rec.Declined[memory.DeclinedDigest("k", strconv.Itoa(i))] = at
	}
}

// TestHistoryWithoutProvenanceReads: an item written before a previous
// value kept its own provenance (no w) and a fact whether it replaced one
// (no r) still reads: the previous value with no ValueOrigin (its
// provenance unknown: an Undo sets it back by hand), the fact not
// Replaced; a provenance without its origin is refused as corrupt.
func TestHistoryWithoutProvenanceReads(t *testing.T) {
	S := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	N := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	M := func(m map[string]types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: m}
	}
	L := func(l ...types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberL{Value: l} }
	item := func(prev map[string]types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"ver": S("v1"), "removed": M(map[string]types.AttributeValue{}),
			"facts": M(map[string]types.AttributeValue{
				"city": M(map[string]types.AttributeValue{"v": S("Porto"), "t": N("2"), "s": S("th-2"), "h": L(M(prev))}),
			})}
	}
	got, err := dynamorepo.DecodeRecord(item(map[string]types.AttributeValue{"v": S("Lisbon"), "t": N("2"), "s": S("th-2"), "p": S("th-1")}))
	if err != nil {
		t.Fatal(err)
	}
	want := memory.PreviousValue{Value: "Lisbon", ReplacedAt: time.UnixMilli(2).UTC(), Origin: memory.OriginConversation, ThreadID: "th-2", ValueThreadID: "th-1"}
	if diff := cmp.Diff([]memory.PreviousValue{want}, got.History["city"]); diff != "" || got.Facts[0].Replaced {
		t.Errorf("history of an old item (-want +got):\n%s (replaced %v)", diff, got.Facts[0].Replaced)
	}
	_, err = dynamorepo.DecodeRecord(item(map[string]types.AttributeValue{"v": S("Lisbon"), "t": N("2"), "w": M(map[string]types.AttributeValue{"t": N("1")})}))
	if !errors.Is(err, dynamorepo.ErrCorruptItem) {
		t.Errorf("a provenance without its origin: %v, want ErrCorruptItem", err)
	}
}
