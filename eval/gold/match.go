package gold

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones compare the same on every machine
	"unicode"
)

// Ways a subject's values are compared (Subject.Compare).
const (
	// CompareText: equal after [Normalize], or holding an accepted
	// phrase as whole words.
	CompareText = "text"
	// ComparePlace: a place; a trailing country or region ("Lisbon,
	// Portugal", "Lisbon (PT)") is accepted.
	ComparePlace = "place"
	// CompareTimeZone: a time zone, compared as a zone (the UTC offsets of
	// January and July) or as an offset that is one of the zone's.
	CompareTimeZone = "time_zone"
)

// compareModes lists the values of Subject.Compare.
var compareModes = []string{CompareText, ComparePlace, CompareTimeZone}

// negations are the words that make a value say the opposite of what it
// names ("not an engineer", "no longer in Lisbon", "ex-wife", "nicht
// Berlin"), in the languages of the gold set.
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "non": true, "ex": true, "former": true, "formerly": true,
	"isn't": true, "isnt": true, "doesn't": true, "don't": true, "without": true, "neither": true, "nor": true,
	"previously": true, "anymore": true, "nicht": true, "kein": true, "keine": true, "nie": true, "ehemals": true,
	"ehemalige": true, "ehemaliger": true, "não": true, "nao": true, "nunca": true, "ne": true,
	"pas": true, "jamais": true, "ancien": true, "ancienne": true, "nessuno": true, "mai": true,
	"не": true, "нет": true, "бывший": true, "бывшая": true, "नहीं": true, "ليس": true, "لا": true, "לא": true,
	"geen": true, "niet": true, "değil": true, "yok": true, "nein": true, "ningún": true, "ninguna": true,
}

// negationRunes are negations of the languages written without spaces.
// ("非" and "元" are left out: they begin words that negate nothing, such
// as "非常" and "元気").
var negationRunes = []string{"不是", "不再", "没有", "沒有", "じゃない", "ではない"}

// Negated reports whether s (a value, or what is left of it once the
// accepted phrases are taken out) holds a negation.
func Negated(s string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsMark(r) && r != '\''
	}) {
		if negations[w] {
			return true
		}
	}
	for _, n := range negationRunes {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// accepts reports whether the normalised value v is an accepted value of
// e, by the comparison of e's subject. A value that holds a negation
// outside its accepted phrases is never accepted.
func (e Expected) accepts(v string) bool {
	switch e.Subject.Compare {
	case CompareTimeZone:
		if z, ok := parseZones(v); ok {
			return !Negated(v) && e.zoneAccepts(z)
		}
	case ComparePlace:
		if Negated(v) {
			return false
		}
		head := placeHead(v)
		for _, a := range append(append([]string{}, e.Values...), e.Contains...) {
			if placeHead(Normalize(a)) == head {
				return true
			}
		}
		return false
	}
	for _, a := range e.Values {
		if Normalize(a) == v {
			return true
		}
	}
	rest, found := v, false
	for _, a := range e.Contains {
		if p := Normalize(a); p != "" && containsWord(rest, p) {
			rest, found = strings.ReplaceAll(rest, p, " "), true
		}
	}
	return found && !Negated(rest)
}

// placeHead returns a place without what qualifies it: the text after the
// first comma and any parenthesis ("lisbon, portugal" and "lisbon (pt)"
// are "lisbon").
func placeHead(v string) string {
	if i := strings.IndexAny(v, ",("); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), " area"))
}

// zone is a time zone as compared: its UTC offsets in seconds, in January
// and July; fixed is true for an offset or an abbreviation that names one
// ("UTC+2", "EST", "CEST").
type zone struct {
	offsets [2]int
	fixed   bool
}

// zoneNames are names of time zones that are no IANA identifier, in lower
// case, to an IANA zone or a fixed offset ("+hh:mm").
var zoneNames = map[string]string{
	"utc": "+00:00", "gmt": "+00:00", "z": "+00:00", "est": "-05:00", "edt": "-04:00", "cst": "-06:00", "cdt": "-05:00",
	"mst": "-07:00", "mdt": "-06:00", "pst": "-08:00", "pdt": "-07:00", "cest": "+02:00", "mesz": "+02:00", "eest": "+03:00",
	"west": "+01:00", "bst": "+01:00", "jst": "+09:00", "kst": "+09:00", "msk": "+03:00", "aest": "+10:00", "hkt": "+08:00",
	"sgt": "+08:00", "eastern standard time": "-05:00", "pacific standard time": "-08:00", "japan standard time": "+09:00",
	"india standard time": "+05:30", "moscow time": "+03:00", "московское время": "+03:00", "日本時間": "+09:00",
	"北京时间": "+08:00", "china standard time": "+08:00",
	"et": "America/New_York", "eastern": "America/New_York", "eastern time": "America/New_York", "us eastern": "America/New_York",
	"ct": "America/Chicago", "central time": "America/Chicago", "mt": "America/Denver", "mountain time": "America/Denver",
	"pt": "America/Los_Angeles", "pacific time": "America/Los_Angeles", "cet": "Europe/Paris", "mez": "Europe/Paris",
	"central european time": "Europe/Paris", "mitteleuropäische zeit": "Europe/Paris", "eet": "Europe/Athens",
	"eastern european time": "Europe/Athens", "wet": "Europe/Lisbon", "western european time": "Europe/Lisbon",
	"uk time": "Europe/London", "british time": "Europe/London",
}

var offsetPattern = regexp.MustCompile(`^(?:utc|gmt)?\s*([+\-−])\s*(\d{1,2})(?::?(\d{2}))?$`)

// parseZones parses v, or each part of it between parentheses, commas
// and semicolons ("CET (UTC+1)"): every part must name a zone or an
// offset, and all of them the same one.
func parseZones(v string) (zone, bool) {
	if z, ok := parseZone(v); ok {
		return z, true
	}
	parts := strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune("(),;", r) })
	var out zone
	for i, p := range parts {
		z, ok := parseZone(strings.TrimSpace(p))
		if !ok || (i > 0 && !sameZone(out, z)) {
			return zone{}, false
		}
		if i == 0 || !z.fixed {
			out = z
		}
	}
	return out, len(parts) > 1
}

// parseZone parses one zone: an offset, a name of zoneNames or an IANA
// identifier in any case.
func parseZone(v string) (zone, bool) {
	v = strings.TrimSpace(v)
	if n, ok := zoneNames[v]; ok {
		v = n
	}
	if m := offsetPattern.FindStringSubmatch(v); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins := 0
		if m[3] != "" {
			mins, _ = strconv.Atoi(m[3])
		}
		off := h*3600 + mins*60
		if m[1] != "+" {
			off = -off
		}
		return zone{offsets: [2]int{off, off}, fixed: true}, h <= 14
	}
	if !strings.Contains(v, "/") {
		return zone{}, false
	}
	loc, err := time.LoadLocation(ianaCase(v))
	if err != nil {
		return zone{}, false
	}
	_, jan := time.Date(2026, time.January, 15, 12, 0, 0, 0, loc).Zone()
	_, jul := time.Date(2026, time.July, 15, 12, 0, 0, 0, loc).Zone()
	return zone{offsets: [2]int{jan, jul}}, true
}

// ianaCase returns v with the case of IANA identifiers: each word
// capitalised ("america/new_york" is "America/New_York").
func ianaCase(v string) string {
	b := []rune(strings.ReplaceAll(v, " ", "_"))
	up := true
	for i, r := range b {
		if up {
			b[i] = unicode.ToUpper(r)
		}
		up = r == '/' || r == '_' || r == '-'
	}
	return string(b)
}

// sameZone reports whether a and b agree: two zones with the same
// offsets, or an offset that is one of the other's.
func sameZone(a, b zone) bool {
	switch {
	case a.fixed && b.fixed:
		return a.offsets == b.offsets
	case a.fixed:
		return a.offsets[0] == b.offsets[0] || a.offsets[0] == b.offsets[1]
	case b.fixed:
		return sameZone(b, a)
	}
	return a.offsets == b.offsets
}

// zoneAccepts reports whether z is the zone of one of e's accepted
// values: the same offsets, or a fixed offset that is one of its. An
// accepted value that is an offset accepts only that offset, fixed or
// as a zone that never leaves it.
func (e Expected) zoneAccepts(z zone) bool {
	for _, a := range append(append([]string{}, e.Values...), e.Contains...) {
		want, ok := parseZones(Normalize(a))
		if !ok {
			continue
		}
		if want.fixed && !z.fixed && z.offsets[0] != z.offsets[1] {
			continue
		}
		if sameZone(want, z) {
			return true
		}
	}
	return false
}
