package fakebedrock

import (
	"regexp"
	"strings"
)

// Statements of a special category of personal data (GDPR Art. 9), read
// only from a clause that no other rule read: a health condition, an
// allergy, a religion, a sexual orientation, a trade union membership, a
// political party. Each is a SET whose key memory.SensitiveCategory names
// the category of, so that the store keeps it pending.
var (
	healthAdjectives = `(diabetic|asthmatic|epileptic|pregnant|autistic|dyslexic|coeliac|celiac|bipolar|deaf|blind|anaemic|anemic)`
	conditions       = `((?:type\s+[12]\s+)?diabetes|asthma|epilepsy|adhd|autism|coeliac\s+disease|celiac\s+disease|migraines?|depression|anxiety|arthritis|hypertension|high\s+blood\s+pressure|crohn` + apos + `?s(?:\s+disease)?|multiple\s+sclerosis|ms|hiv|cancer|ptsd|ocd)`
	phrase           = `(\p{L}[\p{L}\d '’-]*)`

	reHealthAdjective = regexp.MustCompile(iAm + `(?i:` + healthAdjectives + `)\b`)
	reHasCondition    = regexp.MustCompile(`(?i)\bi\s+(?:have|` + apos + `ve\s+got|have\s+got|live\s+with)\s+` + conditions + `\b`)
	reDiagnosed       = regexp.MustCompile(`(?i)\bi(?:\s+was|` + apos + `ve\s+been|\s+have\s+been|` + apos + `m|\s+am)\s+(?:recently\s+)?diagnosed\s+with\s+` + phrase)
	reSufferFrom      = regexp.MustCompile(`(?i)\bi\s+suffer\s+from\s+` + phrase)
	reAllergic        = regexp.MustCompile(iAm + `(?i:allergic\s+to)\s+` + phrase)
	reReligionIs      = regexp.MustCompile(`(?i)\bmy\s+(?:religion|faith)\s+is\s+` + phrase)
	reOrientation     = regexp.MustCompile(iAm + `(?i:(gay|lesbian|bisexual|queer|asexual|pansexual|homosexual))\b`)
	reUnionMember     = regexp.MustCompile(`(?i)` + iAm + `(?:a\s+)?(?:member\s+of\s+(?:the\s+|a\s+)?(?:trade\s+|labou?r\s+)?union|(?:trade\s+)?union\s+member|in\s+a\s+(?:trade\s+)?union)\b`)
	reVote            = regexp.MustCompile(`(?i:\bi\s+(?:always\s+)?vote(?:\s+for)?(?:\s+the)?)\s+` + capWords)

	// phraseStops end a phrase: "diagnosed with diabetes last month" is
	// "diabetes".
	phraseStops = regexp.MustCompile(`(?i)\s+(?:in|at|for|from|with|since|last|a|an|the|this|when|which|so|because|ago)\b.*$`)
)

// sensitiveOperations returns what a clause says of a special category:
// at most one SET.
func sensitiveOperations(c string) []Operation {
	set := func(key, value string) []Operation {
		value = strings.TrimSpace(phraseStops.ReplaceAllString(value, ""))
		if value == "" {
			return nil
		}
		return []Operation{{Op: "SET", Key: key, Value: value}}
	}
	switch {
	case reHealthAdjective.MatchString(c):
		return set(KeyHealth, strings.ToLower(reHealthAdjective.FindStringSubmatch(c)[1]))
	case reHasCondition.MatchString(c):
		return set(KeyHealth, strings.ToLower(strings.Join(strings.Fields(reHasCondition.FindStringSubmatch(c)[1]), " ")))
	case reDiagnosed.MatchString(c):
		return set(KeyHealth, strings.ToLower(reDiagnosed.FindStringSubmatch(c)[1]))
	case reSufferFrom.MatchString(c):
		return set(KeyHealth, strings.ToLower(reSufferFrom.FindStringSubmatch(c)[1]))
	case reAllergic.MatchString(c):
		return set(KeyAllergies, strings.ToLower(reAllergic.FindStringSubmatch(c)[1]))
	case reReligionIs.MatchString(c):
		return set(KeyReligion, titleCase(reReligionIs.FindStringSubmatch(c)[1]))
	case reOrientation.MatchString(c):
		return set(KeyOrientation, strings.ToLower(reOrientation.FindStringSubmatch(c)[1]))
	case reUnionMember.MatchString(c):
		return set(KeyUnion, "member")
	case reVote.MatchString(c):
		return set(KeyParty, reVote.FindStringSubmatch(c)[1])
	}
	return nil
}
