package memory

import (
	"strings"
	"time"
)

// The check of each scheme of [idSchemes]: each takes the number as
// written and reports whether the scheme issues it. Sources are listed on
// [idScheme].

// validSSN: 3-2-4 digits (hyphens or none), area not 000, 666 or 9xx,
// group not 00, serial not 0000.
func validSSN(written string) bool {
	d := ssnDigits(written)
	if d == nil {
		return false
	}
	area, group, serial := d[0]*100+d[1]*10+d[2], d[3]*10+d[4], weighted(d[5:], []int{1000, 100, 10, 1})
	return area != 0 && area != 666 && area < 900 && group != 0 && serial != 0
}

// validSSNOrITIN: a number written as a social security number may be an
// ITIN, which its holder often calls one.
func validSSNOrITIN(written string) bool { return validSSN(written) || validITIN(written) }

// validITIN: 9 digits starting with 9 whose fourth and fifth are 50-65,
// 70-88, 90-92 or 94-99.
func validITIN(written string) bool {
	d := ssnDigits(written)
	if d == nil || d[0] != 9 {
		return false
	}
	g := d[3]*10 + d[4]
	return (g >= 50 && g <= 65) || (g >= 70 && g <= 88) || (g >= 90 && g <= 92) || g >= 94
}

// ssnDigits returns the 9 digits of a number written ddddddddd or
// ddd-dd-dddd (or with spaces), or nil.
func ssnDigits(written string) []int {
	switch {
	case len(written) == 9:
		return digitsOf(written, 9)
	case len(written) == 11 && written[3] == written[6] && (written[3] == '-' || written[3] == ' '):
		return digitsOf(compact(written), 9)
	}
	return nil
}

// validNINO: two letters (not D F I Q U V first, not D F I O Q U V
// second, not BG GB KN NK NT TN ZZ), six digits, A to D.
func validNINO(written string) bool {
	s := compact(written)
	if len(s) != 9 || digitsOf(s[2:8], 6) == nil || !strings.ContainsRune("ABCD", rune(s[8])) {
		return false
	}
	prefix := s[:2]
	return strings.ContainsRune("ABCEGHJKLMNOPRSTWXYZ", rune(s[0])) && strings.ContainsRune("ABCEGHJKLMNPRSTWXYZ", rune(s[1])) &&
		!strings.Contains(" BG GB KN NK NT TN ZZ", prefix)
}

// validPassport: 6 to 10 letters and digits, at least five digits,
// written with no dot, hyphen or slash.
func validPassport(written string) bool {
	if strings.ContainsAny(written, ".-/") {
		return false
	}
	s := compact(written)
	digits := 0
	for i := range len(s) {
		if isDigit(s[i]) {
			digits++
		}
	}
	return len(s) >= 6 && len(s) <= 10 && digits >= 5
}

// validNIF (Portugal): 9 digits, the last 11 minus the weighted sum (9 to
// 2) modulo 11, or 0 where that is 10 or 11; first digit 1-3, 5, 6, 8 or 9
// (people and companies), or 45 and 7x for other taxpayers.
func validNIF(written string) bool {
	d := digitsOf(compact(written), 9)
	if d == nil || d[0] == 0 || d[0] == 4 && d[1] != 5 {
		return false
	}
	check := 11 - weighted(d, []int{9, 8, 7, 6, 5, 4, 3, 2})%11
	if check >= 10 {
		check = 0
	}
	return d[8] == check
}

// validCartaoCidadao: 8 digits, a check digit, two letters and a digit
// (the document number); from the right every second value (letters A =
// 10 … Z = 35) is doubled, less 9 above 9; the sum is 0 modulo 10.
func validCartaoCidadao(written string) bool {
	s := compact(written)
	if len(s) != 12 || digitsOf(s[:9], 9) == nil || !isDigit(s[11]) || !upper(s[9]) || !upper(s[10]) {
		return false
	}
	sum := 0
	for i := range 12 {
		v := int(s[11-i] - '0')
		if upper(s[11-i]) {
			v = int(s[11-i]-'A') + 10
		}
		if i%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

func upper(b byte) bool { return b >= 'A' && b <= 'Z' }

// validCPF: 11 digits, not all the same, two modulo 11 check digits.
func validCPF(written string) bool {
	d := digitsOf(compact(written), 11)
	if d == nil || strings.Count(compact(written), compact(written)[:1]) == 11 {
		return false
	}
	for n := 9; n <= 10; n++ {
		sum := 0
		for i := range n {
			sum += d[i] * (n + 1 - i)
		}
		if check := sum * 10 % 11 % 10; d[n] != check {
			return false
		}
	}
	return true
}

// validRG: 7 to 9 digits and a check digit or X, as the states write it
// (no national check).
func validRG(written string) bool {
	s := compact(written)
	if len(s) < 8 || len(s) > 10 {
		return false
	}
	if last := s[len(s)-1]; last == 'X' {
		s = s[:len(s)-1]
	}
	return digitsOf(s, len(s)) != nil && len(s) >= 7
}

const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// validDNI: 8 digits and the letter of their number modulo 23.
func validDNI(written string) bool {
	s := compact(written)
	if len(s) != 9 || digitsOf(s[:8], 8) == nil {
		return false
	}
	return s[8] == dniLetters[weighted(digitsOf(s[:8], 8), []int{1e7, 1e6, 1e5, 1e4, 1e3, 100, 10, 1})%23]
}

// validNIE: X, Y or Z (0, 1, 2), 7 digits, and the letter of the whole
// as a DNI's.
func validNIE(written string) bool {
	s := compact(written)
	if len(s) != 9 || !strings.ContainsRune("XYZ", rune(s[0])) {
		return false
	}
	return validDNI(string(rune('0'+strings.IndexByte("XYZ", s[0]))) + s[1:])
}

// validNIR: 13 characters (sex 1-4, 7 or 8, year, month, department, 2A
// or 2B for Corsica read as 19 and 18, commune, order) and a key of 97
// minus the number modulo 97.
func validNIR(written string) bool {
	s := compact(written)
	if len(s) != 15 || !strings.ContainsRune("123478", rune(s[0])) {
		return false
	}
	switch s[5:7] {
	case "2A":
		s = s[:5] + "19" + s[7:]
	case "2B":
		s = s[:5] + "18" + s[7:]
	}
	if digitsOf(s, 15) == nil {
		return false
	}
	n := 0
	for i := range 13 {
		n = (n*10 + int(s[i]-'0')) % 97
	}
	return int(s[13]-'0')*10+int(s[14]-'0') == 97-n
}

// validSteuerID: 11 digits, first not 0, in the first ten one digit twice
// or three times and none missing more than that allows, ISO 7064 MOD
// 11,10 check digit.
func validSteuerID(written string) bool {
	d := digitsOf(compact(written), 11)
	if d == nil || d[0] == 0 {
		return false
	}
	seen := map[int]int{}
	for _, x := range d[:10] {
		seen[x]++
	}
	if len(seen) != 8 && len(seen) != 9 {
		return false
	}
	product := 10
	for _, x := range d[:10] {
		sum := (x + product) % 10
		if sum == 0 {
			sum = 10
		}
		product = sum * 2 % 11
	}
	check := 11 - product
	if check == 10 {
		check = 0
	}
	return d[10] == check
}

const ausweisAlphabet = "0123456789CFGHJKLMNPRTVWXYZ"

// validAusweis: 9 characters of ausweisAlphabet, a letter first and at
// least four digits, and, if written, a 7-3-1 check digit (letters A = 10
// … Z = 35).
func validAusweis(written string) bool {
	s := compact(written)
	if (len(s) != 9 && len(s) != 10) || !upper(s[0]) {
		return false
	}
	digits, sum := 0, 0
	for i := range 9 {
		if strings.IndexByte(ausweisAlphabet, s[i]) < 0 {
			return false
		}
		v := int(s[i] - '0')
		if upper(s[i]) {
			v = int(s[i]-'A') + 10
		} else {
			digits++
		}
		sum += v * []int{7, 3, 1}[i%3]
	}
	return digits >= 4 && (len(s) == 9 || int(s[9]-'0') == sum%10)
}

// codiceOdd are the values of the characters in odd places (first,
// third…) of a codice fiscale, digits 0-9 then letters A-Z.
var codiceOdd = []int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23}

// validCodiceFiscale: six letters, two digits, a letter, two digits, a
// letter, three digits, a check letter (digits may be replaced by
// LMNPQRSTUV where two people share a code); the check letter is the sum
// of the odd places' codiceOdd values and the even places' values (0-9,
// A = 0 … Z = 25), modulo 26.
func validCodiceFiscale(written string) bool {
	s := compact(written)
	if len(s) != 16 {
		return false
	}
	sum := 0
	for i := range 15 {
		c := s[i]
		letterPlace := i < 6 || i == 8 || i == 11
		if letterPlace && !upper(c) || !letterPlace && !isDigit(c) && !strings.ContainsRune("LMNPQRSTUV", rune(c)) {
			return false
		}
		v := int(c - '0')
		if upper(c) {
			v = int(c - 'A')
		}
		if i%2 == 0 {
			v = codiceOdd[v]
		}
		sum += v
	}
	return s[15] == byte('A'+sum%26)
}

// validBSN: 9 digits, weights 9 to 2 and -1, the sum 0 modulo 11.
func validBSN(written string) bool {
	d := digitsOf(compact(written), 9)
	return d != nil && d[0]+d[1] > 0 && weighted(d, []int{9, 8, 7, 6, 5, 4, 3, 2, -1})%11 == 0
}

// validPESEL: 11 digits, a birth date (month plus 20 per century from
// 2000), weights 1 3 7 9, the last digit 10 minus the sum modulo 10.
func validPESEL(written string) bool {
	d := digitsOf(compact(written), 11)
	if d == nil {
		return false
	}
	month, day := (d[2]*10+d[3])%20, d[4]*10+d[5]
	if month < 1 || month > 12 || day < 1 || day > 31 {
		return false
	}
	return (10-weighted(d, []int{1, 3, 7, 9, 1, 3, 7, 9, 1, 3})%10)%10 == d[10]
}

// validPersonnummer: YYMMDD or YYYYMMDD, then 4 digits (after - or +),
// day 1-31 or 61-91 (samordningsnummer), Luhn over the last ten digits.
func validPersonnummer(written string) bool {
	s := compact(strings.ReplaceAll(written, "+", "-"))
	if len(s) == 12 {
		s = s[2:]
	}
	d := digitsOf(s, 10)
	if d == nil {
		return false
	}
	month, day := d[2]*10+d[3], (d[4]*10+d[5])%60
	return month >= 1 && month <= 12 && day >= 1 && day <= 31 && luhn(d)
}

// validTCKN: 11 digits, first not 0, the tenth (7 × odd places − even
// places) modulo 10, the eleventh the sum of the first ten modulo 10.
func validTCKN(written string) bool {
	d := digitsOf(compact(written), 11)
	if d == nil || d[0] == 0 {
		return false
	}
	odd, even := d[0]+d[2]+d[4]+d[6]+d[8], d[1]+d[3]+d[5]+d[7]
	return ((odd*7-even)%10+10)%10 == d[9] && (odd+even+d[9])%10 == d[10]
}

// validSNILS: 9 digits and a 2-digit check, the sum of the digits
// weighted 9 to 1, modulo 101, 100 read as 00.
func validSNILS(written string) bool {
	d := digitsOf(compact(written), 11)
	if d == nil {
		return false
	}
	check := weighted(d, []int{9, 8, 7, 6, 5, 4, 3, 2, 1}) % 101 % 100
	return d[9]*10+d[10] == check
}

// validMyNumber: 12 digits, the last 11 minus the weighted sum modulo 11
// (weights 6 to 2 and 7 to 2 from the left), 0 where that is 10 or 11.
func validMyNumber(written string) bool {
	d := digitsOf(compact(written), 12)
	if d == nil {
		return false
	}
	check := 11 - weighted(d, []int{6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2})%11
	if check >= 10 {
		check = 0
	}
	return d[11] == check
}

// validChinaID: 17 digits (region, birth date, order) and a check
// character, "10X98765432" at the weighted sum modulo 11.
func validChinaID(written string) bool {
	s := compact(written)
	if len(s) != 18 {
		return false
	}
	d := digitsOf(s[:17], 17)
	if d == nil {
		return false
	}
	if _, err := time.Parse("20060102", s[6:14]); err != nil {
		return false
	}
	sum := weighted(d, []int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2})
	return s[17] == "10X98765432"[sum%11]
}

// validKoreaRRN: YYMMDD, a hyphen or none, a digit 1-8, six digits.
func validKoreaRRN(written string) bool {
	s := compact(written)
	if digitsOf(s, 13) == nil || s[6] < '1' || s[6] > '8' {
		return false
	}
	_, err := time.Parse("060102", s[:6])
	return err == nil
}

// verhoeffD and verhoeffP are the Verhoeff scheme's multiplication and
// permutation tables.
var (
	verhoeffD = [10][10]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5},
		{2, 3, 4, 0, 1, 7, 8, 9, 5, 6}, {3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8},
		{5, 9, 8, 7, 6, 0, 4, 3, 2, 1}, {6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3},
		{8, 7, 6, 5, 9, 3, 2, 1, 0, 4}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}
	verhoeffP = [8][10]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4},
		{5, 8, 0, 3, 7, 9, 6, 1, 4, 2}, {8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 6, 8, 7, 0},
		{4, 2, 8, 6, 5, 7, 3, 9, 0, 1}, {2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8}}
)

// validAadhaar: 12 digits, first not 0 or 1, Verhoeff check.
func validAadhaar(written string) bool {
	d := digitsOf(compact(written), 12)
	if d == nil || d[0] < 2 {
		return false
	}
	c := 0
	for i := range d {
		c = verhoeffD[c][verhoeffP[i%8][d[len(d)-1-i]]]
	}
	return c == 0
}

// validTeudatZehut: up to 9 digits (padded with zeros on the left),
// weights 1 2 alternating, each product's digits summed, 0 modulo 10.
func validTeudatZehut(written string) bool {
	s := compact(written)
	if len(s) < 8 || len(s) > 9 {
		return false
	}
	d := digitsOf(strings.Repeat("0", 9-len(s))+s, 9)
	if d == nil {
		return false
	}
	sum := 0
	for i, x := range d {
		if x *= i%2 + 1; x > 9 {
			x -= 9
		}
		sum += x
	}
	return sum%10 == 0 && sum > 0
}

// validSaudiID: 10 digits, first 1 (citizen) or 2 (resident), Luhn.
func validSaudiID(written string) bool {
	d := digitsOf(compact(written), 10)
	return d != nil && (d[0] == 1 || d[0] == 2) && luhn(d)
}
