package fakebedrock

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The end phrases the rules read in a clause that states a fact, each
// case-insensitive. An end is counted from today, as the MEMORY_USER
// template asks of a model ({today}).
var (
	weekdayNames = `(monday|tuesday|wednesday|thursday|friday|saturday|sunday)`
	monthNames   = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)`
	untilWord    = `\b(?:until|till|til|through|up\s+to)\s+`

	reUntilDate     = regexp.MustCompile(`(?i)` + untilWord + `(\d{4}-\d{2}-\d{2})\b`)
	reUntilDayMonth = regexp.MustCompile(`(?i)` + untilWord + `(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+` + monthNames + `\b`)
	reUntilMonthDay = regexp.MustCompile(`(?i)` + untilWord + monthNames + `\s+(\d{1,2})(?:st|nd|rd|th)?\b`)
	reUntilMonth    = regexp.MustCompile(`(?i)` + untilWord + `(?:the\s+end\s+of\s+)?` + monthNames + `\b`)
	reUntilWeekday  = regexp.MustCompile(`(?i)` + untilWord + `(next\s+)?` + weekdayNames + `\b`)
	reUntilTomorrow = regexp.MustCompile(`(?i)` + untilWord + `tomorrow\b`)
	reUntilEndOf    = regexp.MustCompile(`(?i)` + untilWord + `(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?(next\s+)?(week|month|year)\b`)
	reThisPeriod    = regexp.MustCompile(`(?i)\b(?:this|for\s+the\s+rest\s+of\s+the)\s+(week|weekend|month|year)\b`)
	reForDuration   = regexp.MustCompile(`(?i)\bfor\s+(?:the\s+next\s+)?(a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,3})\s+(day|days|week|weeks|month|months)\b`)
	reTodayInSystem = regexp.MustCompile(`(?i)\btoday\b[,:]?\s*(\d{4}-\d{2}-\d{2})\b`)
	// untilPhrases name an end day outright: "I'm in Paris this week" is
	// a trip, which the rules do not keep, "until Friday" a stay with an
	// end.
	untilPhrases = []*regexp.Regexp{reUntilDate, reUntilDayMonth, reUntilMonthDay, reUntilMonth, reUntilWeekday, reUntilTomorrow, reUntilEndOf}
)

var numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

// TodayOf returns the day a request's end dates count from: the date that
// follows "today" in its system prompt (the MEMORY_USER prompt's
// "counted from today, {today}"; the last one, since the known facts come
// before the instructions), or else now's date. The time is midnight UTC.
func TodayOf(system string, now time.Time) time.Time {
	if m := reTodayInSystem.FindAllStringSubmatch(system, -1); m != nil {
		if d, err := time.Parse(time.DateOnly, m[len(m)-1][1]); err == nil {
			return d
		}
	}
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
}

// saysUntil reports whether text names an end day with "until" (or
// "till", "through", "up to").
func saysUntil(text string) bool {
	for _, re := range untilPhrases {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// endOf returns the last day of a fact that text states as temporary,
// YYYY-MM-DD counted from today, or "" when text states no end:
//   - "until 2026-12-05", "until 5 December", "until December 5th": that
//     day, next year's when this year's is past;
//   - "until March", "until the end of March": the month's last day;
//   - "until Friday": the first Friday after today ("until next Friday":
//     the one a week later); "until tomorrow": tomorrow;
//   - "until the end of the week/month/year" and "this week/weekend/
//     month/year": its last day (a week ends on Sunday);
//   - "for two weeks", "for 3 days", "for a month": today plus that.
func endOf(text string, today time.Time) string {
	d, ok := endDay(text, today)
	if !ok {
		return ""
	}
	return d.Format(time.DateOnly)
}

func endDay(text string, today time.Time) (time.Time, bool) {
	if m := reUntilDate.FindStringSubmatch(text); m != nil {
		d, err := time.Parse(time.DateOnly, m[1])
		return d, err == nil
	}
	if m := reUntilDayMonth.FindStringSubmatch(text); m != nil {
		return nextDate(today, monthOf(m[2]), atoi(m[1]))
	}
	if m := reUntilMonthDay.FindStringSubmatch(text); m != nil {
		return nextDate(today, monthOf(m[1]), atoi(m[2]))
	}
	if m := reUntilMonth.FindStringSubmatch(text); m != nil {
		first, _ := nextDate(today.AddDate(0, 0, -today.Day()+1), monthOf(m[1]), 1)
		return first.AddDate(0, 1, -1), true
	}
	if m := reUntilWeekday.FindStringSubmatch(text); m != nil {
		d := today.AddDate(0, 0, 1)
		for !strings.EqualFold(d.Weekday().String(), m[2]) {
			d = d.AddDate(0, 0, 1)
		}
		if m[1] != "" {
			d = d.AddDate(0, 0, 7)
		}
		return d, true
	}
	if reUntilTomorrow.MatchString(text) {
		return today.AddDate(0, 0, 1), true
	}
	if m := reUntilEndOf.FindStringSubmatch(text); m != nil {
		return periodEnd(today, strings.ToLower(m[2]), m[1] != ""), true
	}
	if m := reThisPeriod.FindStringSubmatch(text); m != nil {
		return periodEnd(today, strings.ToLower(m[1]), false), true
	}
	if m := reForDuration.FindStringSubmatch(text); m != nil {
		n, ok := numberWords[strings.ToLower(m[1])]
		if !ok {
			n = atoi(m[1])
		}
		switch unit := strings.TrimSuffix(strings.ToLower(m[2]), "s"); unit {
		case "day":
			return today.AddDate(0, 0, n), n > 0
		case "week":
			return today.AddDate(0, 0, 7*n), n > 0
		default:
			return today.AddDate(0, n, 0), n > 0
		}
	}
	return time.Time{}, false
}

// periodEnd returns the last day of today's week (Sunday; a weekend too),
// month or year, or of the next one.
func periodEnd(today time.Time, period string, next bool) time.Time {
	switch period {
	case "week", "weekend":
		d := today.AddDate(0, 0, (7-int(today.Weekday()))%7)
		if next {
			d = d.AddDate(0, 0, 7)
		}
		return d
	case "month":
		n := 1
		if next {
			n = 2
		}
		return time.Date(today.Year(), today.Month()+time.Month(n), 0, 0, 0, 0, 0, time.UTC)
	default:
		y := today.Year()
		if next {
			y++
		}
		return time.Date(y, time.December, 31, 0, 0, 0, 0, time.UTC)
	}
}

// nextDate returns day of month in today's year, or in the next year when
// that is before today; false when it is no date (31 February).
func nextDate(today time.Time, month time.Month, day int) (time.Time, bool) {
	for _, y := range []int{today.Year(), today.Year() + 1} {
		d := time.Date(y, month, day, 0, 0, 0, 0, time.UTC)
		if d.Month() != month || d.Day() != day {
			return time.Time{}, false
		}
		if !d.Before(today) {
			return d, true
		}
	}
	return time.Time{}, false
}

// monthOf returns the month that name (a full name or a three- or
// four-letter abbreviation, any case) names.
func monthOf(name string) time.Month {
	name = strings.ToLower(name)
	for m := time.January; m <= time.December; m++ {
		if strings.HasPrefix(strings.ToLower(m.String()), name[:3]) {
			return m
		}
	}
	return time.January // unreachable: the patterns match month names only
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s) // the patterns match digits only
	return n
}
