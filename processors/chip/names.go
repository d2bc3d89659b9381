package chip

import "unicode"

// vnLetters lists every Vietnamese vowel letter row: the letter without a tone mark, then
// with grave, acute, hook above, tilde and dot below, in lower and upper case.
var vnLetters = []string{
	"aàáảãạ", "ăằắẳẵặ", "âầấẩẫậ", "eèéẻẽẹ", "êềếểễệ", "iìíỉĩị",
	"oòóỏõọ", "ôồốổỗộ", "ơờớởỡợ", "uùúủũụ", "ưừứửữự", "yỳýỷỹỵ",
	"AÀÁẢÃẠ", "ĂẰẮẲẴẶ", "ÂẦẤẨẪẬ", "EÈÉẺẼẸ", "ÊỀẾỂỄỆ", "IÌÍỈĨỊ",
	"OÒÓỎÕỌ", "ÔỒỐỔỖỘ", "ƠỜỚỞỠỢ", "UÙÚỦŨỤ", "ƯỪỨỬỮỰ", "YỲÝỶỸỴ",
}

// Combining tone marks in the column order of vnLetters (U+0340 and U+0341 are the
// deprecated canonical equivalents of the grave and acute accents).
var vnToneColumn = map[rune]int{
	0x0300: 1, 0x0340: 1, 0x0301: 2, 0x0341: 2, 0x0309: 3, 0x0303: 4, 0x0323: 5,
}

// vnModified maps a vowel without tone and a combining breve (U+0306), circumflex (U+0302)
// or horn (U+031B) to the Vietnamese letter they compose.
var vnModified = map[[2]rune]rune{
	{'a', 0x0306}: 'ă', {'a', 0x0302}: 'â', {'e', 0x0302}: 'ê', {'o', 0x0302}: 'ô',
	{'o', 0x031B}: 'ơ', {'u', 0x031B}: 'ư',
	{'A', 0x0306}: 'Ă', {'A', 0x0302}: 'Â', {'E', 0x0302}: 'Ê', {'O', 0x0302}: 'Ô',
	{'O', 0x031B}: 'Ơ', {'U', 0x031B}: 'Ư',
}

// vnPosition locates a letter in vnLetters: its toneless form and its tone column.
type vnPosition struct {
	base rune
	tone int
}

var (
	vnIndex = func() map[rune]vnPosition {
		m := map[rune]vnPosition{}
		for _, row := range vnLetters {
			letters := []rune(row)
			for col, r := range letters {
				m[r] = vnPosition{base: letters[0], tone: col}
			}
		}
		return m
	}()
	vnCompose = func() map[vnPosition]rune {
		m := map[vnPosition]rune{}
		for r, p := range vnIndex {
			m[p] = r
		}
		return m
	}()
)

// composeVietnamese returns s with every Vietnamese letter written as a base letter followed
// by combining marks (decomposed, NFD-like, in any mark order) replaced by its precomposed
// letter, as the national registry requires (NFC). Text that is already precomposed, and
// combinations that are not Vietnamese letters, are returned unchanged.
func composeVietnamese(s string) string {
	rs := []rune(s)
	out := make([]rune, 0, len(rs))
	for i := 0; i < len(rs); {
		j := i + 1
		for j < len(rs) && unicode.Is(unicode.Mn, rs[j]) {
			j++
		}
		if r, ok := composeLetter(rs[i], rs[i+1:j]); ok {
			out = append(out, r)
		} else {
			out = append(out, rs[i:j]...)
		}
		i = j
	}
	return string(out)
}

// composeLetter composes base with marks into one Vietnamese letter.
func composeLetter(base rune, marks []rune) (rune, bool) {
	if len(marks) == 0 {
		return base, true
	}
	p, ok := vnIndex[base]
	if !ok {
		return 0, false
	}
	for _, m := range marks {
		if col, isTone := vnToneColumn[m]; isTone {
			if p.tone != 0 {
				return 0, false
			}
			p.tone = col
			continue
		}
		next, ok := vnModified[[2]rune{p.base, m}]
		if !ok {
			return 0, false
		}
		p.base = next
	}
	r, ok := vnCompose[p]
	return r, ok
}
