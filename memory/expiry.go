package memory

import (
	"fmt"
	"slices"
	"time"
)

// MaxValidUntilDays is how far ahead, in days, a temporary fact may hold:
// a year. An extracted end date further ahead is brought back to it; one
// set by hand is refused.
const MaxValidUntilDays = 366

// ParseValidUntil parses the end date of a temporary fact in a model's
// answer: "YYYY-MM-DD", or an RFC 3339 time whose date (in its own offset)
// counts. It returns midnight UTC of that day. An end date set by hand
// must be a date alone ([FactInput]).
func ParseValidUntil(s string) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", cutRunes(s, 32))
}

// today returns midnight UTC of now's day.
func today(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
}

// checkValidUntil returns the end date s of a fact set by hand, midnight
// UTC, or an *Error with CodeInvalidValidUntil unless it is a date
// "YYYY-MM-DD" alone (no time, two-digit month and day, a day the month
// has) from today to MaxValidUntilDays ahead. "" is no end.
func checkValidUntil(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	last := today(now).AddDate(0, 0, MaxValidUntilDays)
	if err != nil || d.Before(today(now)) || d.After(last) {
		return time.Time{}, badRequest(CodeInvalidValidUntil,
			fmt.Sprintf("validUntil must be a date (YYYY-MM-DD) from today to %s", last.Format(time.DateOnly)),
			"The end date must be between today and a year from now.")
	}
	return d, nil
}

// ends returns when f stops being read: the day after its ValidUntil, or
// for a pending fact the end of its wait, whichever is first; zero for a
// lasting fact that is not pending.
func (s *Store) ends(f Fact, pending bool) time.Time {
	var end time.Time
	if !f.ValidUntil.IsZero() {
		end = f.ValidUntil.AddDate(0, 0, 1)
	}
	if pending {
		if lapse := f.UpdatedAt.Add(s.cfg.PendingLifetime); end.IsZero() || lapse.Before(end) {
			end = lapse
		}
	}
	return end
}

// liveFacts returns, sorted by key in a new slice, the facts of facts that
// have not ended by now; pending says they are pending facts, whose wait
// ends too.
func (s *Store) liveFacts(facts []Fact, pending bool, now time.Time) []Fact {
	out := make([]Fact, 0, len(facts))
	for _, f := range facts {
		if end := s.ends(f, pending); end.IsZero() || now.Before(end) {
			out = append(out, f)
		}
	}
	sortFacts(out)
	return out
}

// facts returns the facts of rec a reader sees now: sorted, none ended.
func (s *Store) facts(rec Record) []Fact { return s.liveFacts(rec.Facts, false, s.now()) }

// pending returns the pending facts of rec a reader sees now.
func (s *Store) pending(rec Record) []Fact { return s.liveFacts(rec.Pending, true, s.now()) }

// tidyEnded returns rec without the facts and pending facts that ended by
// now, with the pending facts capped ([Store.capPending]), and Expires set
// to the earliest end of what stays.
func (s *Store) tidyEnded(rec Record, now time.Time) Record {
	rec.Facts = s.liveFacts(rec.Facts, false, now)
	rec.Pending = s.capPending(s.liveFacts(rec.Pending, true, now))
	rec.Expires = time.Time{}
	for i, list := range [][]Fact{rec.Facts, rec.Pending} {
		for _, f := range list {
			if end := s.ends(f, i == 1); !end.IsZero() && (rec.Expires.IsZero() || end.Before(rec.Expires)) {
				rec.Expires = end
			}
		}
	}
	return rec
}

// capPending returns pending, sorted by key, with at most MaxPending
// pending facts learned in a conversation and at most
// [Config.MaxImportedPending] proposed by an import, the newest of each.
func (s *Store) capPending(pending []Fact) []Fact {
	var talk, imported []Fact
	for _, f := range pending {
		if f.Origin == OriginImported {
			imported = append(imported, f)
		} else {
			talk = append(talk, f)
		}
	}
	out := append(newest(talk, s.cfg.MaxPending), newest(imported, s.cfg.MaxImportedPending())...)
	sortFacts(out)
	return out
}

// newest returns the n facts of facts updated last (ties by key), or all
// of them when they are fewer.
func newest(facts []Fact, n int) []Fact {
	if len(facts) <= n {
		return facts
	}
	facts = slices.Clone(facts)
	sortFacts(facts)
	slices.SortStableFunc(facts, func(a, b Fact) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return facts[:n]
}
