package memory

import (
	"slices"
	"strings"
)

// The special categories of personal data (GDPR Art. 9(1)): an extracted
// fact of one of those in Config.PendingCategories waits for the user's
// yes before it is kept.
const (
	CategoryHealth          = "health"
	CategoryReligion        = "religion"
	CategorySexualLife      = "sexual_life"
	CategoryPolitics        = "politics"
	CategoryUnionMembership = "union_membership"
	CategoryBiometrics      = "biometrics"
	CategoryGenetics        = "genetics"
	CategoryEthnicOrigin    = "ethnic_origin"
)

// Categories lists every special category, in the order of Art. 9(1).
var Categories = []string{CategoryEthnicOrigin, CategoryPolitics, CategoryReligion, CategoryUnionMembership,
	CategoryGenetics, CategoryBiometrics, CategoryHealth, CategorySexualLife}

// categoryWords are, per category, the words that mark a fact as of it:
// keyWords in its canonical key (one of the key's '_'-separated words, or
// the whole key), valueWords in its value (whole words, case-folded). A
// value word must be plain enough to mean the category in any sentence;
// broader words ("party", "union", "condition") count in keys only.
var categoryWords = map[string]struct{ keyWords, valueWords []string }{
	CategoryHealth: {
		keyWords: []string{"health", "medical", "medication", "medications", "medicine", "diagnosis", "condition",
			"conditions", "illness", "disease", "allergy", "allergies", "disability", "diet_restriction", "pregnancy",
			"therapy", "prescription", "blood_type", "mental_health", "diagnosed", "sante", "santé", "gesundheit", "salud"},
		valueWords: []string{"diabetes", "diabetic", "cancer", "asthma", "depression", "anxiety", "adhd", "autism",
			"autistic", "epilepsy", "hiv", "aids", "pregnant", "bipolar", "schizophrenia", "insulin", "chemotherapy",
			"dialysis", "migraine", "migraines", "ptsd", "ocd", "dyslexia", "dyslexic", "arthritis", "hypertension",
			"celiac", "coeliac", "antidepressants", "wheelchair"},
	},
	CategoryReligion: {
		keyWords: []string{"religion", "religious", "faith", "belief", "beliefs", "church", "denomination", "worship"},
		valueWords: []string{"christian", "catholic", "protestant", "orthodox", "muslim", "islam", "islamic", "jewish",
			"judaism", "hindu", "hinduism", "buddhist", "buddhism", "sikh", "atheist", "agnostic", "mormon",
			"evangelical", "lutheran", "baptist", "methodist", "anglican", "quaker", "jain", "shinto", "taoist"},
	},
	CategorySexualLife: {
		keyWords:   []string{"sexual", "sexuality", "orientation", "sexual_orientation", "sex_life"},
		valueWords: []string{"gay", "lesbian", "bisexual", "queer", "homosexual", "heterosexual", "asexual", "pansexual", "lgbt", "lgbtq"},
	},
	CategoryPolitics: {
		keyWords:   []string{"political", "politics", "vote", "votes", "voting", "voter", "party_affiliation", "political_party", "ideology"},
		valueWords: []string{"democrat", "republican", "socialist", "communist", "libertarian", "anarchist", "fascist", "tory"},
	},
	CategoryUnionMembership: {
		keyWords:   []string{"union", "trade_union", "union_member", "union_membership", "labor_union", "labour_union"},
		valueWords: []string{"unionized", "unionised"},
	},
	CategoryBiometrics: {
		keyWords:   []string{"biometric", "biometrics", "fingerprint", "fingerprints", "face_id", "retina", "iris", "voiceprint"},
		valueWords: []string{"fingerprint", "voiceprint"},
	},
	CategoryGenetics: {
		keyWords:   []string{"genetic", "genetics", "genome", "dna", "gene", "genotype"},
		valueWords: []string{"brca1", "brca2", "genome", "genetic"},
	},
	CategoryEthnicOrigin: {
		keyWords:   []string{"ethnicity", "ethnic", "ethnic_origin", "racial"},
		valueWords: []string{},
	},
}

// ValidCategory reports whether c is one of [Categories].
func ValidCategory(c string) bool { return slices.Contains(Categories, c) }

// SensitiveCategory returns the first category of categories that the
// fact key → value belongs to, by the rules of its words (see
// categoryWords), or "" when none. key is canonical. The rules are a
// floor, not the whole test: the model names the category it sees too,
// and either is enough ([Store.Extract]).
func SensitiveCategory(key, value string, categories []string) string {
	keyParts := strings.Split(key, "_")
	valueWords := strings.Fields(normalizeForMatch(value))
	for _, c := range categories {
		w := categoryWords[c]
		for _, kw := range w.keyWords {
			if key == kw || slices.Contains(keyParts, kw) || strings.Contains("_"+key+"_", "_"+kw+"_") {
				return c
			}
		}
		for _, vw := range w.valueWords {
			if slices.Contains(valueWords, vw) {
				return c
			}
		}
	}
	return ""
}
