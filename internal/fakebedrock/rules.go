package fakebedrock

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/usermemory/usermemory/memory"
)

// Operation is one SET or DELETE operation of an answer, in the shape of
// the operations tool's input (memory.OperationsTool): a SET quotes its
// Evidence, and may carry ValidUntil (YYYY-MM-DD) and Category (one of
// memory.Categories). A scripted operation passes through as it is. It
// is the core's type, in its JSON form.
type Operation = memory.Operation

// Keys the rule-based extractor sets.
const (
	KeyName     = "name"
	KeyHomeCity = "home_city"
	KeyLanguage = "preferred_language"
	KeyRole     = "role"
	// KeyCurrentCity is where the user stays for a time they state
	// ("I'm in Paris until Friday"): a temporary fact.
	KeyCurrentCity = "current_city"
	// Keys of special-category statements (see sensitive.go).
	KeyHealth      = "health_condition"
	KeyAllergies   = "allergies"
	KeyReligion    = "religion"
	KeyOrientation = "sexual_orientation"
	KeyUnion       = "union_membership"
	KeyParty       = "political_party"
)

// The patterns of the rules. Each is matched against one clause of a user
// turn; (?i:…) makes the verbs case-insensitive while names and cities must
// still start with a capital letter.
var (
	apos     = `['’]`
	capWords = `(\p{Lu}[\p{L}'’-]*(?:\s+\p{Lu}[\p{L}'’-]*)*)`
	capWord  = `(\p{Lu}[\p{L}'’-]*)`
	iAm      = `(?i:\bi` + apos + `m|\bi\s+am)\s+`

	reForgetCity     = regexp.MustCompile(`(?i)\bforget\s+(?:where\s+i\s+live|my\s+(?:home\s+)?(?:city|town|location|address))\b`)
	reForgetName     = regexp.MustCompile(`(?i)\bforget\s+my\s+name\b`)
	reForgetLanguage = regexp.MustCompile(`(?i)\bforget\s+my\s+(?:preferred\s+)?language\b`)
	reForgetRole     = regexp.MustCompile(`(?i)\bforget\s+(?:my\s+(?:role|job)|what\s+i\s+do)\b`)

	reMoved   = regexp.MustCompile(`(?i:\bi(?:` + apos + `ve|\s+have)?\s+(?:just\s+)?moved\s+to)\s+` + capWords)
	reLiveIn  = regexp.MustCompile(`(?i:\bi\s+(?:live|am\s+living|` + apos + `m\s+living)\s+in)\s+` + capWords)
	reFrom    = regexp.MustCompile(iAm + `(?i:(?:originally\s+)?from|based\s+in)\s+` + capWords)
	reNameIs  = regexp.MustCompile(`(?i:\bmy\s+name\s+is|\bcall\s+me)\s+` + capWord)
	reIAmName = regexp.MustCompile(iAm + capWord + `(?:\s+(?i:from)\s+` + capWords + `)?`)
	reLang    = regexp.MustCompile(`(?i)\b(?:answer|reply|respond|write|talk|speak)(?:\s+to\s+me)?\s+in\s+(\p{L}+)|\bi\s+(?:speak|prefer)\s+(\p{L}+)`)
	reWorkAs  = regexp.MustCompile(`(?i)\bi\s+work\s+as\s+(?:an?\s+)?(\p{L}[\p{L} '’-]*)`)
	reIAmA    = regexp.MustCompile(iAm + `(?i:an?)\s+(\p{L}[\p{L} '’-]*)`)
	// reStay is a stay somewhere, a fact only with an end day named by
	// "until" ("I'm in Paris until Friday", "I work from Lisbon until
	// March"): "I'm in Tokyo this week" stays a trip, as the gold set has it.
	reStay = regexp.MustCompile(`(?i:` + iAm + `(?:staying\s+)?in|\bi(?:` + apos + `ll|\s+will)\s+be\s+in|` + iAm + `working\s+from|\bi\s+work\s+from)\s+` + capWords)

	// reYes is a user turn that agrees; reAskLang and reAskName are the
	// assistant's questions a "yes" makes the user's own statement.
	reYes     = regexp.MustCompile(`(?i)^(?:yes|yeah|yep|yup|sure|ok|okay|please do|of course|absolutely|definitely|sim|sí|oui|ja|claro)\b`)
	reAskLang = regexp.MustCompile(`(?i)\b(?:answer|reply|respond|write|talk|speak)(?:ing)?(?:\s+to\s+you)?\s+in\s+(\p{L}+)`)
	reAskName = regexp.MustCompile(`(?i:\bcall\s+you)\s+` + capWord)

	// clauseSep splits a turn into clauses: sentences and comma-separated
	// parts, so that "I'm Ana from Lisbon, answer in Portuguese" is two.
	clauseSep = regexp.MustCompile(`[.!?;,\n]+|\s+and\s+|\s+but\s+`)
)

// notNames are capitalised words that follow "I'm" without being a name.
var notNames = map[string]bool{
	"Here": true, "Back": true, "Fine": true, "Good": true, "Glad": true, "Happy": true,
	"Sorry": true, "Not": true, "Just": true, "Also": true, "Still": true, "Really": true,
	"Very": true, "So": true, "Looking": true, "Trying": true, "Going": true, "Working": true,
	"Living": true, "Based": true, "From": true, "In": true, "At": true, "On": true,
	"Ok": true, "Okay": true, "Sure": true, "Done": true, "Ready": true, "The": true,
	"Thinking": true, "Interested": true,
}

// languages are the values the language rule accepts, so that "reply in
// time" is no preferred language.
var languages = map[string]bool{
	"english": true, "portuguese": true, "spanish": true, "french": true, "german": true,
	"italian": true, "dutch": true, "polish": true, "russian": true, "ukrainian": true,
	"chinese": true, "mandarin": true, "cantonese": true, "japanese": true, "korean": true,
	"arabic": true, "hindi": true, "turkish": true, "greek": true, "swedish": true,
	"norwegian": true, "danish": true, "finnish": true, "czech": true, "romanian": true,
	"hungarian": true, "catalan": true, "galician": true, "basque": true, "hebrew": true,
	"vietnamese": true, "thai": true, "indonesian": true, "bengali": true, "urdu": true,
}

// roleStops end a role phrase: "I'm a nurse in Lisbon" is the role "nurse".
var roleStops = regexp.MustCompile(`(?i)\s+(?:in|at|for|from|with|who|and|but|living|based|working|until|till|through|this)\b.*$`)

// RuleOperations is the stand-in's default extractor: deterministic rules
// over the user turns of a transcript ("User: …" blocks, as memory.Transcript
// writes them). It understands a name ("I'm Ana", "my name is Ana"), a home
// city ("I live in Lisbon", "I'm from Lisbon", "I moved to Porto"), a
// preferred language ("answer in Portuguese", "I speak Portuguese"), a role
// ("I work as a nurse", "I'm a software engineer"), a stay with an end
// ("I'm in Paris until Friday": current_city, only with "until"), statements of a special
// category (see sensitiveOperations) and the forgetting of
// each ("forget where I live", "forget my name", "forget my language",
// "forget my job"). Operations come in the order the user said them; a key
// set twice keeps its last value only. Assistant turns are ignored, but
// for one thing: a user turn that agrees ("yes", "sim") with the
// assistant's question just before it ("Shall I keep answering in
// Portuguese?", "Shall I call you Ana?") states what the question
// proposed. Context turns (the section memory.ExtractionTranscript marks
// as already read) are never read for facts on their own: they only
// supply the question a first new turn may answer.
//
// Every operation quotes its evidence, verbatim from the user turn it was
// read from: the clause that states it, or the whole turn that agreed;
// never an assistant or context turn. A SET whose clause states an end ("until
// Friday", "this month", "for two weeks"; see endOf) carries validUntil,
// counted from today; a SET of a special category carries its category,
// as memory.SensitiveCategory finds it.
func RuleOperations(transcript string, today time.Time) []Operation {
	var ops []Operation
	add := func(op Operation) {
		for i, o := range ops {
			if o.Key == op.Key {
				ops = append(ops[:i], ops[i+1:]...)
				break
			}
		}
		ops = append(ops, op)
	}
	context, recent := sections(transcript)
	asked := "" // the assistant turn just before, when it is the last block
	for _, b := range blocks(context) {
		asked = b.assistantText()
	}
	for _, b := range blocks(recent) {
		if !b.user {
			asked = b.text
			continue
		}
		if asked != "" && reYes.MatchString(strings.TrimSpace(b.text)) {
			for _, op := range agreed(asked) {
				add(stated(op, b.text, today))
			}
		}
		asked = ""
		for _, clause := range clauseSep.Split(b.text, -1) {
			clause = strings.TrimSpace(clause)
			for _, op := range clauseOperations(clause) {
				add(stated(op, clause, today))
			}
		}
	}
	if ops == nil {
		ops = []Operation{}
	}
	return ops
}

// stated returns op as the user stated it in text, a span of one user
// turn: it quotes text as its evidence (the tool's schema requires it of a
// DELETE too, though the store reads it of a SET only); a SET also ends
// when text says so, and names its special category, if any.
func stated(op Operation, text string, today time.Time) Operation {
	op.Evidence = quote(text, op.Value)
	if op.Op != "SET" {
		return op
	}
	op.ValidUntil = endOf(text, today)
	op.Category = memory.SensitiveCategory(op.Key, op.Value, memory.Categories)
	return op
}

// quote returns the evidence of a fact of value stated in text: text
// trimmed, without a word the transcript cut at its start ("…"), and,
// when longer than memory.MaxEvidenceChars runes, the whole words of it
// that fit, starting a few words before value when value is further on.
func quote(text, value string) string {
	q := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(q, "…"); ok {
		if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
			rest = rest[i:]
		}
		q = strings.TrimSpace(rest)
	}
	if utf8.RuneCountInString(q) <= memory.MaxEvidenceChars {
		return q
	}
	if loc := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(value)).FindStringIndex(q); loc != nil &&
		utf8.RuneCountInString(q[:loc[1]]) > memory.MaxEvidenceChars {
		start := max(0, loc[0]-60)
		for start > 0 && !utf8.RuneStart(q[start]) {
			start--
		}
		if i := strings.IndexFunc(q[start:], unicode.IsSpace); i >= 0 && start > 0 {
			start += i
		}
		q = strings.TrimSpace(q[start:])
	}
	r := []rune(q)
	cut := string(r[:min(len(r), memory.MaxEvidenceChars)])
	if len(r) > memory.MaxEvidenceChars && wordRune(r[memory.MaxEvidenceChars]) {
		if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > 0 {
			cut = cut[:i]
		}
	}
	return strings.TrimRightFunc(cut, func(r rune) bool { return !wordRune(r) })
}

// wordRune reports whether r is part of a word.
func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

// sections splits a transcript into its context section and its new
// turns (memory.ExtractionTranscript): the context is empty when the
// transcript has no context section. A forged heading inside a new turn
// can only move turns into the context, which is read for nothing but a
// question.
func sections(transcript string) (context, recent string) {
	sep := "\n\n" + memory.NewTurnsHeading + "\n\n"
	if !strings.HasPrefix(transcript, memory.ContextHeading+"\n\n") {
		return "", transcript
	}
	i := strings.LastIndex(transcript, sep)
	if i < 0 {
		return "", transcript
	}
	return transcript[len(memory.ContextHeading)+2 : i], transcript[i+len(sep):]
}

// block is one turn of a transcript.
type block struct {
	user bool
	text string
}

// assistantText returns the text of an assistant block, "" for a user one.
func (b block) assistantText() string {
	if b.user {
		return ""
	}
	return b.text
}

// blocks returns the turns of a transcript. Blocks are separated by blank
// lines and start with "User: " or "Assistant: "; a block with neither
// continues the one before it. A text without any such block is one user
// turn; an empty text has none.
func blocks(transcript string) []block {
	if transcript == "" {
		return nil
	}
	if !strings.HasPrefix(transcript, "User: ") && !strings.HasPrefix(transcript, "Assistant: ") &&
		!strings.Contains(transcript, "\n\nUser: ") && !strings.Contains(transcript, "\n\nAssistant: ") {
		return []block{{user: true, text: transcript}}
	}
	var out []block
	for _, part := range strings.Split(transcript, "\n\n") {
		switch {
		case strings.HasPrefix(part, "User: "):
			out = append(out, block{user: true, text: strings.TrimPrefix(part, "User: ")})
		case strings.HasPrefix(part, "Assistant: "):
			out = append(out, block{text: strings.TrimPrefix(part, "Assistant: ")})
		case len(out) > 0:
			out[len(out)-1].text += "\n\n" + part
		}
	}
	return out
}

// agreed returns what the user stated by agreeing with the assistant's
// question: a preferred language or a name it proposed. Only a question
// (text with a "?") proposes anything.
func agreed(question string) []Operation {
	if !strings.Contains(question, "?") {
		return nil
	}
	var ops []Operation
	if m := reAskLang.FindStringSubmatch(question); m != nil && languages[strings.ToLower(m[1])] {
		ops = append(ops, Operation{Op: "SET", Key: KeyLanguage, Value: titleCase(m[1])})
	}
	if m := reAskName.FindStringSubmatch(question); m != nil && !notNames[m[1]] {
		ops = append(ops, Operation{Op: "SET", Key: KeyName, Value: m[1]})
	}
	return ops
}

// clauseOperations returns what one clause says; a forget wins over a set
// in the same clause.
func clauseOperations(c string) []Operation {
	if c == "" {
		return nil
	}
	del := func(key string) []Operation { return []Operation{{Op: "DELETE", Key: key}} }
	switch {
	case reForgetCity.MatchString(c):
		return del(KeyHomeCity)
	case reForgetName.MatchString(c):
		return del(KeyName)
	case reForgetLanguage.MatchString(c):
		return del(KeyLanguage)
	case reForgetRole.MatchString(c):
		return del(KeyRole)
	}
	set := func(key, value string) Operation { return Operation{Op: "SET", Key: key, Value: value} }
	var ops []Operation
	if m := reMoved.FindStringSubmatch(c); m != nil {
		ops = append(ops, set(KeyHomeCity, m[1]))
	} else if m := reLiveIn.FindStringSubmatch(c); m != nil {
		ops = append(ops, set(KeyHomeCity, m[1]))
	} else if m := reFrom.FindStringSubmatch(c); m != nil {
		ops = append(ops, set(KeyHomeCity, m[1]))
	}
	if m := reNameIs.FindStringSubmatch(c); m != nil && !notNames[m[1]] {
		ops = append(ops, set(KeyName, m[1]))
	} else if m := reIAmName.FindStringSubmatch(c); m != nil && !notNames[m[1]] && !languages[strings.ToLower(m[1])] {
		ops = append(ops, set(KeyName, m[1]))
		if m[2] != "" {
			ops = append(ops, set(KeyHomeCity, m[2]))
		}
	}
	if m := reLang.FindStringSubmatch(c); m != nil {
		lang := m[1] + m[2]
		if languages[strings.ToLower(lang)] {
			ops = append(ops, set(KeyLanguage, titleCase(lang)))
		}
	}
	if m := reWorkAs.FindStringSubmatch(c); m != nil {
		ops = appendRole(ops, m[1])
	} else if m := reIAmA.FindStringSubmatch(c); m != nil {
		ops = appendRole(ops, m[1])
	}
	if len(ops) > 0 {
		return ops
	}
	if m := reStay.FindStringSubmatch(c); m != nil && saysUntil(c) {
		return []Operation{set(KeyCurrentCity, m[1])}
	}
	return sensitiveOperations(c)
}

func appendRole(ops []Operation, phrase string) []Operation {
	role := strings.TrimSpace(roleStops.ReplaceAllString(phrase, ""))
	if role == "" || utf8.RuneCountInString(role) > 60 {
		return ops
	}
	return append(ops, Operation{Op: "SET", Key: KeyRole, Value: strings.ToLower(role)})
}

func titleCase(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + strings.ToLower(s[n:])
}
