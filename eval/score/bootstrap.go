package score

import (
	"math/rand/v2"
	"slices"
)

// Resamples is the number of bootstrap resamples behind an interval.
const Resamples = 2000

// Interval is a 95 % interval: its low and high ends.
type Interval [2]float64

// Contains reports whether x lies within i.
func (i Interval) Contains(x float64) bool { return i[0] <= x && x <= i[1] }

// Bootstrap returns the percentile bootstrap 95 % interval of stat over
// convs: stat is computed on Resamples samples of len(convs)
// conversations drawn with replacement, and the 2.5th and 97.5th
// percentiles are returned. The conversation, not the fact, is the unit
// drawn, since the facts of one conversation stand or fall together. The
// generator has a fixed seed, so an interval is the same on every run of
// the same scores (a replay reproduces it).
func Bootstrap(convs []Conversation, stat func([]Conversation) float64) Interval {
	sample := make([]Conversation, len(convs))
	return resample(len(convs), func(idx []int) float64 {
		for i, j := range idx {
			sample[i] = convs[j]
		}
		return stat(sample)
	})
}

// PairedDifference returns the bootstrap 95 % interval of stat(now) −
// stat(before) over the conversations both runs scored, drawn in pairs
// (the same conversations on both sides), and the number of such pairs.
// A difference whose interval excludes 0 lies beyond the noise of the
// gold set's sampling.
func PairedDifference(before, now []Conversation, stat func([]Conversation) float64) (Interval, int) {
	byID := map[string]Conversation{}
	for _, c := range before {
		byID[c.ID] = c
	}
	var a, b []Conversation
	for _, c := range now {
		if o, ok := byID[c.ID]; ok {
			a, b = append(a, o), append(b, c)
		}
	}
	sa, sb := make([]Conversation, len(a)), make([]Conversation, len(a))
	return resample(len(a), func(idx []int) float64 {
		for i, j := range idx {
			sa[i], sb[i] = a[j], b[j]
		}
		return stat(sb) - stat(sa)
	}), len(a)
}

// resample returns the 2.5th and 97.5th percentiles of stat over
// Resamples draws of n indices in [0, n) with replacement, from a
// generator of fixed seed; the zero interval when n is 0.
func resample(n int, stat func(idx []int) float64) Interval {
	if n == 0 {
		return Interval{}
	}
	rng := rand.New(rand.NewPCG(17, 95))
	idx := make([]int, n)
	stats := make([]float64, Resamples)
	for r := range stats {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		stats[r] = stat(idx)
	}
	slices.Sort(stats)
	return Interval{stats[int(0.025*Resamples)], stats[int(0.975*Resamples)-1]}
}

// microF1 is the F1 over all facts of convs.
func microF1(convs []Conversation) float64 {
	s, k, e := 0, 0, 0
	for _, c := range convs {
		s, k, e = s+c.Satisfied, k+c.Kept, e+c.Expected
	}
	return ratio(2*s, k+e)
}

// leakRate is the leak rate of convs, all categories.
func leakRate(convs []Conversation) float64 {
	l, o := 0, 0
	for _, c := range convs {
		l, o = l+c.LeakTotal(), o+sumOf(c.Opportunities)
	}
	return share(l, o)
}
