package memory

import (
	"maps"
	"slices"
	"time"
)

// MaxHistory is the most previous values a fact keeps ([Record.History]),
// at every cap. A record that would be over [ItemBudget] keeps fewer: its
// whole-record write drops the oldest previous values first ([Config.FitRecord]);
// docs/decisions.md says why the bound is the record's real size.
const MaxHistory = 2

// PreviousValue is one value a fact held before a change replaced it:
// the value and its own provenance (how it came to be stored, as the fact
// held it), when it was replaced, and the change that replaced it (its
// origin and, for a change learned in a conversation, the thread, its
// title and the user's words it rests on). An Undo of that change
// ([Store.UndoChange]) sets the fact back as it was.
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
	// ValueOrigin, ValueThreadTitle, ValueEvidence, ValueUpdatedAt,
	// ValueSaidAt, ValueValidUntil, ValueCategory and ValueReplaced are
	// the Origin, SourceThreadTitle, Evidence, UpdatedAt, SaidAt,
	// ValidUntil, Category and Replaced of the fact that held Value.
	// ValueOrigin is "" for a previous value stored before they were
	// kept: its provenance is not known.
	ValueOrigin      Origin
	ValueThreadTitle string
	ValueEvidence    string
	ValueUpdatedAt   time.Time
	ValueSaidAt      time.Time
	ValueValidUntil  time.Time
	ValueCategory    string
	ValueReplaced    bool
}

// fact returns the fact of key that held p's value, as it was. A previous
// value whose provenance is not known (stored before it was kept) comes
// back as set by hand at now, as an Undo restored it before.
func (p PreviousValue) fact(key string, now time.Time) Fact {
	if p.ValueOrigin == "" {
		return Fact{Key: key, Value: p.Value, UpdatedAt: now, Origin: OriginManual}
	}
	return Fact{Key: key, Value: p.Value, UpdatedAt: p.ValueUpdatedAt, Origin: p.ValueOrigin,
		SourceThreadID: p.ValueThreadID, SourceThreadTitle: p.ValueThreadTitle, Evidence: p.ValueEvidence,
		ValidUntil: p.ValueValidUntil, Category: p.ValueCategory, SaidAt: p.ValueSaidAt, Replaced: p.ValueReplaced}
}

// changeOf returns a previous value of old as replaced by next, a fact
// set at next.UpdatedAt by the change next describes.
func changeOf(old, next Fact) PreviousValue {
	p := PreviousValue{Value: old.Value, ReplacedAt: next.UpdatedAt, Origin: next.Origin,
		ThreadID: next.SourceThreadID, ThreadTitle: next.SourceThreadTitle, Evidence: next.Evidence,
		ValueOrigin: old.Origin, ValueThreadTitle: old.SourceThreadTitle, ValueEvidence: old.Evidence,
		ValueUpdatedAt: old.UpdatedAt, ValueSaidAt: old.SaidAt, ValueValidUntil: old.ValidUntil,
		ValueCategory: old.Category, ValueReplaced: old.Replaced}
	if old.Origin.Learned() {
		p.ValueThreadID = old.SourceThreadID
	}
	return p
}

// pushHistory returns hist with p first, cut to MaxHistory entries.
func pushHistory(hist []PreviousValue, p PreviousValue) []PreviousValue {
	out := append([]PreviousValue{p}, hist...)
	return out[:min(len(out), MaxHistory)]
}

// tidyHistory returns the histories of rec kept within their bounds: only
// for a fact held, at most MaxHistory entries each, nil when none is left.
func tidyHistory(rec Record) map[string][]PreviousValue {
	if len(rec.History) == 0 {
		return nil
	}
	held := make(map[string]bool, len(rec.Facts))
	for _, f := range rec.Facts {
		held[f.Key] = true
	}
	out := make(map[string][]PreviousValue, len(rec.History))
	for k, h := range rec.History {
		if held[k] && len(h) > 0 {
			out[k] = slices.Clone(h[:min(len(h), MaxHistory)])
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

// recordHistory returns after with Replaced set on every fact whose value
// differs from the fact of the same key in before, and hist with, for
// each of them, the old value pushed as replaced by the new fact; copies,
// never after or hist themselves. The histories of facts no longer held
// go at the record's tidy.
func recordHistory(before, after []Fact, hist map[string][]PreviousValue) ([]Fact, map[string][]PreviousValue) {
	out := make(map[string][]PreviousValue, len(hist)+1)
	for k, h := range hist {
		out[k] = slices.Clone(h)
	}
	old := make(map[string]Fact, len(before))
	for _, f := range before {
		old[f.Key] = f
	}
	facts := slices.Clone(after)
	for i, f := range facts {
		if o, ok := old[f.Key]; ok && o.Value != f.Value {
			out[f.Key] = pushHistory(out[f.Key], changeOf(o, f))
			facts[i].Replaced = true
		}
	}
	return facts, out
}
