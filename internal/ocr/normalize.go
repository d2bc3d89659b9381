package ocr

import (
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
		s = strings.ToUpper(s)
		return s, s != ""
	case KindIDNumber:
		d := digitsOf(s)
		return d, len(d) == 12
	case KindLegacyIDNumber:
		d := digitsOf(s)
		return d, len(d) == 9
	case KindDate:
		return NormalizeDate(s)
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
		if strings.ReplaceAll(foldVietnamese(s), " ", "") == "VIETNAM" {
			return "VNM", true
		}
		return s, s != ""
	case KindCode:
		s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
		return s, s != ""
	}
	return s, s != ""
}

// digitsOf returns the ASCII digits of s, in order.
func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// NormalizeDate reads a date printed as DD/MM/YYYY (any separators, or none) and returns it
// as YYYY-MM-DD; ok is false, with the digits read, when they do not make a calendar date.
func NormalizeDate(s string) (string, bool) {
	d := digitsOf(s)
	if len(d) != 8 {
		return d, false
	}
	t, err := time.Parse("02012006", d)
	if err != nil {
		return d, false
	}
	return t.Format(time.DateOnly), true
}

// NormalizeLongDate reads a date written out as on the back of the 9-digit card, "Ngày 15
// tháng 03 năm 2012" (the words may be misread: only the three groups of digits count, day,
// month and year in that order), and returns it as YYYY-MM-DD; ok is false, with the
// normalised text, when the groups do not make a calendar date.
func NormalizeLongDate(s string) (string, bool) {
	groups := strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if len(groups) != 3 || len(groups[0]) > 2 || len(groups[1]) > 2 || len(groups[2]) != 4 {
		return s, false
	}
	t, err := time.Parse("2-1-2006", strings.Join(groups, "-"))
	if err != nil {
		return s, false
	}
	return t.Format(time.DateOnly), true
}
