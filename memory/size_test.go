package memory

import (
	"strings"
	"testing"
	"time"
)

// TestFitRecordDropsImportsLast: a record over ItemBudget loses its
// history first, oldest first; still over, the pending facts of imports
// updated longest ago go, each counted in its import's mark as NoRoom
// and no longer Proposed; facts and other pending facts stay.
func TestFitRecordDropsImportsLast(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	big := strings.Repeat("𝒱", 2000)
	rec := Record{Imports: []ImportMark{{ID: "imp-1", Status: ImportDone, Proposed: 40}}}
	for i := range 40 {
		k := string(rune('a'+i%26)) + string(rune('a'+i/26))
		rec.Pending = append(rec.Pending, Fact{Key: "q" + k, Value: big, UpdatedAt: t0.Add(time.Duration(i) * time.Minute),
			Origin: OriginImported, SourceThreadID: "imp-1"})
		if i < 3 {
			rec.Facts = append(rec.Facts, Fact{Key: "f" + k, Value: big, UpdatedAt: t0})
			rec.History = map[string][]PreviousValue{"f" + k: {{Value: big, ReplacedAt: t0}}}
		}
	}
	rec.Pending = append(rec.Pending, Fact{Key: "talk", Value: big, UpdatedAt: t0, Origin: OriginConversation, SourceThreadID: "th-1"})
	if RecordBytes(rec) <= ItemBudget {
		t.Fatalf("the record is %d bytes, within the budget: nothing to fit", RecordBytes(rec))
	}
	got := Config{MaxFacts: 3, MaxFactChars: 2000, MaxTombstones: 1, MaxPending: 1}.FitRecord(rec)
	if n := RecordBytes(got); n > ItemBudget {
		t.Fatalf("fitted record is %d bytes, over %d", n, ItemBudget)
	}
	dropped := len(rec.Pending) - len(got.Pending)
	m := got.Imports[0]
	if got.History != nil || dropped == 0 || m.LeftOut.NoRoom != dropped || m.Proposed != 40-dropped || len(got.Facts) != 3 {
		t.Errorf("history %v, %d pending dropped, mark %+v, %d facts; want no history, the drops counted as NoRoom, 3 facts",
			got.History != nil, dropped, m, len(got.Facts))
	}
	for _, f := range got.Pending {
		if f.Origin == OriginImported && f.UpdatedAt.Before(t0.Add(time.Duration(dropped)*time.Minute)) {
			t.Errorf("kept %s, updated before a dropped one", f.Key)
		}
	}
	if rec.Imports[0].LeftOut.NoRoom != 0 || len(rec.History) != 1 {
		t.Error("FitRecord changed its argument")
	}
}
