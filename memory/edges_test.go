package memory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/usermemory/usermemory/memory"
	"github.com/usermemory/usermemory/memory/memorytest"
)

// edgeCaps are the caps the edge tests run at: the smallest, the
// defaults, the template's largest, the template's most facts with its
// shortest values, and the longest values memory accepts with the most
// facts Validate accepts with them (memory.MaxFactsUpperBound facts of
// memory.MaxFactCharsUpperBound characters are refused: a record of them
// could not fit an item whatever its history).
func edgeCaps(t *testing.T) []memory.Config {
	t.Helper()
	widest := memory.Config{MaxFactChars: memory.MaxFactCharsUpperBound}
	for widest.MaxFacts = 1; widest.Validate() == nil; widest.MaxFacts++ {
	}
	widest.MaxFacts--
	if widest.MaxFacts < 1 || (memory.Config{MaxFacts: memory.MaxFactsUpperBound, MaxFactChars: memory.MaxFactCharsUpperBound}).Validate() == nil {
		t.Fatalf("the widest config has %d facts", widest.MaxFacts)
	}
	caps := []memory.Config{{MaxFacts: 1, MaxFactChars: 16}, {MaxFacts: 30, MaxFactChars: 200}, {MaxFacts: 75, MaxFactChars: 200},
		{MaxFacts: 75, MaxFactChars: 16}, widest}
	for i := range caps {
		caps[i].EvidenceCheckOff = true
		if err := caps[i].Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return caps
}

// wide returns a value of n characters, 4 bytes each, ending in tag.
func wide(n int, tag string) string { return strings.Repeat("𝒱", n-len(tag)) + tag }

// TestUndoRestoresAtEveryCap: at each edge cap, three threads set
// home_city in turn; the fact keeps MaxHistory previous values; the
// change list of the last thread names the value it replaced; its Undo
// sets the fact back exactly as the thread before left it (value, origin,
// thread, title, evidence, dates); forgetting that thread then removes
// it.
func TestUndoRestoresAtEveryCap(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range edgeCaps(t) {
		t.Run(fmt.Sprintf("%d/%d", cfg.MaxFacts, cfg.MaxFactChars), func(t *testing.T) {
			n := cfg.MaxFactChars
			model := memorytest.NewModel()
			s, _ := newStore(t, cfg, memory.WithModel(model))
			var held []memory.Fact
			for i := 1; i <= 3; i++ {
				v, e := wide(n, strconv.Itoa(i)), "I moved, place "+strconv.Itoa(i)
				model.Push(memorytest.Answer{Operations: []memory.Operation{ev("home_city", v, e)}})
				req := extractReq(memorytest.Ana, "th-"+strconv.Itoa(i), 0, 2, e+": "+v)
				req.ThreadTitle = wide(memory.MaxThreadTitleChars, "t"+strconv.Itoa(i))
				extractAll(t, s, req)
				facts, err := s.GetFacts(ctx, memorytest.Ana)
				if err != nil || len(facts) != 1 || facts[0].Value != v || facts[0].Evidence != e || facts[0].SourceThreadTitle != req.ThreadTitle {
					t.Fatalf("after th-%d: %d facts, %v; want th-%d's value, evidence and title", i, len(facts), err, i)
				}
				held = append(held, facts[0])
			}
			page, err := s.GetFactsAndPending(ctx, memorytest.Ana)
			if err != nil {
				t.Fatal(err)
			}
			if h := page.History["home_city"]; len(h) != memory.MaxHistory || h[0].Value != held[1].Value || h[1].Value != held[0].Value {
				t.Fatalf("history of %d values, want the %d values before the last, newest first", len(h), memory.MaxHistory)
			}
			changes, err := s.ThreadChanges(ctx, memorytest.Ana, "th-3", t0)
			if err != nil || len(changes) != 1 || !changes[0].HadPrevious || changes[0].Previous != held[1].Value || changes[0].PreviousUnknown {
				t.Fatalf("%d changes of th-3 (%v), want one with the value of th-2 as previous", len(changes), err)
			}
			if u, err := s.UndoChange(ctx, memorytest.Ana, "th-3", "home_city"); err != nil || u.Restored != held[1].Value || u.Removed {
				t.Fatalf("UndoChange removed %v, %v; want th-2's value restored", u.Removed, err)
			}
			facts, err := s.GetFacts(ctx, memorytest.Ana)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]memory.Fact{held[1]}, facts); diff != "" {
				t.Errorf("facts after the undo (-want th-2's fact as it was, +got):\n%s", diff)
			}
			if _, err := s.ForgetThread(ctx, memorytest.Ana, "th-2"); err != nil {
				t.Fatal(err)
			}
			if facts, err := s.GetFacts(ctx, memorytest.Ana); err != nil || len(facts) != 0 {
				t.Errorf("facts after forgetting th-2 = %+v, %v; want none: th-2 taught the restored value", facts, err)
			}
		})
	}
}

// replacedFact is a fact th-9 set at t0, replacing a value that no
// history holds.
func replacedFact(cfg memory.Config) memory.Fact {
	return memory.Fact{Key: "home_city", Value: wide(cfg.MaxFactChars, "9"), UpdatedAt: t0, Origin: memory.OriginConversation,
		SourceThreadID: "th-9", Replaced: true}
}

// TestUndoOfAnUnknownEarlierValue: at each edge cap, a fact whose setting
// replaced a value its history no longer holds is listed with
// PreviousUnknown, and its Undo is refused with CodeEarlierValueUnknown,
// a userMessage, and no write.
func TestUndoOfAnUnknownEarlierValue(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range edgeCaps(t) {
		t.Run(fmt.Sprintf("%d/%d", cfg.MaxFacts, cfg.MaxFactChars), func(t *testing.T) {
			s, repo := newStore(t, cfg)
			repo.Put(memorytest.Ana, memory.Record{Facts: []memory.Fact{replacedFact(cfg)}, Tombstones: map[string]time.Time{}})
			before, _ := repo.Record(memorytest.Ana)
			changes, err := s.ThreadChanges(ctx, memorytest.Ana, "th-9", t0.Add(-time.Hour))
			if err != nil || len(changes) != 1 || changes[0].HadPrevious || !changes[0].PreviousUnknown {
				t.Errorf("changes = %+v, %v; want one whose previous value is unknown", changes, err)
			}
			u, err := s.UndoChange(ctx, memorytest.Ana, "th-9", "home_city")
			var me *memory.Error
			if !errors.As(err, &me) || me.Code != memory.CodeEarlierValueUnknown || me.UserMessage == "" || u != (memory.Undo{}) {
				t.Errorf("UndoChange = %+v, %v; want CodeEarlierValueUnknown with a userMessage", u, err)
			}
			after, _ := repo.Record(memorytest.Ana)
			if diff := cmp.Diff(before, after); diff != "" || repo.Calls("Save") != 0 {
				t.Errorf("the refused Undo changed the record (%d saves):\n%s", repo.Calls("Save"), diff)
			}
		})
	}
}

// fullRecord returns a record at cfg's caps whose facts are at their
// largest (keys and values of MaxFactChars runes of 4 bytes, from thread
// IDs of MaxIDLen bytes, with the longest title and evidence), each set
// by its own thread an hour after the one before, replacing two values of
// the same size that its history holds; with MaxTombstones tombstones as
// large, and the pending facts of an import as large, as many as the
// record leaves room for without its history but for one previous value
// at its largest.
func fullRecord(cfg memory.Config) memory.Record {
	long := func(prefix string, i, n int) string {
		s := prefix + strconv.Itoa(i)
		return s + strings.Repeat("x", n-len(s))
	}
	key := func(prefix string, i int) string {
		return prefix + strconv.Itoa(i) + wide(cfg.MaxFactChars-len(strconv.Itoa(i))-len(prefix), "")
	}
	rec := memory.Record{Tombstones: map[string]time.Time{}, History: map[string][]memory.PreviousValue{}}
	for i := range cfg.WithDefaults().MaxTombstones {
		rec.Tombstones[key("gone", i)] = t0.Add(-time.Hour)
	}
	for i := range cfg.MaxFacts {
		at := t0.Add(time.Duration(i-cfg.MaxFacts) * time.Hour)
		rec.Facts = append(rec.Facts, memory.Fact{Key: key("k", i), Value: wide(cfg.MaxFactChars, "v"),
			UpdatedAt: at, Origin: memory.OriginConversation, SourceThreadID: long("th", i, memory.MaxIDLen), Replaced: true,
			SourceThreadTitle: wide(memory.MaxThreadTitleChars, ""), Evidence: wide(memory.MaxEvidenceChars, "")})
	}
	// The import leaves room for one previous value at its largest: the
	// newest change's, which the budget keeps before any older one.
	newestPrevious := 4*(cfg.MaxFactChars+memory.MaxThreadTitleChars+memory.MaxEvidenceChars) + 2*memory.MaxIDLen + 256
	for i := range cfg.MaxImportedPending() {
		q := memory.Fact{Key: key("q", i), Value: wide(cfg.MaxFactChars, "q"), UpdatedAt: t0.Add(-time.Hour),
			Origin: memory.OriginImported, SourceThreadID: "imp-1", SourceThreadTitle: "ChatGPT",
			Evidence: wide(memory.MaxEvidenceChars, ""), SaidAt: t0.Add(-time.Hour)}
		next := rec
		next.Pending = append(slices.Clone(rec.Pending), q)
		if memory.RecordBytes(next)+newestPrevious > memory.ItemBudget {
			break
		}
		rec = next
	}
	for _, f := range rec.Facts {
		for j := range memory.MaxHistory {
			rec.History[f.Key] = append(rec.History[f.Key], memory.PreviousValue{Value: wide(cfg.MaxFactChars, "p"),
				ReplacedAt: f.UpdatedAt.Add(-time.Duration(j) * time.Minute), Origin: memory.OriginConversation, ThreadID: f.SourceThreadID,
				ThreadTitle: f.SourceThreadTitle, Evidence: f.Evidence, ValueThreadID: long("tv", j, memory.MaxIDLen),
				ValueOrigin: memory.OriginConversation, ValueThreadTitle: f.SourceThreadTitle, ValueEvidence: f.Evidence,
				ValueUpdatedAt: f.UpdatedAt.Add(-time.Hour), ValueReplaced: true})
		}
	}
	return rec
}

// TestAFullRecordTrimsHistory: at each edge cap where a record can reach
// ItemBudget, a record over it with full histories is written within it
// by the next write: the oldest previous values go first, the newest
// change keeps its own, and the Undo of a change whose previous values
// went is CodeEarlierValueUnknown, not a removal. At the caps where no
// record can reach the budget, the test says so.
func TestAFullRecordTrimsHistory(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range edgeCaps(t) {
		t.Run(fmt.Sprintf("%d/%d", cfg.MaxFacts, cfg.MaxFactChars), func(t *testing.T) {
			rec := fullRecord(cfg)
			model := memorytest.NewModel()
			s, repo := newStore(t, cfg, memory.WithModel(model))
			repo.Put(memorytest.Ana, rec)
			newest := rec.Facts[cfg.MaxFacts-1] // set last
			v := wide(cfg.MaxFactChars, "n")
			model.Push(memorytest.Answer{Operations: []memory.Operation{ev(newest.Key, v, v)}})
			extractAll(t, s, extractReq(memorytest.Ana, "th-new", 0, 2, "Now "+v))
			got, _ := repo.Record(memorytest.Ana)
			if memory.RecordBytes(rec) <= memory.ItemBudget {
				// No record at these caps reaches the budget: every fact
				// keeps all its previous values.
				if cfg.MaxFactChars >= memory.DefaultMaxFactChars {
					t.Fatalf("a record of %d bytes at these caps is within the budget: the test reaches no trimming", memory.RecordBytes(rec))
				}
				for _, f := range got.Facts {
					if n := len(got.History[f.Key]); n != memory.MaxHistory {
						t.Errorf("a full record of %d bytes, within the budget, keeps %d previous values of a fact, want %d", memory.RecordBytes(rec), n, memory.MaxHistory)
					}
				}
				return
			}
			if n := memory.RecordBytes(got); n > memory.ItemBudget {
				t.Errorf("the record after the write is %d bytes, over the budget %d", n, memory.ItemBudget)
			}
			if len(got.Pending) != len(rec.Pending) {
				t.Errorf("%d pending facts after the write, want the %d that fit without the history", len(got.Pending), len(rec.Pending))
			}
			if h := got.History[newest.Key]; len(h) == 0 || h[0].ThreadID != "th-new" || h[0].Value != newest.Value {
				t.Errorf("the newest change has %d previous values, want th-new's replacement of the value first", len(h))
			}
			oldest := rec.Facts[0] // set first
			if len(got.History[oldest.Key]) != 0 {
				t.Fatalf("the oldest change keeps %d previous values; the budget trims it first", len(got.History[oldest.Key]))
			}
			u, err := s.UndoChange(ctx, memorytest.Ana, oldest.SourceThreadID, oldest.Key)
			if memory.ErrorCode(err) != memory.CodeEarlierValueUnknown || u.Removed {
				t.Errorf("Undo of a change whose previous values were trimmed = %+v, %v; want CodeEarlierValueUnknown", u, err)
			}
			if after, _ := repo.Record(memorytest.Ana); after.Version != got.Version {
				t.Errorf("the refused Undo wrote the record")
			}
		})
	}
}

// TestImportCountsWhatHasNoRoom: at the widest caps, with a record whose
// facts, pending facts and tombstones leave room for fewer facts than an
// import finds, the import proposes what fits, counts the rest as left
// out for want of room (NoRoom), takes its room from the history, and
// the record stays within ItemBudget.
func TestImportCountsWhatHasNoRoom(t *testing.T) {
	ctx := context.Background()
	cfg := edgeCaps(t)[4]
	n := cfg.MaxFactChars
	seed := fullRecord(cfg)
	seed.Pending = nil
	for i := range 8 {
		seed.Pending = append(seed.Pending, memory.Fact{Key: "p" + strconv.Itoa(i) + wide(n-2, ""), Value: wide(n, "p"),
			UpdatedAt: t0, Origin: memory.OriginConversation, SourceThreadID: "th-p", Category: "health"})
	}
	var ops []memory.Operation
	var lines []string
	for i := range 5 {
		ops = append(ops, ev("q"+strconv.Itoa(i)+wide(n-2, ""), wide(n, "q"), ""))
		lines = append(lines, "- item "+strconv.Itoa(i))
	}
	one := memory.RecordBytes(memory.Record{Pending: []memory.Fact{{Key: ops[0].Key, Value: ops[0].Value,
		Origin: memory.OriginImported, SourceThreadID: "imp-1", SourceThreadTitle: "ChatGPT"}}}) - memory.RecordBytes(memory.Record{})
	noHistory := seed
	noHistory.History = nil
	if room := memory.ItemBudget - memory.RecordBytes(noHistory); room < one || room >= len(ops)*one {
		t.Fatalf("the seed leaves room for %d of %d imported facts; the test needs some and not all", room/one, len(ops))
	}
	model := memorytest.NewModel(memorytest.Answer{Operations: ops})
	s, repo := newStore(t, cfg, memory.WithModel(model))
	repo.Put(memorytest.Ana, seed)
	res, err := s.Import(ctx, importReq(memorytest.Ana, "imp-1", strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Mark
	if m.Proposed < 1 || m.LeftOut.NoRoom < 1 || m.Proposed+m.LeftOut.NoRoom != len(ops) {
		t.Errorf("proposed %d, no room %d; want some of each, %d in all", m.Proposed, m.LeftOut.NoRoom, len(ops))
	}
	got, _ := repo.Record(memorytest.Ana)
	if b := memory.RecordBytes(got); b > memory.ItemBudget {
		t.Errorf("the record is %d bytes, over the budget %d", b, memory.ItemBudget)
	}
	imported := 0
	for _, f := range got.Pending {
		if f.Origin == memory.OriginImported {
			imported++
		}
	}
	if imported != m.Proposed || len(got.History) >= len(seed.History) {
		t.Errorf("%d imported pending facts stored, %d proposed; %d of %d histories left (the import takes their room)",
			imported, m.Proposed, len(got.History), len(seed.History))
	}
}

// TestUndoOfAnOldEntry: a previous value stored before its provenance was
// kept (no ValueOrigin) is set back by the Undo as set by hand, as an
// Undo did before: the value the user asked back, never a removal.
func TestUndoOfAnOldEntry(t *testing.T) {
	ctx := context.Background()
	s, repo := newStore(t, memory.Config{})
	porto := memory.Fact{Key: "home_city", Value: "Porto", UpdatedAt: t0, Origin: memory.OriginConversation, SourceThreadID: "th-2"}
	repo.Put(memorytest.Ana, memory.Record{Facts: []memory.Fact{porto}, Tombstones: map[string]time.Time{},
		History: map[string][]memory.PreviousValue{"home_city": {{Value: "Lisbon", ReplacedAt: t0, Origin: memory.OriginConversation,
			ThreadID: "th-2", ValueThreadID: "th-1"}}}})
	if u, err := s.UndoChange(ctx, memorytest.Ana, "th-2", "home_city"); err != nil || u.Restored != "Lisbon" {
		t.Fatalf("UndoChange = %+v, %v; want Lisbon restored", u, err)
	}
	facts, err := s.GetFacts(ctx, memorytest.Ana)
	if err != nil || len(facts) != 1 || facts[0].Value != "Lisbon" || facts[0].Origin != memory.OriginManual || facts[0].SourceThreadID != "" {
		t.Errorf("facts after the undo = %+v, %v; want Lisbon set by hand", facts, err)
	}
}

// TestWritesInPlaceStayWithinTheLimit: at the template's largest caps, a
// record fitted by a whole write leaves room for every write of one fact
// in place that may follow: each small fact set again by hand at its
// largest and a tombstone of the largest key in every free slot keep it
// within MaxStoredRecordBytes, DynamoDB's item limit.
func TestWritesInPlaceStayWithinTheLimit(t *testing.T) {
	ctx := context.Background()
	cfg := edgeCaps(t)[2]
	n := cfg.MaxFactChars
	seed := fullRecord(cfg) // every fact at its largest with a full history, an import's pending facts
	small := map[string]bool{}
	for i := range seed.Facts[:35] {
		f := &seed.Facts[i]
		delete(seed.History, f.Key)
		f.Key, f.Value, f.Evidence, f.SourceThreadTitle, f.Replaced = fmt.Sprintf("small_%02d", i), "x", "", "", false
		small[f.Key] = true
	}
	seed.Tombstones = map[string]time.Time{}
	model := memorytest.NewModel(memorytest.Answer{Operations: []memory.Operation{ev(seed.Facts[74].Key, wide(n, "n"), "")}})
	s, repo := newStore(t, cfg, memory.WithModel(model))
	repo.Put(memorytest.Ana, seed)
	extractAll(t, s, extractReq(memorytest.Ana, "th-new", 0, 2, "Now"))
	for k := range small {
		if _, err := s.Put(ctx, memorytest.Ana, memory.FactInput{Key: k, Value: wide(n, "b")}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cfg.WithDefaults().MaxTombstones {
		if err := s.RemoveFact(ctx, memorytest.Ana, "gone"+strconv.Itoa(i)+wide(n-6, "")); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := repo.Record(memorytest.Ana)
	if b := memory.RecordBytes(got); b > memory.MaxStoredRecordBytes {
		t.Errorf("after the writes in place the record is %d bytes, over %d", b, memory.MaxStoredRecordBytes)
	}
	if len(got.Tombstones) != cfg.WithDefaults().MaxTombstones || repo.Calls("SetFact") == 0 {
		t.Errorf("%d tombstones, %d SetFact calls: the writes did not happen in place", len(got.Tombstones), repo.Calls("SetFact"))
	}
}
