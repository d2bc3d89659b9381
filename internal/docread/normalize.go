package docread

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// NormalizeVietnamese returns OCR text in the form idstream compares: composed (NFC, so a
// base letter followed by combining marks becomes the precomposed letter), look-alike letters
// replaced by the Vietnamese ones (Ð U+00D0 → Đ, ð → đ), stray separators trimmed from both
// ends and runs of white space collapsed to one space.
func NormalizeVietnamese(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case 'Ð':
			return 'Đ'
		case 'ð':
			return 'đ'
		case '‘', '’', '`':
			return '\''
		case '|':
			return -1
		}
		return r
	}, s)
	s = norm.NFC.String(s)
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(":;|_~-—.", r)
	})
}

// foldVietnamese returns s upper-cased with diacritics removed (Đ → D), for matching words.
func foldVietnamese(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToUpper(s)) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'Đ':
			b.WriteRune('D')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// normalizeField returns the value of a field of kind k read as raw, and whether it passes
// the kind's validation.
func normalizeField(k FieldKind, raw string) (string, bool) {
	s := NormalizeVietnamese(raw)
	switch k {
	case KindUpperText:
		// A word without a letter or a digit is a mark read beside the text ("ĐINH THU
		// THẢO ˆ", "HỒNG ' VÂN"). A name, an authority has two words at least, or one run
		// together from several (glued); a lone word is a mark or a label's remains ("'<Z'").
		words := strings.Fields(strings.ToUpper(s))
		words = slices.DeleteFunc(words, func(w string) bool { return token(w) == "" })
		s = strings.Join(words, " ")
		return s, len(words) >= 2 || glued(s)
	case KindIDNumber:
		d := digitsOf(zeroes.Replace(s))
		return d, len(d) == 12
	case KindLegacyIDNumber:
		d := digitsOf(zeroes.Replace(s))
		return d, len(d) == 9
	case KindDate:
		return NormalizeDate(zeroes.Replace(s))
	case KindLongDate:
		return NormalizeLongDate(s)
	case KindSex:
		switch f := strings.ReplaceAll(foldVietnamese(s), " ", ""); {
		case f == "NAM" || f == "M" || strings.HasPrefix(f, "NAM"):
			return "M", true
		case f == "NU" || f == "F" || strings.HasPrefix(f, "NU"):
			return "F", true
		}
		return s, false
	case KindNationality:
		// "Việt Nam", "VIỆT NAM", "VIỆT NAM/VIETNAMESE" (a passport), even with a stray
		// character read from a separator ("H: VIỆT NAM").
		if f := strings.ReplaceAll(foldVietnamese(s), " ", ""); f == "VIETNAM" || strings.Contains(f, "VIETNAM") || f == "VNM" {
			return "VNM", true
		}
		// The documents read here are Vietnamese, so a nationality is Việt Nam; another
		// counts only as an ISO 3166 alpha-3 code. A mark read beside the label ("j") or the
		// English label misread ("Natapahoy") is no nationality, and the value below the
		// label is tried.
		code := len(s) == 3
		for _, r := range s {
			code = code && r >= 'A' && r <= 'Z'
		}
		return s, code
	case KindCode:
		s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
		return s, s != ""
	case KindModel:
		s = strings.ToUpper(s)
		return s, s != ""
	case KindPassportNumber:
		return passportNumber(strings.ToUpper(strings.ReplaceAll(s, " ", "")))
	}
	return s, s != ""
}

// passportNumber fixes a Vietnamese passport number to its form, one letter and seven digits,
// through the look-alike confusions; valid only when it then has that form.
func passportNumber(s string) (string, bool) {
	if len(s) != 8 {
		return s, false
	}
	b := []byte(s)
	if l, ok := toLetter[b[0]]; ok {
		b[0] = l
	}
	for i := 1; i < len(b); i++ {
		if d, ok := toDigit[b[i]]; ok {
			b[i] = d
		}
	}
	ok := b[0] >= 'A' && b[0] <= 'Z' && len(digitsOf(string(b[1:]))) == 7
	return string(b), ok
}

// separatedDate is a day, a month and a year with their separators, spaces allowed around
// them.
var separatedDate = regexp.MustCompile(`(?:^|[^0-9])(\d{2})\s*[-/.]\s*(\d{2})\s*[-/.]\s*(\d{4})(?:[^0-9]|$)`)

// zeroes maps the letters OCR reads for a zero in a number or a date to the digit.
var zeroes = strings.NewReplacer("Ø", "0", "ø", "0", "O", "0", "o", "0")

// digitsOf returns the ASCII digits of s, in order.
func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// Years a date on a living person's document can name (a birth, an issue, an expiry): a
// year outside them is a digit misread ("1872" for 1972), and the date is read again.
const (
	minDocumentYear = 1900
	maxDocumentYear = 2099
)

// documentYear reports whether t's year is one a document's date can name.
func documentYear(t time.Time) bool {
	return t.Year() >= minDocumentYear && t.Year() <= maxDocumentYear
}

// NormalizeDate reads a date printed as DD/MM/YYYY (any separators, or none) and returns it
// as YYYY-MM-DD; ok is false, with the digits read, when they do not make a calendar date
// of a year from minDocumentYear to maxDocumentYear. Digits read beyond the date ("22-05-
// 1964 <7", a mark after it) are left out when the date stands on its own with its
// separators.
func NormalizeDate(s string) (string, bool) {
	d := digitsOf(s)
	if m := separatedDate.FindStringSubmatch(s); len(d) != 8 && m != nil {
		d = m[1] + m[2] + m[3]
	}
	if len(d) != 8 {
		return d, false
	}
	t, err := time.Parse("02012006", d)
	if err != nil || !documentYear(t) {
		return d, false
	}
	return t.Format(time.DateOnly), true
}

// NormalizeLongDate reads a date written out as on the back of the 9-digit card, "Ngày 15
// tháng 03 năm 2012" (the words may be misread: only the three groups of digits count, day,
// month and year in that order), and returns it as YYYY-MM-DD; ok is false, with the
// normalised text, when the groups do not make a calendar date of a year from
// minDocumentYear to maxDocumentYear.
func NormalizeLongDate(s string) (string, bool) {
	groups := strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if len(groups) != 3 || len(groups[0]) > 2 || len(groups[1]) > 2 || len(groups[2]) != 4 {
		return s, false
	}
	t, err := time.Parse("2-1-2006", strings.Join(groups, "-"))
	if err != nil || !documentYear(t) {
		return s, false
	}
	return t.Format(time.DateOnly), true
}
