package memory

import (
	"maps"
	"slices"
	"time"
)

// MaxHistory is the most previous values a fact keeps ([Record.History]).
// A store keeps fewer when the caps leave no room for them in the item
// budget ([Config.HistoryDepth]); docs/decisions.md says how the bound was
// chosen and the record sizes measure it.
const MaxHistory = 2

// PreviousValue is one value a fact held before a change replaced it:
// the value, when it was replaced, and the change that replaced it (its
// origin and, for a change learned in a conversation, the thread, its
// title and the user's words it rests on).
type PreviousValue struct {
	Value      string
	ReplacedAt time.Time
	// Origin, ThreadID, ThreadTitle and Evidence describe the change
	// that replaced Value, not the write that set it.
	Origin      Origin
	ThreadID    string
	ThreadTitle string
	Evidence    string
	// ValueThreadID is the thread that taught Value, "" when it was not
	// learned in a conversation: forgetting that thread forgets Value too.
	ValueThreadID string
}

// historyOverhead bounds, in bytes, what a stored previous value carries
// besides its value: the attribute names and list entry, the time, the
// longest origin, two thread IDs of MaxIDLen bytes, a title and evidence of
// runes of 4 bytes.
const historyOverhead = 16 + 8 + len(OriginRememberTool) + 2*MaxIDLen + 4*MaxThreadTitleChars + 4*MaxEvidenceChars

// historyEntryBytes is the bound of one stored previous value under c.
func (c Config) historyEntryBytes() int { return 4*c.MaxFactChars + historyOverhead }

// HistoryDepth is the number of previous values each fact keeps under c:
// [MaxHistory], or fewer when a full record with that many would not fit
// [ItemBudget] with the pending facts of imports
// ([Config.MaxImportedPending]); 0 at caps that leave no room (history is
// then not kept).
func (c Config) HistoryDepth() int {
	c = c.WithDefaults()
	room := ItemBudget - c.baseRecordBytes() - c.MaxImportedPending()*c.factBytes()
	if room <= 0 {
		return 0
	}
	return min(MaxHistory, room/(c.MaxFacts*c.historyEntryBytes()))
}

// changeOf returns a previous value of old as replaced by next, a fact
// set at next.UpdatedAt by the change next describes.
func changeOf(old, next Fact) PreviousValue {
	p := PreviousValue{Value: old.Value, ReplacedAt: next.UpdatedAt, Origin: next.Origin,
		ThreadID: next.SourceThreadID, ThreadTitle: next.SourceThreadTitle, Evidence: next.Evidence}
	if old.Origin.Learned() {
		p.ValueThreadID = old.SourceThreadID
	}
	return p
}

// pushHistory returns hist with p first, cut to depth entries; nil when
// depth is 0.
func pushHistory(hist []PreviousValue, p PreviousValue, depth int) []PreviousValue {
	if depth <= 0 {
		return nil
	}
	out := append([]PreviousValue{p}, hist...)
	return out[:min(len(out), depth)]
}

// tidyHistory returns the histories of rec kept within their bounds: only
// for a fact held, at most depth entries each, nil when none is left.
func tidyHistory(rec Record, depth int) map[string][]PreviousValue {
	if len(rec.History) == 0 || depth <= 0 {
		return nil
	}
	held := make(map[string]bool, len(rec.Facts))
	for _, f := range rec.Facts {
		held[f.Key] = true
	}
	out := make(map[string][]PreviousValue, len(rec.History))
	for k, h := range rec.History {
		if held[k] && len(h) > 0 {
			out[k] = slices.Clone(h[:min(len(h), depth)])
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// withoutThreadHistory returns hist without the history of every fact one
// of whose previous values or changes came from threadID: forgetting a
// thread forgets the values it taught, previous ones included, and what
// it said to replace them.
func withoutThreadHistory(hist map[string][]PreviousValue, threadID string) map[string][]PreviousValue {
	out := maps.Clone(hist)
	for k, h := range out {
		if slices.ContainsFunc(h, func(p PreviousValue) bool { return p.ThreadID == threadID || p.ValueThreadID == threadID }) {
			delete(out, k)
		}
	}
	return out
}

// recordHistory returns hist with, for every fact of after whose value
// differs from the fact of the same key in before, the old value pushed
// as replaced by the new fact; a copy, never hist itself. The histories
// of facts no longer held go at the record's tidy.
func recordHistory(before, after []Fact, hist map[string][]PreviousValue, depth int) map[string][]PreviousValue {
	out := make(map[string][]PreviousValue, len(hist)+1)
	for k, h := range hist {
		out[k] = slices.Clone(h)
	}
	old := make(map[string]Fact, len(before))
	for _, f := range before {
		old[f.Key] = f
	}
	for _, f := range after {
		if o, ok := old[f.Key]; ok && o.Value != f.Value {
			out[f.Key] = pushHistory(out[f.Key], changeOf(o, f), depth)
		}
	}
	return out
}
