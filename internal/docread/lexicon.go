package docread

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// ethnicities are the 54 ethnic groups of Việt Nam as the General Statistics Office lists
// them (with the spellings cards print for some: H'Mông, Ê Đê), the values of the legacy
// card's "Dân tộc".
var ethnicities = []string{
	"Kinh", "Tày", "Thái", "Mường", "Khmer", "Hoa", "Nùng", "Mông", "H'Mông", "Dao", "Gia Rai",
	"Ê Đê", "Ba Na", "Sán Chay", "Chăm", "Cơ Ho", "Xơ Đăng", "Sán Dìu", "Hrê", "Ra Glai",
	"Mnông", "Thổ", "Xtiêng", "Stiêng", "Khơ Mú", "Bru Vân Kiều", "Cơ Tu", "Giáy", "Tà Ôi",
	"Mạ", "Giẻ Triêng", "Co", "Chơ Ro", "Xinh Mun", "Hà Nhì", "Chu Ru", "Lào", "Kháng",
	"La Chí", "Phù Lá", "La Hủ", "La Ha", "Pà Thẻn", "Chứt", "Lự", "Lô Lô", "Mảng", "Cờ Lao",
	"Bố Y", "Cống", "Ngái", "Si La", "Pu Péo", "Rơ Măm", "Brâu", "Ơ Đu",
}

// religions are the values of the legacy card's "Tôn giáo": none ("Không") or a religion
// recognised in Việt Nam, as cards print them.
var religions = []string{
	"Không", "Phật giáo", "Công giáo", "Thiên Chúa giáo", "Tin lành", "Cao Đài", "Hòa Hảo",
	"Phật giáo Hòa Hảo", "Hồi giáo", "Baha'i", "Tịnh độ Cư sĩ Phật hội Việt Nam",
	"Cơ đốc Phục lâm", "Tứ Ân Hiếu Nghĩa", "Minh Sư đạo", "Minh Lý đạo", "Bửu Sơn Kỳ Hương",
	"Bà la môn", "Mặc môn",
}

// lexicons are the fields whose values are a closed class, by field name.
var lexicons = map[string]map[string]string{
	"ethnicity": byLetters(ethnicities),
	"religion":  byLetters(religions),
}

// byLetters maps each entry's letters without diacritics (token) to the entry.
func byLetters(entries []string) map[string]string {
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		m[token(e)] = e
	}
	return m
}

// maxLexiconWords is the most words a value of a lexicon is read in ("Tịnh độ Cư sĩ Phật
// hội Việt Nam", or a short one read with its syllables apart, "Khô ng").
const maxLexiconWords = 8

// fromLexicon returns the entry of lex a value read as read begins with (after up to two
// marks read before it: "c; Kinh 17/25/77 …"), spelt as the entry is, in the case the
// letters were read in ("Khô ng" → "Không", "KINH" → "KINH"); the longest such entry, and
// false when read begins with none.
func fromLexicon(read string, lex map[string]string) (string, bool) {
	words := strings.Fields(read)
	for start := 0; start < min(3, len(words)); start++ {
		for n := min(maxLexiconWords, len(words)-start); n >= 1; n-- {
			part := words[start : start+n]
			entry, ok := lex[token(strings.Join(part, " "))]
			if !ok {
				continue
			}
			return inCaseOf(entry, part), true
		}
		if len([]rune(token(words[start]))) > 2 {
			break // a word, not a mark: the value begins here and is no entry
		}
	}
	return read, false
}

// inCaseOf returns entry with each letter in the case of the letter read for it in words
// (read has entry's letters, in order, diacritics apart).
func inCaseOf(entry string, words []string) string {
	var cases []bool
	for _, r := range norm.NFC.String(strings.Join(words, "")) {
		if token(string(r)) != "" {
			cases = append(cases, unicode.IsUpper(r))
		}
	}
	var b strings.Builder
	for _, r := range entry {
		if token(string(r)) != "" && len(cases) > 0 {
			if cases[0] {
				r = unicode.ToUpper(r)
			} else {
				r = unicode.ToLower(r)
			}
			cases = cases[1:]
		}
		b.WriteRune(r)
	}
	return b.String()
}
