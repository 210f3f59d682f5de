package memory

import (
	"sort"
	"time"
)

// capFacts drops the facts updated longest ago until at most max remain,
// never the one named keep. Ties go by key, so the result is deterministic.
func capFacts(facts []Fact, max int, keep string) []Fact {
	if len(facts) <= max {
		return facts
	}
	out := make([]Fact, len(facts))
	copy(out, facts)
	sort.SliceStable(out, func(i, j int) bool {
		// Newest first; the kept fact counts as newest of all.
		if (out[i].Key == keep) != (out[j].Key == keep) {
			return out[i].Key == keep
		}
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.After(out[j].UpdatedAt)
		}
		return out[i].Key < out[j].Key
	})
	out = out[:max]
	sortFacts(out)
	return out
}

// markThread returns a copy of threads with id's watermark set to m (the
// forget fence of id's stored mark, if any, stays), keeping the max most
// recently touched threads (by the later of At and ForgottenAt), and the
// latest forget fence among the marks it dropped: the caller folds it
// into ClearedAt, which then fences every thread's messages requested
// before it, more than the dropped fence, never less.
func markThread(threads map[string]ThreadMark, id string, m ThreadMark, max int) (map[string]ThreadMark, time.Time) {
	out := make(map[string]ThreadMark, len(threads)+1)
	for k, v := range threads {
		out[k] = v
	}
	if old, ok := threads[id]; ok && old.ForgottenAt.After(m.ForgottenAt) {
		m.ForgottenAt = old.ForgottenAt
	}
	out[id] = m
	var folded time.Time
	if len(out) <= max {
		return out, folded
	}
	touched := func(m ThreadMark) time.Time {
		if m.ForgottenAt.After(m.At) {
			return m.ForgottenAt
		}
		return m.At
	}
	ids := make([]string, 0, len(out))
	for k := range out {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := touched(out[ids[i]]), touched(out[ids[j]])
		if !a.Equal(b) {
			return a.After(b)
		}
		return ids[i] < ids[j]
	})
	for _, k := range ids[max:] {
		if k != id {
			if f := out[k].ForgottenAt; f.After(folded) {
				folded = f
			}
			delete(out, k)
		}
	}
	return out, folded
}
