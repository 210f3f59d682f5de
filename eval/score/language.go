package score

import (
	"strings"
	"unicode"

	"github.com/usermemory/usermemory/eval/gold"
)

// scripts maps a language to the scripts its values are written in;
// a language not listed is written in the Latin script.
var scripts = map[string][]*unicode.RangeTable{
	"ru": {unicode.Cyrillic}, "uk": {unicode.Cyrillic}, "bg": {unicode.Cyrillic}, "sr": {unicode.Cyrillic, unicode.Latin},
	"ja": {unicode.Han, unicode.Hiragana, unicode.Katakana},
	"zh": {unicode.Han},
	"ko": {unicode.Hangul, unicode.Han},
	"ar": {unicode.Arabic}, "fa": {unicode.Arabic}, "ur": {unicode.Arabic},
	"he": {unicode.Hebrew},
	"el": {unicode.Greek},
	"hi": {unicode.Devanagari}, "mr": {unicode.Devanagari}, "ne": {unicode.Devanagari},
	"th": {unicode.Thai},
}

// englishMarkers are English words that are not words of the other
// languages of the gold set (pt, es, fr, de, it and the non-Latin ones):
// function words and the verbs and adjectives a model uses when it
// paraphrases a fact in English.
var englishMarkers = map[string]bool{
	"the": true, "and": true, "with": true, "from": true, "user": true, "user's": true, "their": true,
	"prefers": true, "prefer": true, "likes": true, "wants": true, "works": true, "lives": true,
	"answers": true, "replies": true, "responses": true, "short": true, "brief": true, "concise": true,
	"english": true, "should": true, "always": true, "never": true, "only": true,
}

// LanguageCheck returns why value is not in the language of conv, or "" when
// it cannot tell that it is not. It is a heuristic with three signals, tried
// in this order:
//
//  1. translation: the value holds one of the translations the gold set
//     lists for an expected subject ("nurse" for a user who said
//     "enfermeira");
//  2. script: the value has letters and none of them is in the script of
//     the user's language (a Russian user's value in Latin letters, an
//     English user's in Cyrillic);
//  3. English words: in a conversation that is not in English, the value
//     holds one of a short list of English words that are not words of
//     the gold set's other languages ("the", "with", "prefers", "short"…).
//
// It catches a value translated into English, a sentence paraphrased in
// English and a change of script. It cannot catch a translation between two
// languages of one script that it has no listed translation for
// ("enfermera" for "enfermeira"), nor a one-word English value that is not
// listed ("nurse" where no translation was given). The scorer does not
// call it on a correct fact (its value is accepted by the gold set), on a
// known fact kept unchanged, nor on a neutral subject (a time zone).
func LanguageCheck(conv gold.Conversation, value string) string {
	v := gold.Normalize(value)
	for _, e := range conv.Expect {
		if tr := e.Translated(value); tr != "" {
			return `holds the translation "` + tr + `"`
		}
	}
	want := scripts[conv.Language]
	if want == nil {
		want = []*unicode.RangeTable{unicode.Latin}
	}
	letters, inScript := 0, 0
	for _, r := range value {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if unicode.In(r, want...) {
			inScript++
		}
	}
	if letters > 0 && inScript == 0 {
		return "no letter in the script of " + conv.Language
	}
	if conv.Language != "en" {
		for _, w := range strings.FieldsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
			if englishMarkers[w] {
				return `holds the English word "` + w + `"`
			}
		}
	}
	return ""
}
