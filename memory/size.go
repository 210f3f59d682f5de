package memory

import (
	"slices"
	"strings"
)

// Fixed parts of what [RecordBytes] counts, in bytes, rounded up: the
// attribute names, map and list entries, numbers (20 digits at most each)
// and flags that a stored fact and a stored previous value carry besides
// their strings, which are counted byte for byte.
const (
	factFixedBytes    = 16 + 8*8
	historyFixedBytes = 128
)

// RecordBytes is an upper bound of the size of rec as a repository stores
// it, computed from what rec holds: its strings byte for byte (keys,
// values, thread IDs and titles, evidence, origins, categories), and for
// every entry the fixed part of its stored form (attribute names, numbers)
// at its largest. The store keeps it within [ItemBudget] at every
// whole-record write ([Config.FitRecord]); the repository's tests hold it
// to the stored item's size.
func RecordBytes(rec Record) int {
	n := recordOverhead + importsBytes
	for _, f := range rec.Facts {
		n += storedFactBytes(f)
	}
	for _, f := range rec.Pending {
		n += storedFactBytes(f)
	}
	for _, h := range rec.History {
		for _, p := range h {
			n += previousBytes(p)
		}
	}
	for id := range rec.Threads {
		n += len(ThreadKey(id)) + threadOverhead
	}
	for id := range rec.Tails {
		n += len(ThreadKey(id)) + threadOverhead
	}
	for k := range rec.Tombstones {
		n += len(k) + tombstoneOverhead
	}
	return n
}

// storedFactBytes bounds the stored size of one fact or pending fact.
func storedFactBytes(f Fact) int {
	return factFixedBytes + len(f.Key) + len(f.Value) + len(f.Origin) + len(f.SourceThreadID) +
		len(f.SourceThreadTitle) + len(f.Evidence) + len(f.Category)
}

// previousBytes bounds the stored size of one previous value.
func previousBytes(p PreviousValue) int {
	return historyFixedBytes + len(p.Value) + len(p.Origin) + len(p.ThreadID) + len(p.ThreadTitle) + len(p.Evidence) +
		len(p.ValueThreadID) + len(p.ValueOrigin) + len(p.ValueThreadTitle) + len(p.ValueEvidence) + len(p.ValueCategory)
}

// MaxStoredRecordBytes is the largest record, by [RecordBytes], that a
// [Repository] must store: DynamoDB's 400 KB item limit, which the
// DynamoDB repository's tests hold it to. [Config.FitRecord] keeps a whole
// write within it with room for every write of one fact in place
// ([Repository.SetFact], [Repository.DeleteFact]) that may follow before
// the next whole write.
const MaxStoredRecordBytes = 400 * 1024

// inPlaceGrowth bounds how much rec may grow, by [RecordBytes], through
// writes of one fact in place before the next whole write: every fact
// held set again at its largest under c, every free fact slot filled at
// its largest, every free tombstone slot taken by a key at its largest.
func (c Config) inPlaceGrowth(rec Record) int {
	n := max(c.MaxFacts-len(rec.Facts), 0)*c.factBytes() + max(c.MaxTombstones-len(rec.Tombstones), 0)*(4*c.MaxFactChars+tombstoneOverhead)
	for _, f := range rec.Facts {
		n += max(c.factBytes()-storedFactBytes(f), 0)
	}
	return n
}

// overBudget returns how many bytes, by [RecordBytes], rec is over what a
// whole write under c may store: [ItemBudget], and [MaxStoredRecordBytes]
// with room for the writes in place that may follow
// ([Config.inPlaceGrowth]); 0 or less when it fits.
func (c Config) overBudget(rec Record) int {
	size := RecordBytes(rec)
	return max(size-ItemBudget, size+c.inPlaceGrowth(rec)-MaxStoredRecordBytes)
}

// FitRecord returns rec as a whole write under c may store it
// ([Config.overBudget]: within [ItemBudget] by [RecordBytes], with room
// for the writes of one fact in place that may follow): while it is
// over, the oldest previous value of any fact goes first (by ReplacedAt,
// ties by key); then, still over, the pending fact of an import updated
// longest ago, counted in its import's mark as left out for want of room
// (NoRoom, no longer Proposed). What remains is bounded by
// [Config.Validate]. It changes copies, never rec's maps and slices.
func (c Config) FitRecord(rec Record) Record {
	c = c.WithDefaults()
	over := c.overBudget(rec)
	if over <= 0 {
		return rec
	}
	rec.History, over = trimHistory(rec.History, over)
	if over <= 0 {
		return rec
	}
	imported := filterFacts(rec.Pending, func(f Fact) bool { return f.Origin == OriginImported })
	slices.SortStableFunc(imported, func(a, b Fact) int {
		if c := a.UpdatedAt.Compare(b.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	drop := map[string]bool{}
	rec.Imports = slices.Clone(rec.Imports)
	for _, f := range imported {
		if over <= 0 {
			break
		}
		drop[f.Key] = true
		over -= storedFactBytes(f)
		if i := slices.IndexFunc(rec.Imports, func(m ImportMark) bool { return m.ID == f.SourceThreadID }); i >= 0 {
			rec.Imports[i].LeftOut.NoRoom++
			rec.Imports[i].Proposed = max(rec.Imports[i].Proposed-1, 0)
		}
	}
	rec.Pending = filterFacts(rec.Pending, func(f Fact) bool { return !drop[f.Key] })
	return rec
}

// trimHistory returns a copy of hist without its oldest previous values
// (by ReplacedAt, ties by key), dropped until over bytes are freed or none
// is left, and what is still over.
func trimHistory(hist map[string][]PreviousValue, over int) (map[string][]PreviousValue, int) {
	type entry struct {
		key string
		p   PreviousValue
	}
	var all []entry
	for k, h := range hist {
		for _, p := range h {
			all = append(all, entry{k, p})
		}
	}
	slices.SortFunc(all, func(a, b entry) int {
		if c := a.p.ReplacedAt.Compare(b.p.ReplacedAt); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	out := make(map[string][]PreviousValue, len(hist))
	for k, h := range hist {
		out[k] = slices.Clone(h)
	}
	for _, e := range all {
		if over <= 0 {
			break
		}
		h := out[e.key] // newest first: the oldest is the last
		over -= previousBytes(h[len(h)-1])
		if out[e.key] = h[:len(h)-1]; len(out[e.key]) == 0 {
			delete(out, e.key)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, over
}
