package memory

import "sort"

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

// markThread returns a copy of threads with id's watermark set, keeping the
// max most recently extracted threads.
func markThread(threads map[string]ThreadMark, id string, m ThreadMark, max int) map[string]ThreadMark {
	out := make(map[string]ThreadMark, len(threads)+1)
	for k, v := range threads {
		out[k] = v
	}
	out[id] = m
	if len(out) <= max {
		return out
	}
	ids := make([]string, 0, len(out))
	for k := range out {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := out[ids[i]], out[ids[j]]
		if !a.At.Equal(b.At) {
			return a.At.After(b.At)
		}
		return ids[i] < ids[j]
	})
	for _, k := range ids[max:] {
		if k != id {
			delete(out, k)
		}
	}
	return out
}
