package fakebedrock

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/usermemory/usermemory/memory"
)

// reImportPrompt tells an import call from an extraction by its system
// prompt: the MEMORY_IMPORT prompt (memory.DefaultImportPrompt) speaks of
// the "memory list" another assistant wrote; the MEMORY_USER prompt does
// not.
var reImportPrompt = regexp.MustCompile(`(?i)\bmemory\s+list\b|\bMEMORY_IMPORT\b`)

// IsImportPrompt reports whether system, the system prompt of a request,
// is the MEMORY_IMPORT prompt of an import rather than the MEMORY_USER
// prompt of an extraction.
func IsImportPrompt(system string) bool { return reImportPrompt.MatchString(system) }

// Keys the import rules set besides those of the extraction rules.
const (
	KeyEmployer = "employer"
	KeyStyle    = "answer_style"
	KeyTimeZone = "time_zone"
	KeyDiet     = "diet"
	KeyPet      = "pet"
	KeyUnits    = "units"
	KeyBirthday = "birthday"
	KeyEmail    = "email"
	KeyChildren = "children"
	// KeyTrip is a dated plan ("Is planning a trip to Japan in March
	// 2024"): set with the last day of its month as validUntil, so that a
	// plan already over is left out by the store as ended.
	KeyTrip = "planned_trip"
)

// importRule reads one kind of statement: the first group of re is the
// value of key.
type importRule struct {
	re  *regexp.Regexp
	key string
	// strict: the value must end as a trade does (reRoleWord), after the
	// role's stop words are cut ("is a designer based in…").
	strict bool
}

// ir builds an importRule; pattern is case-insensitive except inside
// capWords (names and places start with a capital letter).
func ir(key, pattern string) importRule { return importRule{re: regexp.MustCompile(pattern), key: key} }

// importPhrase is a lower-case phrase value (a role, a style) up to the end of
// its clause.
const importPhrase = `([^,;.()]{2,60})`

// importRules are the predicates the stand-in reads in a statement about
// the user, in English, French, Spanish, German and Portuguese; earlier
// rules win over later ones on the same words.
var importRules = []importRule{
	ir(KeyLanguage, `(?i:prefers|wants)\s+(?i:answers|responses|replies)\s+in\s+(\p{L}+)`),
	ir(KeyLanguage, `(?i:préfère\s+(?:des|les)\s+réponses\s+en|prefiere\s+(?:las\s+)?respuestas\s+en|prefere\s+(?:as\s+)?respostas\s+em|bevorzugt\s+Antworten\s+auf)\s+(\p{L}+)`),
	ir(KeyLanguage, `(?i:native\s+language\s+is|langue\s+maternelle\s+est\s+le|lengua\s+materna\s+es\s+el|Muttersprache\s+ist|língua\s+materna\s+é\s+o)\s+(\p{L}+)`),
	ir(KeyUnits, `(?i:prefers|uses)\s+(?i:the\s+)?((?i:metric|imperial)(?:\s+units)?)`),
	ir(KeyDiet, `(?i:\bis\s+an?|\bis|\best|\bes|\bist|(?:^|\s)é)\s+((?i:vegetarian|vegan|pescatarian|végétarienne?|végane?|vegetarian[oa]|vegan[oa]|Vegetarier(?:in)?|Veganer(?:in)?))\b`),
	ir(KeyName, `(?i:\bis\s+named|\bis\s+called|\bgoes\s+by|\bname\s+is|s['’]appelle|se\s+prénomme|se\s+llama|chama-se|se\s+chama|hei(?:ß|ss)t)\s+`+capWords),
	ir(KeyHomeCity, `(?i:\blives\s+in|\bbased\s+in|\bresides\s+in|\bis\s+living\s+in|\b(?:recently\s+)?moved\s+to|habite\s+(?:à|a|en)|vit\s+(?:à|en)|réside\s+(?:à|en)|vive\s+en|reside\s+en|se\s+mudó\s+a|wohnt\s+in|lebt\s+in|mora\s+em|vive\s+em|reside\s+em|mudou-se\s+para)\s+`+capWords),
	ir(KeyEmployer, `(?i:\bworks\s+at|\bworks\s+for|\bis\s+employed\s+(?:at|by)|\bnew\s+job\s+at|travaille\s+(?:chez|pour)|trabaja\s+(?:en|para)|arbeitet\s+bei|trabalha\s+(?:na|no|em|para))\s+`+capWords),
	ir(KeyRole, `(?i:\bworks\s+as|travaille\s+(?:comme|en\s+tant\s+que)|trabaja\s+(?:como|de)|arbeitet\s+als|trabalha\s+como)\s+(?i:an?\s+|une?\s+|una?\s+|um\s+|uma\s+)?`+importPhrase),
	{re: regexp.MustCompile(`(?i:\bis\s+an?)\s+` + importPhrase), key: KeyRole, strict: true},
	ir(KeyStyle, `(?i:prefers|préfère|prefiere|prefere|bevorzugt)\s+(`+`[^,;.()]{0,40}(?i:answers|responses|replies|explanations|réponses|explications|respuestas|respostas|explicações|Antworten|Erklärungen)[^,;.()]{0,40})`),
	ir(KeyTimeZone, `(?i:time\s*zone\s+is|fuseau\s+horaire\s+est|zona\s+horaria\s+es|Zeitzone\s+ist|fuso\s+horário\s+é)\s+([^,;()]{2,40}?)\s*(?:[.,;()]|$)`),
	ir(KeyPet, `(?i:has\s+an?|a\s+une?|tiene\s+una?|hat\s+eine?n?|tem\s+uma?)\s+((?i:dog|cat|chien|chat|chienne|chatte|perro|perra|gato|gata|Hund|Katze|cão|cadela)\s+(?i:named|called|nommée?|appelée?|llamad[oa]|namens|chamad[oa])\s+`+capWord+`)`),
	ir(KeyChildren, `(?i:\bhas|\ba|\btiene|\bhat|\btem)\s+((?i:one|two|three|four|a|an|un|une|deux|trois|dos|tres|zwei|drei|ein|eine|um|uma|dois|duas|\d)\s+(?i:child|children|kids?|enfants?|hij[oa]s?|Kinder|Kind|filh[oa]s?))\b`),
	ir(KeyEmail, `(?i:e-?mail(?:\s+address)?\s+is|adresse\s+e-?mail\s+est|correo\s+es|E-Mail-Adresse\s+ist|e-?mail\s+é)\s+(\S+@\S+?)\.?(?:\s|$)`),
}

// The statements the import rules never read as the user's: a statement
// about someone close to the user, a negated one, a hypothetical one.
var (
	reRelation = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(?:partner|wife|husband|spouse|girlfriend|boyfriend|mother|father|mom|mum|dad|son|daughter|brother|sister|friend|colleague|coworker|boss|manager's|mari|femme|épouse|compagne|compagnon|mère|père|fils|fille|frère|sœur|soeur|amie?|collègue|esposa|esposo|marido|mujer|pareja|novi[oa]|madre|padre|hij[oa]|herman[oa]|amig[oa]|jefe|jefa|Frau|Mann|Partnerin|Freundin|Freund|Mutter|Vater|Sohn|Tochter|Bruder|Schwester|Kollegin|Kollege|mulher|namorad[oa]|mãe|pai|filh[oa]|irmão|irmã|chefe)(?:$|[^\p{L}])`)
	reNegated  = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(?:no\s+longer|not|never|used\s+to|formerly|previously|ne|n['’]|plus|ya\s+no|no|nicht|nicht\s+mehr|kein|não|já\s+não|considering|might|may|would\s+like\s+to|envisage|piensa|überlegt|pensa\s+em)(?:$|[^\p{L}])`)
	// reUserSubject is a statement's subject when it is the user: "The
	// user", "User's", a pronoun, in the five languages.
	reUserSubject = regexp.MustCompile(`(?i)^(?:the\s+user(?:['’]s)?|user(?:['’]s)?|they|their|he|his|she|her|you|your|tu|ton|ta|tes|tú|tus|du|dein|deine|você|teu|tua|l['’]utilisat(?:eur|rice)|son|sa|ses|el\s+usuario|la\s+usuaria|su|der\s+(?:nutzer|benutzer|anwender)|die\s+(?:nutzerin|benutzerin|anwenderin)|seine?|ihre?|er|sie|il|elle|él|ella|ele|ela|o\s+usuário|a\s+usuária|o\s+utilizador|a\s+utilizadora|seu|sua)\b`)
	// reLead is what leads a statement without being part of it: a list
	// bullet or number, a date in brackets.
	// rePossessive is "The user's x is y", x in the first group and y in
	// the second.
	rePossessive = regexp.MustCompile(`(?i)^(?:the\s+user['’]s|user['’]s|their|his|her|your|sein|seine|ihr|ihre)\s+([\p{L}][\p{L} -]{1,30}?)\s+(?:is|lautet|ist)\s+(\S[^ ]*(?:\s\S+){0,4})$`)
	reListMarker = regexp.MustCompile(`^\s*</?memory_list>\s*$`)
	reLead       = regexp.MustCompile(`^(?:[-*•·–]\s+|\d{1,3}[.)]\s+)?(?:\[\d{4}-\d{2}-\d{2}\][.:]?\s*)?`)
	// reLabel is a "Label: value" line; reRoleWord the end of a word that
	// names a trade.
	reLabel           = regexp.MustCompile(`^\s*([\p{L}][\p{L} '’/-]{0,30}?)\s*:\s*(\S.*)$`)
	reImportRoleStops = regexp.MustCompile(`(?i)\s+(?:bei|chez|à|au|en|na|no|em|para|pour|für|seit|depuis|desde|y|et|e|und|dans|im)(?:\s.*)?$`)
	reRoleWord        = regexp.MustCompile(`(?i)(?:er|or|ist|ian|ant|ent|ect|eur|euse|ero|era|ora|in|nurse|teacher|chef|student|doctor|lawyer|writer|pilot)$`)
	// reTripPlan is a dated trip, the destination in its group, and
	// reMonthYear its month and year.
	reTripPlan  = regexp.MustCompile(`(?i:trip|travel|visit|voyage|viaje|Reise|viagem)\s+(?i:to|au|aux|à|en|a|al|nach|ao|à|para)\s+` + capWords)
	reMonthYear = regexp.MustCompile(`(?i)\b(january|february|march|april|may|june|july|august|september|october|november|december|janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|januar|februar|märz|juni|juli|oktober|dezember|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro)(?:\s+de)?\s+(\d{4})\b`)
)

// labelKeys are the labels of "Label: value" lines, in lower case, to the
// key they name; an unknown label is its own canonical key.
var labelKeys = map[string]string{
	"name": KeyName, "nom": KeyName, "prénom": KeyName, "nombre": KeyName, "nome": KeyName, "vorname": KeyName,
	"location": KeyHomeCity, "city": KeyHomeCity, "home": KeyHomeCity, "ville": KeyHomeCity, "ciudad": KeyHomeCity,
	"ubicación": KeyHomeCity, "wohnort": KeyHomeCity, "stadt": KeyHomeCity, "cidade": KeyHomeCity, "localização": KeyHomeCity,
	"occupation": KeyRole, "job": KeyRole, "role": KeyRole, "profession": KeyRole, "métier": KeyRole, "profesión": KeyRole,
	"beruf": KeyRole, "profissão": KeyRole, "employer": KeyEmployer, "company": KeyEmployer, "employeur": KeyEmployer,
	"entreprise": KeyEmployer, "empresa": KeyEmployer, "arbeitgeber": KeyEmployer, "time zone": KeyTimeZone,
	"timezone": KeyTimeZone, "fuseau horaire": KeyTimeZone, "zona horaria": KeyTimeZone, "zeitzone": KeyTimeZone,
	"fuso horário": KeyTimeZone, "language": KeyLanguage, "langue": KeyLanguage, "idioma": KeyLanguage, "sprache": KeyLanguage,
	"diet": KeyDiet, "régime": KeyDiet, "dieta": KeyDiet, "ernährung": KeyDiet, "birthday": KeyBirthday,
	"anniversaire": KeyBirthday, "cumpleaños": KeyBirthday, "geburtstag": KeyBirthday, "aniversário": KeyBirthday,
	"email": KeyEmail, "e-mail": KeyEmail, "pet": KeyPet, "answer style": KeyStyle, "response style": KeyStyle,
}

// ImportOperations is the stand-in's reading of a memory list pasted from
// another assistant, the one user turn of an import call: rules, not a
// model. It reads the list line by line, and each line sentence by
// sentence, as ChatGPT, Claude and Gemini write such lists: "- Prefers
// concise answers", "The user lives in Lisbon.", "Name: Ana", "User's
// partner is called João", "[2024-05-02]. Lives in Porto", in English,
// French, Spanish, German and Portuguese. A statement is read only when
// its subject is the user: none ("Lives in Lisbon"), "the user" or a
// pronoun, or the user's name the list gives ("Ana works as…"); never
// when it names someone close to the user or is negated. Each SET quotes
// the statement it was read from, a span of the pasted text.
//
// What it misses, honestly: any phrasing outside its rules (a statement
// it does not understand is left out, not guessed), lists in the second
// person ("Tu vis à Bordeaux", which a vendor may write despite the
// prompt; "You live in…" only through the English rules), other people named
// without a word of kinship ("Marc lives in Paris" is skipped only when
// the list's name is known and is not Marc), and instructions, which it
// never reads as facts unless they hide in a "Label: value" line; it
// proposes what a naive model would propose from a label (an "API key"
// or a "Password" line), so that the store's own filters are what keeps
// secrets and instructions out. A dated plan ("a trip to Japan in March
// 2024") is set with the last day of its month, so that the store leaves
// out one already over. It never answers a DELETE.
func ImportOperations(text string) []Operation {
	var stmts []string
	for _, b := range blocks(text) {
		if b.user {
			stmts = append(stmts, statements(b.text)...)
		}
	}
	name := ""
	for _, s := range stmts {
		if n := nameIn(s); n != "" {
			name = n
			break
		}
	}
	ops := []Operation{}
	if name == "" {
		// The name a prose list calls the user by is the user's name,
		// quoted from the first statement it starts.
		if name = subjectName(stmts); name != "" {
			for _, s := range stmts {
				if body := strings.TrimLeft(s[len(reLead.FindString(s)):], "* "); strings.HasPrefix(body, name+" ") {
					ops = append(ops, Operation{Op: "SET", Key: KeyName, Value: name, Evidence: quote(body, name)})
					break
				}
			}
		}
	}
	for _, s := range stmts {
		for _, op := range statementOperations(s, name) {
			ops = slicesDeleteKey(ops, op.Key)
			ops = append(ops, op)
		}
	}
	return ops
}

// subjectName returns the name a list calls the user by when it has no
// name line, as Claude's prose does ("Ana is a designer… Ana prefers…"):
// the capitalised first word that starts two statements or more and is
// neither a verb nor a pronoun nor a label's ("Favourite colour: green");
// "" when there is none.
func subjectName(stmts []string) string {
	count := map[string]int{}
	best := ""
	for _, s := range stmts {
		body := strings.TrimLeft(s[len(reLead.FindString(s)):], "* ")
		words := strings.FieldsFunc(body, func(r rune) bool { return !unicode.IsLetter(r) })
		if len(words) < 2 || reUserSubject.MatchString(body) || firstWordIsVerb(body) || labelled(body) {
			continue
		}
		w := words[0]
		if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) || !strings.HasPrefix(body, w+" ") {
			continue
		}
		if count[w]++; count[w] >= 2 && count[w] > count[best] {
			best = w
		}
	}
	return best
}

// labelled says whether a statement is a "Label: value" line, whose first
// word names a label ("Favourite colour: green"), never the user.
func labelled(body string) bool {
	i := strings.Index(body, ":")
	return i > 0 && len(strings.Fields(body[:i])) <= 4
}

// slicesDeleteKey returns ops without its operation on key, if any: a key
// set twice keeps its last value.
func slicesDeleteKey(ops []Operation, key string) []Operation {
	for i, o := range ops {
		if o.Key == key {
			return append(ops[:i], ops[i+1:]...)
		}
	}
	return ops
}

// statements splits a memory list into its statements: each line, cut
// after each sentence (a ".", "!", "?" or ";" followed by a space), each
// one a span of the text, trimmed.
func statements(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if reListMarker.MatchString(line) {
			continue // the markers the store puts around the list
		}
		start := 0
		for i, r := range line {
			if strings.ContainsRune(".!?;", r) && i+1 < len(line) && line[i+1] == ' ' {
				out = appendStatement(out, line[start:i+1])
				start = i + 1
			}
		}
		out = appendStatement(out, line[start:])
	}
	return out
}

func appendStatement(out []string, s string) []string {
	if s = strings.TrimSpace(s); s != "" {
		out = append(out, s)
	}
	return out
}

// nameIn returns the user's name a statement gives ("Name: Ana", "The
// user's name is Ana"), "" when it gives none.
func nameIn(s string) string {
	for _, op := range statementOperations(s, "") {
		if op.Key == KeyName {
			return op.Value
		}
	}
	return ""
}

// statementOperations returns what one statement says of the user, the
// user's name being name ("" when unknown).
func statementOperations(s, name string) []Operation {
	body := s[len(reLead.FindString(s)):]
	if body == "" || strings.HasPrefix(body, "#") {
		return nil
	}
	if m := reLabel.FindStringSubmatchIndex(strings.ReplaceAll(body, "**", "  ")); m != nil {
		label, value := body[m[2]:m[3]], body[m[4]:m[5]]
		// "User's name: Sam" is the label "name".
		label = strings.TrimSpace(label[len(reUserSubject.FindString(label)):])
		if label == "" {
			return predicateOperations(strings.TrimSpace(value), name)
		}
		if _, known := labelKeys[strings.ToLower(label)]; known {
			return labelOperation(body, label, value)
		}
		// An unknown label ("Work context: Ana is a designer…") heads
		// statements the rules may read; else it is read as a key.
		if ops := predicateOperations(strings.TrimSpace(strings.TrimPrefix(value, "**")), name); len(ops) > 0 {
			return ops
		}
		return labelOperation(body, label, value)
	}
	return predicateOperations(body, name)
}

// predicateOperations returns what the predicates of body, a statement
// without its lead, say of the user; each quotes body.
func predicateOperations(body, name string) []Operation {
	type hit struct {
		key, value string
		from, to   int
	}
	var hits []hit
	for _, r := range importRules {
		for _, loc := range r.re.FindAllStringSubmatchIndex(body, -1) {
			h := hit{key: r.key, value: strings.TrimSpace(body[loc[2]:loc[3]]), from: loc[0], to: loc[1]}
			if r.key == KeyRole {
				// The role ends where its stop word starts ("a designer
				// based in Porto"): what follows stays for other rules.
				h.value = strings.TrimSpace(reImportRoleStops.ReplaceAllString(roleStops.ReplaceAllString(h.value, ""), ""))
				if h.value == "" || (r.strict && !reRoleWord.MatchString(h.value)) {
					continue
				}
				h.to = loc[2] + len(h.value)
			}
			if !slices.ContainsFunc(hits, func(o hit) bool { return h.from < o.to && o.from < h.to }) {
				hits = append(hits, h)
			}
		}
	}
	if m := reTripPlan.FindStringSubmatchIndex(body); m != nil {
		if _, ok := monthEnd(body); ok {
			hits = append(hits, hit{key: KeyTrip, value: body[m[0]:m[1]], from: m[0], to: m[1]})
		}
	}
	if len(hits) == 0 {
		// "The user's GitHub password is hunter2": what a naive model
		// reads as a fact, which the store's secret filter must refuse.
		if m := rePossessive.FindStringSubmatchIndex(body); m != nil && !reRelation.MatchString(body[m[2]:m[3]]) {
			key := memory.CanonicalKey(body[m[2]:m[3]])
			if key != "" {
				hits = append(hits, hit{key: key, value: strings.TrimRight(body[m[4]:m[5]], "."), from: 0, to: m[1]})
			}
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return a.from - b.from })
	var ops []Operation
	last := -1 // the end of the last predicate read as the user's
	for _, h := range hits {
		// The first predicate needs the user as its subject; the next
		// ones go on with it unless what joins them names someone else
		// or negates ("… and her brother lives in Madrid").
		if last < 0 && !aboutUser(body[:h.from], name) {
			continue
		}
		if last >= 0 && h.from >= last && !joined(body[last:h.from]) {
			continue
		}
		last = max(last, h.to)
		op := Operation{Op: "SET", Key: h.key, Value: h.value, Evidence: quote(body, h.value)}
		if h.key == KeyTrip {
			op.ValidUntil, _ = monthEnd(body)
		}
		op.Category = memory.SensitiveCategory(op.Key, op.Value, memory.Categories)
		ops = append(ops, op)
	}
	return ops
}

// joined reports whether gap, the words between two predicates of one
// statement, keeps the first one's subject: it names no one else and
// negates nothing.
func joined(gap string) bool { return !reRelation.MatchString(gap) && !reNegated.MatchString(gap) }

// labelOperation reads a "Label: value" statement s, without its lead:
// the label's key, or the label itself as a key.
func labelOperation(s, label, value string) []Operation {
	label = strings.TrimSpace(strings.ReplaceAll(label, "**", ""))
	value = strings.TrimRight(strings.TrimSpace(strings.ReplaceAll(value, "**", "")), ".")
	key, ok := labelKeys[strings.ToLower(strings.TrimSpace(label))]
	if !ok {
		key = memory.CanonicalKey(label)
	}
	if key == "" || value == "" || utf8.RuneCountInString(value) > 120 || reRelation.MatchString(label) {
		return nil
	}
	return []Operation{{Op: "SET", Key: key, Value: value, Evidence: quote(s, value),
		Category: memory.SensitiveCategory(key, value, memory.Categories)}}
}

// aboutUser reports whether a statement whose predicate follows prefix is
// about the user: prefix is empty, the user ("The user", "She", "User's")
// or the user's name, and names neither a relation nor a negation.
func aboutUser(prefix, name string) bool {
	p := strings.TrimSpace(prefix)
	if reRelation.MatchString(p) || reNegated.MatchString(p) {
		return false
	}
	if p == "" || reUserSubject.MatchString(p) {
		return true
	}
	if name != "" && strings.HasPrefix(p, name) {
		rest := p[len(name):]
		r, _ := utf8.DecodeRuneInString(rest)
		return rest == "" || !unicode.IsLetter(r)
	}
	// A sentence that goes on ("Lives in Lisbon and works as…") keeps its
	// subject: what leads it is lower case.
	r, _ := utf8.DecodeRuneInString(p)
	return unicode.IsLower(r) || (unicode.IsUpper(r) && firstWordIsVerb(p))
}

// firstWordIsVerb reports whether s starts with a verb of the rules'
// statements without a subject ("Works as a nurse and lives in…",
// "Is planning…").
func firstWordIsVerb(s string) bool {
	w := strings.ToLower(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })[0])
	switch w {
	case "is", "lives", "works", "has", "prefers", "uses", "wants", "likes", "enjoys", "speaks",
		"habite", "vit", "travaille", "est", "préfère", "a", "vive", "trabaja", "es", "prefiere", "tiene",
		"wohnt", "lebt", "arbeitet", "ist", "bevorzugt", "hat", "mora", "trabalha", "é", "prefere", "tem",
		"plans", "planning", "prévoit", "planea", "plant", "está", "planeja", "se", "s", "heißt", "heisst", "chama":
		return true
	}
	return false
}

// monthNumbers are the month names of reMonthYear.
var monthNumbers = map[string]time.Month{}

func init() {
	for i, names := range [][]string{
		{"january", "janvier", "enero", "januar", "janeiro"}, {"february", "février", "febrero", "februar", "fevereiro"},
		{"march", "mars", "marzo", "märz", "março"}, {"april", "avril", "abril"}, {"may", "mai", "mayo", "maio"},
		{"june", "juin", "junio", "juni", "junho"}, {"july", "juillet", "julio", "juli", "julho"},
		{"august", "août", "agosto"}, {"september", "septembre", "septiembre", "setembro"},
		{"october", "octobre", "octubre", "oktober", "outubro"}, {"november", "novembre", "noviembre", "novembro"},
		{"december", "décembre", "diciembre", "dezember", "dezembro"},
	} {
		for _, n := range names {
			monthNumbers[n] = time.Month(i + 1)
		}
	}
}

// monthEnd returns the last day (YYYY-MM-DD) of the month and year s
// names ("in March 2024", "en mars 2024", "im März 2024").
func monthEnd(s string) (string, bool) {
	m := reMonthYear.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	month := monthNumbers[strings.ToLower(m[1])]
	year, err := strconv.Atoi(m[2])
	if month == 0 || err != nil {
		return "", false
	}
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), true
}

// listLabels are the labels of [FactList]: thirty subjects of the user,
// none a secret, an instruction or another person, no two starting with
// one word (the stand-in would take a word that starts two statements
// for the user's name).
var listLabels = []string{
	"Name", "City", "Occupation", "Employer", "Time zone", "Language", "Diet", "Pet", "Birthday",
	"Colour", "Food", "Sport", "Band", "Book", "Film",
	"Hobby", "Instrument", "Car", "Phone model", "Coffee order", "Tea", "Shoe size", "Height", "Native country",
	"University", "Degree", "Team", "Garden", "Editor", "Keyboard layout",
}

// listValues are the values of [FactList], one a label.
var listValues = []string{
	"Ana", "Porto", "nurse", "Hospital São João", "Europe/Lisbon", "Portuguese", "vegetarian", "a cat named Miso", "14 March",
	"green", "bacalhau", "padel", "Radiohead", "Ensaio sobre a Cegueira", "Amélie",
	"pottery", "cello", "a blue Fiat 500", "Fairphone 5", "a flat white", "green tea", "38", "1.68 m", "Portugal",
	"Universidade do Porto", "nursing", "FC Porto", "a balcony of herbs", "Vim", "Portuguese ISO",
}

// FactList returns a memory list of n "Label: value" lines (n at most
// len(listLabels), 30), each a fact of its own about the user: the
// stand-in reads n SETs from it ([ImportOperations]), each quoting its
// line. Tests import it to show that an import proposes every fact of a
// list.
func FactList(n int) string {
	lines := make([]string, min(n, len(listLabels)))
	for i := range lines {
		lines[i] = "- " + listLabels[i] + ": " + listValues[i]
	}
	return strings.Join(lines, "\n")
}
