package gold_test

import (
	"testing"
	"time"

	"github.com/usermemory/usermemory/eval/gold"
)

// expected returns the expected fact on subject of the gold conversation
// id of convs.
func expected(t *testing.T, convs []gold.Conversation, id, subject string) gold.Expected {
	t.Helper()
	for _, c := range convs {
		if c.ID != id {
			continue
		}
		for _, e := range append(c.Expect, c.Pending...) {
			if e.Subject.Name == subject {
				return e
			}
		}
	}
	t.Fatalf("no expected %s in %s", subject, id)
	return gold.Expected{}
}

// TestValuesComparedByMeaning holds the gold set's own expected facts to
// the values a review fed the scorer: every wrong value it found accepted
// is refused, and right values in other words are accepted.
func TestValuesComparedByMeaning(t *testing.T) {
	cases := []struct {
		conv, subject, value string
		want                 bool
	}{
		// Wrong values that a substring comparison accepted.
		{"de-zeitzone-stil", "time_zone", "UTC+10", false},
		{"en-relocated-time-zone", "time_zone", "Europe/Budapest", false},
		{"en-relocated-time-zone", "time_zone", "Eastern European Time", false},
		{"en-relocated-time-zone", "home_city", "London (not New York)", false},
		{"en-everything-at-once", "role", "not an engineer", false},
		{"en-everything-at-once", "role", "ex-engineer", false},
		{"en-everything-at-once", "role", "no longer an engineer", false},
		{"en-health-asked", "health", "not diabetic", false},
		{"en-health-asked", "health", "no diabetes", false},
		{"en-relocated-time-zone", "home_city", "Newark", false},
		{"de-zeitzone-stil", "time_zone", "UTC+2:30", false},
		{"de-zeitzone-stil", "time_zone", "Asia/Tokyo", false},
		// Right values in other words.
		{"de-zeitzone-stil", "time_zone", "Europe/Berlin", true},
		{"de-zeitzone-stil", "time_zone", "europe/paris", true},
		{"de-zeitzone-stil", "time_zone", "Mitteleuropäische Zeit", true},
		{"de-zeitzone-stil", "time_zone", "CET (UTC+1)", true},
		{"de-zeitzone-stil", "time_zone", "UTC+02:00", true},
		{"en-relocated-time-zone", "time_zone", "America/New_York", true},
		{"en-relocated-time-zone", "time_zone", "EST", true},
		{"en-relocated-time-zone", "time_zone", "US Eastern", true},
		{"en-relocated-time-zone", "time_zone", "GMT-4", true},
		{"en-relocated-time-zone", "home_city", "New York, NY", true},
		{"en-relocated-time-zone", "home_city", "New York City (USA)", true},
		{"en-intro-name-city-language", "home_city", "Lisbon, Portugal", true},
		{"en-intro-name-city-language", "home_city", "Lisboa", true},
		{"en-everything-at-once", "role", "Structural engineer", true},
		{"en-health-asked", "health", "type 2 diabetes (T2D)", true},
		{"en-time-zone", "time_zone", "Asia/Tokyo", true},
		{"en-time-zone", "time_zone", "Tokyo time", true},
	}
	convs := load(t)
	for _, tc := range cases {
		if got := expected(t, convs, tc.conv, tc.subject).Accepts(tc.value); got != tc.want {
			t.Errorf("%s %s: Accepts(%q) = %v, want %v", tc.conv, tc.subject, tc.value, got, tc.want)
		}
	}
}

func TestNegated(t *testing.T) {
	for s, want := range map[string]bool{
		"not an engineer": true, "ex-wife": true, "no longer in Lisbon": true, "nicht mehr": true, "не врач": true,
		"不是医生": true, "engineer": false, "notary": false, "Nottingham": false, "exhibition designer": false,
	} {
		if got := gold.Negated(s); got != want {
			t.Errorf("Negated(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestForbiddenSubjectWhateverTheKey checks that a forbidden subject is
// found under any key on it, the vocabulary's or one that holds one of
// its keys, whatever the value.
func TestForbiddenSubjectWhateverTheKey(t *testing.T) {
	var conv gold.Conversation
	for _, c := range load(t) {
		if c.ID == "en-forget-city" {
			conv = c
		}
	}
	if len(conv.Forbid) != 1 {
		t.Fatalf("en-forget-city forbids %d facts, want 1", len(conv.Forbid))
	}
	f := conv.Forbid[0]
	for kv, want := range map[[2]string]bool{
		{"home_city", "Lisbon"}: true, {"city_forgotten", "Lisbon"}: true, {"location", "PT"}: true,
		{"old_home_city", "somewhere"}: true, {"name", "Ana"}: false, {"velocity", "Lisbon"}: false,
	} {
		if got := f.Matches(conv.OnSubject, kv[0], kv[1]); got != want {
			t.Errorf("Matches(%q, %q) = %v, want %v", kv[0], kv[1], got, want)
		}
	}
}

func TestNegatedLeavesWordsThatNegateNothing(t *testing.T) {
	for _, s := range []string{"非常に短く", "元気", "notes in bullet points", "nonna's recipes"} {
		if gold.Negated(s) {
			t.Errorf("Negated(%q) = true, want false", s)
		}
	}
}

// TestEndAccepted holds the scoring of end dates: a lasting fact has
// none, a temporary one a date within a day of the expected one.
func TestEndAccepted(t *testing.T) {
	friday := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	cases := []struct {
		want, got time.Time
		ok        bool
	}{
		{time.Time{}, time.Time{}, true},
		{time.Time{}, friday, false},
		{friday, time.Time{}, false},
		{friday, friday, true},
		{friday, friday.Add(-day), true},
		{friday, friday.Add(day), true},
		{friday, friday.Add(2 * day), false},
		{friday, friday.Add(-2 * day), false},
	}
	for _, tc := range cases {
		if got := (gold.Expected{ValidUntil: tc.want}).EndAccepted(tc.got); got != tc.ok {
			t.Errorf("expected until %v: EndAccepted(%v) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}
