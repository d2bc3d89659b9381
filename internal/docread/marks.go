package docread

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// markWords is the vocabulary identifying marks (Đặc điểm nhận dạng) are written in: the kind
// of mark, where it lies on the face or body and the words between. Cards write them in a
// fixed, plain phrasing ("Sẹo chấm C 2cm dưới sau mép trái", "Nốt ruồi cách 1cm trên đầu
// lông mày phải"), so a misread syllable has one word of the vocabulary it can be.
var markWords = strings.Fields(`sẹo nốt ruồi chấm bớt vết lõm rỗ cách c cm trên dưới trước sau
	giữa ngang bên trái phải và ở có mép đuôi đầu mắt mặt mày lông mũi sống cánh tai dái cằm má
	môi miệng khóe mí trán gò hàm cổ gáy tóc tay mu bàn ngón chân lưng ngực vai dài rộng nhỏ to
	hình tròn đen nâu đỏ thẳng xiên gần cạnh phía đường`)

// fixMarks corrects the misreadings of identifying marks that their small vocabulary makes
// certain: a word outside markWords becomes the vocabulary word it is when there is one
// choice, the word of the same letters nearest in its marks ("đưới" → "dưới", not "đuôi"),
// else the word of three letters or more one letter away, nearest in its marks when several
// are ("So" → "Sẹo", "rước" → "trước"); a distance in
// "em" is in "cm", a "€" is the "C" of "cách", and the word before "ruồi" is "nốt". Words with
// digits, and words with no such choice, are kept as read.
func fixMarks(s string) string {
	ws := strings.Fields(s)
	for i, w := range ws {
		if strings.HasSuffix(w, "em") && len(digitsOf(w)) == len(w)-2 && len(w) > 2 {
			ws[i] = strings.TrimSuffix(w, "em") + "cm"
			continue
		}
		if c := strings.TrimRight(w, ":;"); c == "€" || c == "©" {
			ws[i] = "C" // "cách", abbreviated
			continue
		}
		if i+1 < len(ws) && strings.ToLower(ws[i+1]) == "ruồi" && levenshtein(token(w), "NOT") <= 1 {
			// "ruồi" (a mole) only follows "nốt": "Mốt ruồi" is "Nốt ruồi", which the
			// vocabulary alone cannot tell from "mắt" or "mặt".
			ws[i] = inCaseOf("nốt", []string{w})
			continue
		}
		if v, ok := markWord(w); ok {
			ws[i] = v
		}
	}
	return strings.Join(ws, " ")
}

// markWord returns the vocabulary word a misread word w of identifying marks is, with w's
// initial capital; false when w is one already, has digits or could be none or several.
func markWord(w string) (string, bool) {
	lower := strings.ToLower(w)
	if digitsOf(w) != "" || token(w) == "" || slices.Contains(markWords, lower) {
		return "", false
	}
	var best []string
	bestD := -1
	for _, v := range markWords {
		if token(v) != token(w) {
			continue
		}
		switch d := editDistance([]rune(lower), []rune(v)); {
		case bestD < 0 || d < bestD:
			best, bestD = []string{v}, d
		case d == bestD:
			best = append(best, v)
		}
	}
	if len(best) == 0 {
		// One letter away: of several such words, the one nearest with its marks ("rước"
		// → "trước", not "ruồi").
		for _, v := range markWords {
			if t := token(v); len(t) >= 3 && levenshtein(t, token(w)) == 1 {
				switch d := editDistance([]rune(lower), []rune(v)); {
				case bestD < 0 || d < bestD:
					best, bestD = []string{v}, d
				case d == bestD:
					best = append(best, v)
				}
			}
		}
	}
	if len(best) != 1 {
		return "", false
	}
	v := best[0]
	if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
		f, n := utf8.DecodeRuneInString(v)
		v = string(unicode.ToUpper(f)) + v[n:]
	}
	return v, true
}
