package memory

import (
	"math/big"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Kinds of secret [SecretKind] recognises.
const (
	SecretCardNumber = "card_number"
	SecretIBAN       = "iban"
	SecretAPIKey     = "api_key"
	SecretPrivateKey = "private_key"
	SecretPassword   = "password"
	SecretNationalID = "national_id"
)

// Shapes of well-known credentials, each anchored on word boundaries.
// Sources: the prefixes their issuers document (AWS access key IDs
// AKIA/ASIA; GitHub ghp_/gho_/ghu_/ghs_/ghr_/github_pat_; Slack xox?-;
// Stripe sk_live_/rk_live_; OpenAI and Anthropic sk-; Google API keys
// AIza; GitLab glpat-; JSON Web Tokens, three base64url parts whose
// first decodes to a JSON object, "eyJ").
//
// They are compiled on first use, not at every start of every function
// that links the core (0.38 ms of init at every start, measured with
// GODEBUG=inittrace=1 on the get-facts bootstrap).
var apiKeyShapes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
		regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b`),
		regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{40,}\b`),
		regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}\b`),
		regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b`),
		regexp.MustCompile(`\bsk-(?:[A-Za-z0-9_-]{2,20}-)?[A-Za-z0-9_-]{20,}\b`),
		regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`),
		regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}\b`),
		regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`),
	}
})

var privateKeyShape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----|\bPRIVATE KEY-----`)
})

// A run of 13 to 19 digits, possibly grouped by single spaces or hyphens,
// not inside a longer number and not after a '+' (a phone number).
var digitRun = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^0-9+])((?:[0-9][ -]?){12,18}[0-9])(?:$|[^0-9])`)
})

// An IBAN: two letters, two check digits, then 11 to 30 letters or digits,
// possibly in groups of four separated by spaces.
var ibanShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b([A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30})\b`) })

// Words that name a credential: a key made of them, or a value or quote
// where one of them is followed by "is", ":" or "=" and a word, holds a
// password whatever it looks like.
var passwordWords = []string{"password", "passwd", "passcode", "passphrase", "pin", "pin_code", "secret", "api_key",
	"apikey", "access_token", "token", "private_key", "secret_key", "security_code", "cvv", "cvc",
	"mot_de_passe", "passwort", "contraseña", "senha"}

// credentialPhrases name a credential among the words of a key, wherever
// they stand ("mot_de_passe_netflix", "chave_da_api_do_deepl"): with a
// value that looks like one ([credentialShaped]), the fact holds it.
var credentialPhrases = []string{"password", "passwd", "passcode", "passphrase", "passwort", "kennwort",
	"mot_de_passe", "contraseña", "contrasena", "senha", "api_key", "apikey", "access_token", "api_token",
	"private_key", "secret_key", "chave_da_api", "chave_de_api", "clave_de_api", "clave_api", "cle_api",
	"cle_d_api", "clé_api", "clé_d_api", "api_schlüssel", "api_schluessel"}

// credentialShaped reports whether v is one token of 4 characters or more
// that mixes letters with digits or symbols, as a password or a key does
// ("Bordeaux33!"), unlike a name ("Bitwarden") or words ("uses 1Password").
func credentialShaped(v string) bool {
	v = strings.TrimSpace(v)
	if len([]rune(v)) < 4 || strings.ContainsAny(v, " \t\n") {
		return false
	}
	return strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) })
}

var passwordContext = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:password|passwd|passcode|passphrase|pin(?: code)?|mot de passe|passwort|contraseña|senha|cvv|cvc|security code)\b\s*(?:is|was|=|:|est|ist|es|é)\s*\S+`)
})

// SecretKind returns the kind of secret found in key, value or evidence, or
// "" when none is: a payment card number (13 to 19 digits that pass the
// Luhn check and start like a card issuer's number), an IBAN (its mod-97
// check passes), a credential of a well-known shape (cloud, code-host,
// chat, payment and model-provider keys, JSON Web Tokens), a private key
// block, or a password by its context (a key that names a credential, or
// names one among its words with a value shaped like one, or "password
// is …"), or a national identity, social security, tax or passport number
// (a key that names one with four digits in a row in its value, or a
// text that names one and writes a number that scheme issues, check
// digits included: [idSchemes]). It is a rule-based filter, run before
// any write: a fact that holds a secret is never stored.
func SecretKind(key, value, evidence string) string {
	for _, w := range passwordWords {
		if key == w || strings.HasSuffix(key, "_"+w) {
			return SecretPassword
		}
	}
	for _, w := range credentialPhrases {
		if strings.Contains("_"+key+"_", "_"+w+"_") && credentialShaped(value) {
			return SecretPassword
		}
	}
	if nationalIDKey(key, value) {
		return SecretNationalID
	}
	for _, s := range []string{value, evidence} {
		if k := secretIn(s); k != "" {
			return k
		}
	}
	return ""
}

// secretIn returns the kind of the first secret shape in s, or "".
func secretIn(s string) string {
	if s == "" {
		return ""
	}
	if privateKeyShape().MatchString(s) {
		return SecretPrivateKey
	}
	for _, re := range apiKeyShapes() {
		if re.MatchString(s) {
			return SecretAPIKey
		}
	}
	for _, m := range digitRun().FindAllStringSubmatch(s, -1) {
		if cardNumber(stripSeparators(m[1])) {
			return SecretCardNumber
		}
	}
	for _, m := range ibanShape().FindAllStringSubmatch(s, -1) {
		if validIBAN(stripSeparators(m[1])) {
			return SecretIBAN
		}
	}
	if passwordContext().MatchString(s) {
		return SecretPassword
	}
	if nationalIDIn(s) {
		return SecretNationalID
	}
	return ""
}

func stripSeparators(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, s)
}

// cardNumber reports whether digits (13 to 19 of them) pass the Luhn check
// and start with a prefix that a card network issues: 4 (Visa), 51–55 and
// 2221–2720 (Mastercard), 34 and 37 (American Express), 30, 36, 38 and 39
// (Diners Club), 35 (JCB), 6011, 622, 644–649 and 65 (Discover and
// UnionPay), 62 (UnionPay), 50 and 56–69 (Maestro).
func cardNumber(digits string) bool {
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	two := int(digits[0]-'0')*10 + int(digits[1]-'0')
	four := two*100 + int(digits[2]-'0')*10 + int(digits[3]-'0')
	switch {
	case digits[0] == '4', two >= 51 && two <= 55, four >= 2221 && four <= 2720,
		two == 34, two == 37, two == 30, two == 36, two == 38, two == 39, two == 35,
		two == 50, two >= 56 && two <= 69:
	default:
		return false
	}
	sum := 0
	for i := range len(digits) {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// validIBAN reports whether s (no separators) passes the ISO 13616 check:
// moved to the end, its first four characters and letters as numbers
// (A = 10 … Z = 35), the whole is 1 modulo 97.
func validIBAN(s string) bool {
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	s = strings.ToUpper(s)
	var b strings.Builder
	for _, r := range s[4:] + s[:4] {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteString(big.NewInt(int64(r - 'A' + 10)).String())
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}
