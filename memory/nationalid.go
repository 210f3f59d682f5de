package memory

import (
	"slices"
	"strings"
	"unicode"
)

// An idScheme is a national identity, social security, tax or passport
// number: the words that name it, lower case, and valid, which reports
// whether a written number (separators included) is one of its numbers,
// check digits where the scheme defines them.
//
// Sources read on 2026-12-08:
//   - US SSN: SSA, "SSN Randomization FAQs"
//     (ssa.gov/employer/randomizationfaqs.html): no area 000, 666 or
//     900-999, no group 00, no serial 0000, no check digit.
//   - US ITIN: Microsoft Learn, "U.S. individual taxpayer identification
//     number (ITIN)" (learn.microsoft.com/en-us/purview/sit-defn-us-
//     individual-taxpayer-identification-number): 9, two digits, then
//     50-65, 70-88, 90-92 or 94-99; no check digit.
//   - Portugal Cartão de Cidadão: AMA, "Validação de Número de Documento
//     do Cartão de Cidadão" (autenticacao.gov.pt): 8 digits, a check
//     digit, two letters, a digit; every second value from the right
//     doubled, the sum 0 modulo 10.
//   - France NIR: INSEE's definition as published by publimath.fr
//     ("numéro de sécurité sociale"): 13 digits, 2A and 2B read as 19 and
//     18, the key 97 minus the number modulo 97.
//   - Germany Steuer-ID: StIdV § 1 (gesetze-im-internet.de): ten digits
//     and a check digit.
//
// The other schemes' checks are as python-stdnum implements them
// (arthurdejong.org/python-stdnum, not re-read here): Portugal NIF, Brazil
// CPF, Spain DNI and NIE, Germany Steuer-ID (ISO 7064 MOD 11,10) and
// Personalausweis (7-3-1), Italy codice fiscale, Netherlands BSN, Poland
// PESEL, Sweden personnummer, Türkiye T.C. Kimlik No, Russia SNILS, Japan
// My Number, China resident ID (ISO 7064 MOD 11-2), India Aadhaar
// (Verhoeff), Israel Teudat Zehut, Saudi national ID (Luhn), UK National
// Insurance number. Each passes the scheme's own published example in
// nationalid_test.go (CPF 111.444.777-35, DNI 12345678Z, codice fiscale
// RSSMRA85T10A562S, PESEL 44051401359, T.C. 10000000146, SNILS 112-233-445
// 95, China 11010519491231002X, Aadhaar 234123412346, Steuer-ID
// 86095742719, Personalausweis L01X00T47 with check digit 1), which a
// wrong check would fail. Brazil's RG (issued by each state) and Korea's
// resident registration number (no check digit on numbers issued since
// October 2020) are checked by shape only; passports (ICAO Doc 9303) by
// shape: 6 to 10 letters and digits, at least five digits, with no dot,
// hyphen or slash (unlike a date).
//
// No Go library validates these, and the core imports the standard
// library only.
type idScheme struct {
	words []string
	valid func(written string) bool
}

// idSchemes are the numbers [SecretKind] knows, by the languages of the
// gold set. A word may name several schemes ("nif" in Portugal and Spain).
var idSchemes = []idScheme{
	{[]string{"ssn", "social security number", "social security no", "social security #", "social security"}, validSSNOrITIN},
	{[]string{"itin", "individual taxpayer identification number"}, validITIN},
	{[]string{"national insurance number", "national insurance no", "ni number", "nino"}, validNINO},
	{passportWords, validPassport},
	{[]string{"nif", "número de contribuinte", "numero de contribuinte", "número fiscal", "numero fiscal", "número de identificação fiscal"}, validNIF},
	{[]string{"cartão de cidadão", "cartao de cidadao", "cartão do cidadão", "número de identificação civil", "bilhete de identidade"}, validCartaoCidadao},
	{[]string{"cpf", "cadastro de pessoas físicas"}, validCPF},
	{[]string{"rg", "registro geral", "carteira de identidade"}, validRG},
	{[]string{"dni", "nif", "documento nacional de identidad", "número de identificación fiscal"}, validDNI},
	{[]string{"nie", "número de identidad de extranjero", "numero de identidad de extranjero"}, validNIE},
	{[]string{"nir", "numéro de sécurité sociale", "numero de securite sociale", "sécurité sociale", "securite sociale", "carte vitale", "insee"}, validNIR},
	{[]string{"steuer-id", "steuerid", "steuer id", "steuer-identifikationsnummer", "steueridentifikationsnummer", "steuerliche identifikationsnummer", "identifikationsnummer", "idnr"}, validSteuerID},
	{[]string{"personalausweis", "personalausweisnummer", "ausweisnummer", "ausweis"}, validAusweis},
	{[]string{"codice fiscale", "cod. fiscale", "cod fisc"}, validCodiceFiscale},
	{[]string{"bsn", "burgerservicenummer", "sofinummer"}, validBSN},
	{[]string{"pesel"}, validPESEL},
	{[]string{"personnummer", "personnr", "samordningsnummer"}, validPersonnummer},
	{[]string{"tc kimlik", "t.c. kimlik", "kimlik no", "kimlik numarası", "kimlik numaram", "tckn"}, validTCKN},
	{[]string{"снилс"}, validSNILS},
	{[]string{"マイナンバー", "個人番号"}, validMyNumber},
	{[]string{"身份证", "公民身份号码"}, validChinaID},
	{[]string{"주민등록번호", "주민번호"}, validKoreaRRN},
	{[]string{"aadhaar", "aadhar", "आधार"}, validAadhaar},
	{[]string{"תעודת זהות", "מספר זהות", "ת.ז", "ת\"ז", "teudat zehut"}, validTeudatZehut},
	{[]string{"رقم الهوية", "الهوية الوطنية", "رقم الإقامة", "iqama"}, validSaudiID},
	{[]string{"national id", "national identity number", "identity number", "id card number", "tin", "tax id",
		"tax identification number", "taxpayer identification number", "tax number"}, validAnyID},
}

// passportWords name a passport number in the languages of the gold set;
// "passport" alone names the document, whose number follows it in a
// sentence, not its expiry ("passport expires 2031-05-01": a date).
var passportWords = append(slices.Clone(passportDocuments), "passport number", "passport no", "reisepassnummer",
	"passnummer", "paspoortnummer", "número de passaporte", "numero de passaporte", "número de pasaporte",
	"numero de pasaporte", "numéro de passeport", "numero de passeport", "numero di passaporto", "numer paszportu",
	"pasaport numarası", "pasaport no", "номер паспорта", "旅券番号", "パスポート番号", "护照号码", "여권번호",
	"पासपोर्ट नंबर", "رقم جواز السفر", "מספר דרכון")

// passportDocuments name the passport itself.
var passportDocuments = []string{"passport", "passaporte", "pasaporte", "passeport", "reisepass", "passaporto",
	"paspoort", "paszport", "pasaport", "паспорт", "パスポート", "旅券", "护照", "여권", "पासपोर्ट", "جواز السفر", "דרכון"}

// documentWords name a document or an institution, not a number: in a
// key they say nothing of the value ("passport_country",
// "social_security_benefit"); in a sentence a number follows them.
var documentWords = append(slices.Clone(passportDocuments), "ausweis", "personalausweis", "social security",
	"sécurité sociale", "securite sociale", "carte vitale", "insee")

// nationalIDKey reports whether key, a fact's key in snake case, names a
// national identity, tax or passport number ("ssn", "cpf_do_pai",
// "passport_number") and value holds four digits or more: such a fact
// holds one, or part of one, whatever its shape.
func nationalIDKey(key, value string) bool {
	words := strings.ReplaceAll(strings.ToLower(key), "_", " ")
	named := false
	for _, sc := range idSchemes {
		for _, w := range sc.words {
			if !slices.Contains(documentWords, w) && wordAt(words, w) >= 0 {
				named = true
			}
		}
	}
	return named && strings.Count(strings.Map(func(r rune) rune {
		r = asciiDigit(r)
		if r >= '0' && r <= '9' {
			return '0'
		}
		return -1
	}, value), "0") >= 4
}

// nationalIDIn reports whether s names a scheme and writes, within the
// next few words, a number that scheme issues ("my SSN is 078-05-1120",
// "CPF: 111.444.777-35"). A number of that shape under another name (an
// order number, a phone number) is not one.
func nationalIDIn(s string) bool {
	s = asciiDigits(s)
	lower := strings.ToLower(s)
	for _, sc := range idSchemes {
		for _, w := range sc.words {
			for from := 0; ; {
				i := wordAt(lower[from:], w)
				if i < 0 {
					break
				}
				end := from + i + len(w)
				for _, c := range candidatesAfter(s, end) {
					if sc.valid(c) {
						return true
					}
				}
				from = end
			}
		}
	}
	return false
}

// digitZeros are the zeros of the decimal digits users write numbers in
// besides ASCII's: Arabic-Indic, Extended Arabic-Indic (Persian, Urdu),
// Devanagari and full-width (Japanese and Chinese input).
var digitZeros = []rune{'\u0660', '\u06F0', '\u0966', '\uFF10'}

// asciiDigit returns r as an ASCII digit if it is one of digitZeros' digits,
// else r.
func asciiDigit(r rune) rune {
	for _, z := range digitZeros {
		if r >= z && r <= z+9 {
			return '0' + r - z
		}
	}
	return r
}

// asciiDigits returns s with its digits of digitZeros' scripts written in
// ASCII.
func asciiDigits(s string) string { return strings.Map(asciiDigit, s) }

// wordAt returns the index of the first w in s that stands as a word, or
// -1. In scripts written without spaces (Han, kana) any occurrence counts.
func wordAt(s, w string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return -1
		}
		i += from
		before, after := lastRune(s[:i]), firstRune(s[i+len(w):])
		if unspaced(firstRune(w)) || (!wordRune(before) && !wordRune(after)) {
			return i
		}
		from = i + len(w)
	}
}

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return ' '
}

func lastRune(s string) rune {
	r := ' '
	for _, c := range s {
		r = c
	}
	return r
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// idWindow is how far after a scheme's name, in bytes, its number is
// looked for.
const idWindow = 48

// candidatesAfter returns the written numbers that start within idWindow
// bytes after s[at]: runs of ASCII letters and digits joined by single
// dots, hyphens or slashes, or by spaces next to a digit ("078 05 1120",
// "12345678 0 ZZ0"), each also cut at every such space.
func candidatesAfter(s string, at int) []string {
	var out []string
	for i := at; i < len(s) && i < at+idWindow; i++ {
		if !asciiAlnum(s[i]) || (i > 0 && asciiAlnum(s[i-1])) {
			continue
		}
		j := i + 1
		for j < len(s) {
			if asciiAlnum(s[j]) {
				j++
				continue
			}
			if j+1 >= len(s) || !asciiAlnum(s[j+1]) {
				break
			}
			if strings.IndexByte(".-/", s[j]) >= 0 {
				j += 2
				continue
			}
			if s[j] != ' ' || !isDigit(s[j-1]) && !isDigit(s[j+1]) {
				break
			}
			out = append(out, s[i:j])
			j += 2
		}
		out = append(out, s[i:j])
	}
	return out
}

func asciiAlnum(b byte) bool {
	return isDigit(b) || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// compact returns written without separators, upper case.
func compact(written string) string {
	return strings.ToUpper(strings.Map(func(r rune) rune {
		if strings.ContainsRune(" .-/", r) {
			return -1
		}
		return r
	}, written))
}

// digitsOf returns the values of s's characters if all are digits and
// there are n of them, or nil.
func digitsOf(s string, n int) []int {
	if len(s) != n {
		return nil
	}
	d := make([]int, n)
	for i := range n {
		if !isDigit(s[i]) {
			return nil
		}
		d[i] = int(s[i] - '0')
	}
	return d
}

// weighted returns the sum of d[i]*w[i] over w.
func weighted(d, w []int) int {
	sum := 0
	for i, x := range w {
		sum += d[i] * x
	}
	return sum
}

// luhn reports whether the digits d pass the Luhn check.
func luhn(d []int) bool {
	sum := 0
	for i := range d {
		x := d[len(d)-1-i]
		if i%2 == 1 {
			if x *= 2; x > 9 {
				x -= 9
			}
		}
		sum += x
	}
	return sum%10 == 0
}

// validAnyID reports whether written is a number of a scheme that has a
// check digit, or a US social security or taxpayer number, for words that
// name no one country's ("national ID", "TIN").
func validAnyID(written string) bool {
	for _, valid := range []func(string) bool{validSSNOrITIN, validNIF, validCPF, validDNI, validNIE, validNIR, validSteuerID,
		validCodiceFiscale, validBSN, validPESEL, validPersonnummer, validTCKN, validSNILS, validMyNumber,
		validChinaID, validAadhaar, validTeudatZehut, validSaudiID, validCartaoCidadao} {
		if valid(written) {
			return true
		}
	}
	return false
}
