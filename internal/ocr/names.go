package ocr

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// surnames are the family names most Vietnamese carry, as printed (upper case, with their
// diacritics): a closed class, unlike given names. Folds two of them share (LA and LÃ, ĐOÀN
// and DOÃN) are left out of surnameByFold.
var surnames = []string{
	"NGUYỄN", "TRẦN", "LÊ", "PHẠM", "HOÀNG", "HUỲNH", "PHAN", "VŨ", "VÕ", "ĐẶNG", "BÙI", "ĐỖ",
	"HỒ", "NGÔ", "DƯƠNG", "LÝ", "ĐÀO", "ĐOÀN", "DOÃN", "ĐINH", "TRƯƠNG", "LƯƠNG", "TRỊNH",
	"MAI", "CAO", "LÂM", "TÔ", "TẠ", "HÀ", "CHU", "QUÁCH", "KIỀU", "LA", "LÃ", "LƯU", "TÔN",
	"THÁI", "PHÙNG", "VƯƠNG", "TĂNG", "LỤC", "TIÊU", "DIỆP", "CÙ", "KHỔNG", "MẠC", "TRIỆU",
	"THÂN", "VI", "ÂU", "NÔNG", "LỮ", "LỘC", "ÔNG", "GIANG", "HÀN", "KHÚC", "NINH", "PHÓ",
	"QUAN", "TỐNG", "ĐÀM", "ĐỒNG", "KHƯƠNG", "LẠI", "NGHIÊM", "HỨA", "HẦU",
}

// surnameByFold maps a surname's letters without diacritics to the surname, for the folds
// only one surname has.
var surnameByFold = func() map[string]string {
	m, n := map[string]string{}, map[string]int{}
	for _, s := range surnames {
		m[token(s)] = s
		n[token(s)]++
	}
	for f, k := range n {
		if k > 1 {
			delete(m, f)
		}
	}
	return m
}()

// surnameTokens holds the surnames' letters without diacritics (token), shared folds too.
var surnameTokens = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range surnames {
		m[token(s)] = true
	}
	return m
}()

// titleWords are the letters of the words of documents' and the state's titles that a run of
// capitals beginning with a surname's letters may hold ("HỘ CHIẾU", "CHỦ NGHĨA VIỆT NAM"):
// such a run is a title, not a name.
var titleWords = []string{"HOCHIEU", "PASSPORT", "CANCUOC", "CONGDAN", "CHUNGMINH", "NHANDAN", "CHUNGHIA"}

// isTitle reports whether s holds a title's words (titleWords).
func isTitle(s string) bool {
	t := token(s)
	for _, w := range titleWords {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// inCapitals reports whether s has letters and no small letter.
func inCapitals(s string) bool {
	letters := false
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		letters = letters || unicode.IsLetter(r)
	}
	return letters
}

// fixSurname gives a full name's first word, its surname, its diacritics as the surname is
// written when OCR read them wrong ("NGUYÊN" for NGUYỄN, "TRẤN" for TRẦN, "MẠI" for MAI): a
// first word that is no surname but has the letters of exactly one. Any other name is
// returned as read.
func fixSurname(name string) string {
	words := strings.Fields(name)
	if len(words) < 2 {
		return name
	}
	for _, s := range surnames {
		if words[0] == s {
			return name
		}
	}
	if s, ok := surnameByFold[token(words[0])]; ok {
		words[0] = s
		return strings.Join(words, " ")
	}
	return name
}

// PrintedName returns the name as the page prints it, with its diacritics, given the name
// without them (a machine readable zone's, "LA DIEU LAN"): the page's phrase whose letters,
// diacritics removed, are the name's, in capitals and spaced as the given name is (a page may
// run a name's words together). false when no phrase of the page is the name; full_name is
// the field's name either way.
func PrintedName(p *Page, name string) (Field, bool) {
	want := []rune(token(name))
	if len(want) == 0 {
		return Field{}, false
	}
	ix := analyse(p.Words)
	for _, ph := range ix.phrases() {
		v := value{rows: [][]int{ph}}
		raw := v.text(ix.words)
		var letters []rune
		for _, r := range norm.NFC.String(strings.ToUpper(NormalizeVietnamese(raw))) {
			if unicode.IsLetter(r) {
				letters = append(letters, r)
			}
		}
		if len(letters) != len(want) {
			continue
		}
		same := true
		for i, r := range letters {
			same = same && token(string(r)) == string(want[i])
		}
		if !same {
			continue
		}
		var words []string
		for _, w := range strings.Fields(name) {
			n := len([]rune(token(w)))
			words = append(words, string(letters[:n]))
			letters = letters[n:]
		}
		return Field{Name: "full_name", Value: fixSurname(strings.Join(words, " ")), Raw: raw, Valid: true, Confidence: v.conf(ix.words)}, true
	}
	return Field{Name: "full_name"}, false
}

// Letters returns s's letters and digits in capitals without diacritics (Đ → D), the form
// a machine readable zone writes a name in: "Lã Diệu Lan" → "LADIEULAN".
func Letters(s string) string { return token(s) }
