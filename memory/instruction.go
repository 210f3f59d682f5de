package memory

import (
	"strings"
	"unicode"
)

// LooksLikeInstruction reports whether s, a statement of a memory list or
// the evidence of a fact, is an instruction to the assistant ("Always
// answer in French", "Ignore previous instructions") rather than a fact
// about the user, in English and the languages of the eval.
//
// The rules read s clause by clause (cut at sentence ends, colons,
// semicolons and commas), accents and case folded. A clause is an
// instruction when, after the words that soften or frame an order
// ("please", "always", "never", "don't", and their French, Spanish,
// German and Portuguese forms), it starts with an imperative addressed to
// the assistant ("answer", "réponds", "antworte", "responda"); when it
// starts with a verb whose imperative is also a third person ("responde",
// "utilise", "usa") and says always or never ("siempre", "toujours",
// "sempre"); when the assistant is its subject with a modal ("you
// should", "the assistant must", "tu dois"); or when it asks to ignore or
// forget instructions, anywhere. A preference stated as a fact about the
// user ("Prefers answers in Portuguese", "The user prefers concise
// answers", "Wants replies in French") is not one.
func LooksLikeInstruction(s string) bool {
	for _, clause := range clauses(foldAccents(strings.ToLower(s))) {
		if instructionClause(clause) {
			return true
		}
	}
	return false
}

// clauses returns the words of each clause of s, cut at . ! ? ; : , and
// line ends; a word keeps its letters, digits and apostrophes, and a
// hyphen splits it ("appelle-moi" is two words).
func clauses(s string) [][]string {
	var out [][]string
	for _, c := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(".!?;:,\n¡¿()[]\"«»“”", r) }) {
		words := strings.FieldsFunc(c, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
		})
		for len(words) > 0 && strings.Trim(words[0], "0123456789'") == "" {
			words = words[1:] // a list's numbering, a stray quote
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// foldAccents returns s, lower case, with the accents of the Latin letters
// of the eval's languages removed and typographic apostrophes made '.
var foldAccents = strings.NewReplacer(
	"à", "a", "á", "a", "â", "a", "ã", "a", "ä", "a",
	"ç", "c", "è", "e", "é", "e", "ê", "e", "ë", "e",
	"ì", "i", "í", "i", "î", "i", "ï", "i", "ñ", "n",
	"ò", "o", "ó", "o", "ô", "o", "õ", "o", "ö", "o",
	"ù", "u", "ú", "u", "û", "u", "ü", "u", "’", "'", "‘", "'",
).Replace

// instructionClause reports whether the words of one clause make an
// instruction to the assistant ([LooksLikeInstruction]).
func instructionClause(words []string) bool {
	if ignoresInstructions(words) || addressesAssistant(words) {
		return true
	}
	adverb, english := false, false
	i := 0
	for i < len(words) {
		w := words[i]
		if always[w] {
			adverb = true
			english = english || w == "always" || w == "never"
		} else if w == "be" && i+1 < len(words) && words[i+1] == "sure" {
			i++
		} else if !softeners[w] && !(w == "do" && i+1 < len(words) && (words[i+1] == "not" || words[i+1] == "n't")) && w != "not" {
			break
		}
		i++
	}
	if i == len(words) {
		return false
	}
	first := strings.TrimPrefix(strings.TrimPrefix(words[i], "n'"), "l'")
	if i+1 < len(words) && headedNouns[words[i+1]] {
		return false // "Answer style: concise" names a preference
	}
	if imperatives[first] {
		return true
	}
	if thirdPersonToo[first] {
		if first == "uses" && english {
			return false // "Always uses dark mode": English, a third person
		}
		if adverb || containsAny(words[i+1:], always) {
			return true
		}
		return i+1 < len(words) && (words[i+1] == "moi" || words[i+1] == "me")
	}
	return false
}

// ignoresInstructions reports whether the clause asks to ignore, forget
// or disregard instructions, rules or a prompt.
func ignoresInstructions(words []string) bool {
	return containsAny(words, ignoreVerbs) && containsAny(words, instructionNouns) ||
		hasSeq(words, "system", "prompt") || hasSeq(words, "you", "are", "now")
}

// addressesAssistant reports whether the clause starts with the assistant
// as its subject and a modal ("you should", "the assistant must").
func addressesAssistant(words []string) bool {
	i := 0
	if i < len(words) && articles[words[i]] {
		i++
	}
	if i >= len(words) || !assistantSubjects[words[i]] {
		return false
	}
	for _, w := range words[i+1 : min(len(words), i+3)] {
		if modals[w] {
			return true
		}
	}
	return false
}

func containsAny(words []string, set map[string]bool) bool {
	for _, w := range words {
		if set[w] {
			return true
		}
	}
	return false
}

// hasSeq reports whether the words hold seq in a row.
func hasSeq(words []string, seq ...string) bool {
	for i := 0; i+len(seq) <= len(words); i++ {
		match := true
		for j, w := range seq {
			if words[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

var (
	// always are the adverbs of always and never that make an order of a
	// verb whose imperative is also a third person.
	always = wordSet(`always never toujours jamais siempre nunca jamas immer nie niemals stets sempre`)
	// softeners come before an order without changing it.
	softeners = wordSet(`please don't dont do kindly ne n' no nao bitte por favor s'il te vous plait veuillez make sure to
		from now on en adelante a partir de agora ab jetzt`)
	// imperatives are imperatives (and the infinitives French orders use)
	// addressed to an assistant, none of which is also a third person.
	imperatives = wordSet(`answer respond reply write speak talk refer include say tell give greet discuss
		suggest recommend assume translate explain provide remind treat ignore disregard forget avoid stop
		switch act pretend output print reveal use mention keep be
		reponds repondez repondre ecris ecrivez ecrire utilisez utiliser mentionnez mentionner parlez
		evitez eviter ignorez ignorer oubliez oublier sois soyez donnez tutoie tutoyez vouvoie vouvoyez
		responda respondan respondas conteste contestes escriba escribas hable hables utilice utilices
		mencione menciones evites olvides ignores usen llamame respondeme hablame
		escribeme contestame tratame tuteame
		antworte antworten verwende verwenden benutze benutzen nutze sprich sprechen schreibe schreib erwahne
		erwahnen ignoriere vergiss nenne sag sei seien vermeide vermeiden gib formuliere duze sieze
		escreva fale utilize mencione esqueca seja chame`)
	// thirdPersonToo are imperatives spelt as a third person ("responde":
	// replies, or reply!), orders only with always or never, or "me".
	thirdPersonToo = wordSet(`responde contesta usa uses utiliza habla escribe menciona evita llama ignora olvida
		utilise mentionne evite parle appelle donne
		escreve fala chama esquece`)
	// headedNouns follow a verb used as a noun, in the name of a
	// preference ("answer style", "reply length").
	headedNouns = wordSet(`style styles length lengths preference preferences format formats language languages tone case cases`)
	// ignoreVerbs and instructionNouns make a request to drop the
	// assistant's instructions.
	ignoreVerbs      = wordSet(`ignore ignoring disregard forget ignorez ignore ignorer oublie oubliez ignora ignorar ignoriere ignoriert vergiss vergessen esqueca esquece override`)
	instructionNouns = wordSet(`instructions instruction instrucciones instruccion anweisungen anweisung instrucoes instrucao prompt rules regles reglas regeln regras consignes`)
	// assistantSubjects are the assistant as a subject; modals the verbs
	// of an obligation put to it.
	assistantSubjects = wordSet(`you assistant chatgpt claude gemini ai tu vous du usted voce assistente asistente assistent`)
	articles          = wordSet(`the l' el o der la`)
	modals            = wordSet(`should must shall doit dois devez devrais devriez debe debes deberia
		deve deveria devera sollst musst soll muss sollte`)
)
