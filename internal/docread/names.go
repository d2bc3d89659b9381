package docread

import (
	_ "embed" // namewords.txt
	"slices"
	"strconv"
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

// nameWordsText is namewords.txt: Vietnamese middle and given names with how often each is
// one, counted from an independent list of names (its header says which).
//
//go:embed namewords.txt
var nameWordsText string

// nameCount is how many names of the list hold a word as their middle name and as their
// given name.
type nameCount struct{ middle, given int }

// nameWords maps each word of namewords.txt to its counts, with VĂN and THỊ, the middle names
// of men and of women that the list of given names leaves out, counted one above its most
// common middle name.
var nameWords = func() map[string]nameCount {
	m := map[string]nameCount{}
	most := 0
	for _, line := range strings.Split(nameWordsText, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || strings.HasPrefix(line, "#") {
			continue
		}
		mid, err1 := strconv.Atoi(f[1])
		giv, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			panic("ocr: namewords.txt: bad line " + line)
		}
		m[norm.NFC.String(f[0])] = nameCount{mid, giv}
		most = max(most, mid)
	}
	for _, w := range []string{"VĂN", "THỊ"} {
		c := m[w]
		c.middle = most + 1
		m[w] = c
	}
	return m
}()

// nameWordsByFold maps a name word's letters without diacritics (token) to the words of
// nameWords that have them.
var nameWordsByFold = func() map[string][]string {
	m := map[string][]string{}
	for w := range nameWords {
		m[token(w)] = append(m[token(w)], w)
	}
	return m
}()

// toneMarks are the combining marks of Vietnamese's five marked tones (grave, acute, tilde,
// hook above, dot below), apart from the marks that make a vowel (circumflex, breve, horn).
const toneMarks = "\u0300\u0301\u0303\u0309\u0323"

// withoutTone returns w without its tone mark ("ĐÌNH" → "ĐINH", "HUYỀN" → "HUYÊN").
func withoutTone(w string) string {
	return norm.NFC.String(strings.Map(func(r rune) rune {
		if strings.ContainsRune(toneMarks, r) {
			return -1
		}
		return r
	}, norm.NFD.String(w)))
}

// rareBeside is how many times as common in its place a name with a tone mark must be than
// the same name read without one for fixName to take the read name for it with its mark lost.
const rareBeside = 8

// fixName gives a full name's surname its diacritics (fixSurname) and its other words those
// of the Vietnamese middle or given name they are (nameWords: the last word is a given name,
// those between middle names) where OCR read them wrong:
//   - a word that is no name of the list but has the letters of some becomes the one nearest
//     in its marks, of equally near ones the most common in its place ("HUYÊN" → "HUYỀN",
//     "ĐĨNH" → "ĐÌNH", "TUẦN" → "TUẤN");
//   - a word read with no tone mark that is a name of the list becomes the same word with a
//     tone mark when that is rareBeside times as common in its place ("ĐINH" as a middle name
//     → "ĐÌNH"): a tone mark is what OCR loses most often;
//   - a word that is two names of the list read without the space between them is the two
//     (gluedNames), and a first word that is no surname but a surname run together with a
//     name of the list is the two ("MAINGỌC HOA" → MAI NGỌC HOA, gluedSurname).
//
// Words not in capitals, words of no name's letters, and words with several equally good
// choices, are kept as read.
func fixName(name string) string {
	words := strings.Fields(fixSurname(name))
	if len(words) > 0 && inCapitals(words[0]) {
		if a, b, ok := gluedSurname(words[0]); ok {
			words = slices.Insert(words, 1, b)
			words[0] = a
		}
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !inCapitals(w) {
			continue
		}
		cands := nameWordsByFold[token(w)]
		if len(cands) == 0 {
			if a, b, ok := gluedNames(w); ok {
				words = slices.Insert(words, i+1, b)
				words[i] = a
				i++
			}
			continue
		}
		inPlace := func(v string) int {
			if i == len(words)-1 {
				return nameWords[v].given
			}
			return nameWords[v].middle
		}
		if _, known := nameWords[w]; known {
			if withoutTone(w) != w {
				continue
			}
			best, tie := "", false
			for _, v := range cands {
				if withoutTone(v) != w || inPlace(v) < rareBeside*max(1, inPlace(w)) {
					continue
				}
				switch {
				case best == "" || inPlace(v) > inPlace(best):
					best, tie = v, false
				case inPlace(v) == inPlace(best):
					tie = true
				}
			}
			if best != "" && !tie {
				words[i] = best
			}
			continue
		}
		best, bestD, tie := "", -1, false
		for _, v := range cands {
			d := editDistance([]rune(w), []rune(v))
			switch {
			case bestD < 0 || d < bestD || (d == bestD && inPlace(v) > inPlace(best)):
				best, bestD, tie = v, d, false
			case d == bestD && inPlace(v) == inPlace(best):
				tie = true
			}
		}
		if !tie {
			words[i] = best
		}
	}
	return strings.Join(words, " ")
}

// gluedNames returns the two names of the list (nameWords) a word is, read without the space
// between them ("NGỌCHUY" → "NGỌC", "HUY"); false when it is not two, or is two in more than
// one way.
func gluedNames(w string) (string, string, bool) {
	return gluedPair(w, func(a string) bool { _, ok := nameWords[a]; return ok })
}

// gluedPair returns the one way to cut w into a first part first accepts and a name of the
// list (nameWords); false when there is none or more than one.
func gluedPair(w string, first func(string) bool) (string, string, bool) {
	rs := []rune(w)
	var a, b string
	n := 0
	for k := 1; k < len(rs); k++ {
		if _, ok := nameWords[string(rs[k:])]; ok && first(string(rs[:k])) {
			a, b = string(rs[:k]), string(rs[k:])
			n++
		}
	}
	return a, b, n == 1
}

// gluedSurname returns the surname and the name of the list (nameWords) a first word of a
// name is, read without the space between them ("MAINGỌC" → "MAI", "NGỌC"); false when the
// word is a surname itself, or is no such pair, or is one in more than one way.
func gluedSurname(w string) (string, string, bool) {
	if slices.Contains(surnames, w) {
		return "", "", false
	}
	if _, ok := surnameByFold[token(w)]; ok {
		return "", "", false
	}
	return gluedPair(w, func(a string) bool { return slices.Contains(surnames, a) })
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
		return Field{Name: "full_name", Value: fixName(strings.Join(words, " ")), Raw: raw, Valid: true, Confidence: v.conf(ix.words)}, true
	}
	return Field{Name: "full_name"}, false
}

// Letters returns s's letters and digits in capitals without diacritics (Đ → D), the form
// a machine readable zone writes a name in: "Lã Diệu Lan" → "LADIEULAN".
func Letters(s string) string { return token(s) }
