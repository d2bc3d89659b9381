package docgen

import (
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// checkDigit is the ICAO 9303 check digit of s: weights 7, 3, 1 repeating, digits count as
// themselves, letters A–Z as 10–35, the filler '<' as 0; the sum modulo 10.
func checkDigit(s string) byte {
	w := [3]int{7, 3, 1}
	sum := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		v := 0
		switch {
		case c >= '0' && c <= '9':
			v = int(c - '0')
		case c >= 'A' && c <= 'Z':
			v = int(c-'A') + 10
		}
		sum += v * w[i%3]
	}
	return byte('0' + sum%10)
}

// transliterate writes a Vietnamese name in the MRZ alphabet: diacritics removed, Đ as D,
// capitals, anything else that is not a letter or digit as the filler.
func transliterate(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToUpper(s)) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'Đ' || r == 'đ':
			b.WriteByte('D')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('<')
		}
	}
	return b.String()
}

// pad fills s with '<' to n characters, cutting it when longer.
func pad(s string, n int) string {
	if len(s) >= n {
		return s[:n]
	}
	return s + strings.Repeat("<", n-len(s))
}

// mrzName is the name field: SURNAME<<GIVEN<NAMES (the middle name belongs to the given
// names on Vietnamese documents).
func mrzName(p Person) string {
	given := strings.Fields(p.MiddleName + " " + p.GivenName)
	return transliterate(p.FamilyName) + "<<" + transliterate(strings.Join(given, " "))
}

func yymmdd(t time.Time) string { return t.Format("060102") }

// td1 builds the three 30-character lines of a Vietnamese citizen identity card: document
// number = the last 9 digits of the 12-digit ID, optional data = the 12-digit ID, nationality
// VNM. A card without expiry has a filler expiry date.
func td1(p Person, expiry time.Time, hasExpiry bool) []string {
	doc := p.IDNumber[3:]
	l1 := pad("IDVNM"+doc+string(checkDigit(doc))+p.IDNumber, 30)
	exp := "<<<<<<"
	if hasExpiry {
		exp = yymmdd(expiry)
	}
	dob := yymmdd(p.BirthDate)
	l2 := dob + string(checkDigit(dob)) + p.Sex + exp + string(checkDigit(exp)) + "VNM"
	l2 = pad(l2, 29)
	composite := l1[5:30] + l2[0:7] + l2[8:15] + l2[18:29]
	l2 += string(checkDigit(composite))
	l3 := pad(mrzName(p), 30)
	return []string{l1, l2, l3}
}

// td3 builds the two 44-character lines of a Vietnamese passport; the personal number is the
// 12-digit ID.
func td3(p Person, expiry time.Time) []string {
	l1 := pad("P<VNM"+mrzName(p), 44)
	num := pad(p.Passport, 9)
	dob, exp := yymmdd(p.BirthDate), yymmdd(expiry)
	pn := pad(p.IDNumber, 14)
	l2 := num + string(checkDigit(num)) + "VNM" + dob + string(checkDigit(dob)) + p.Sex +
		exp + string(checkDigit(exp)) + pn + string(checkDigit(pn))
	composite := l2[0:10] + l2[13:20] + l2[21:43]
	l2 += string(checkDigit(composite))
	return []string{l1, l2}
}
