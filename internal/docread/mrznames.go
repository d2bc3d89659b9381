package docread

import (
	"strings"

	"github.com/idstream/idstream/internal/mrz"
)

// A Vietnamese document's zone writes the holder's name in Vietnamese syllables without
// their marks (ICAO 9303 transliteration: Đ as D), and its name line is covered by no check
// digit: a glyph misread there ("TTEN" for TIEN, "NGHTA" for NGHIA, "IE" for LE) stays. A
// syllable is an initial consonant (or none) and a rhyme, both from closed sets, so a word
// of the name line that is no syllable is a misread one, and the look-alike that makes it a
// name's syllable is the word.

// syllableInitials are the initial consonants of a syllable, written without marks (Đ as
// D); "Q" stands for "QU", whose U the rhymes starting with U carry.
var syllableInitials = []string{"", "B", "C", "CH", "D", "G", "GH", "GI", "H", "K", "KH", "L", "M", "N",
	"NG", "NGH", "NH", "P", "PH", "Q", "R", "S", "T", "TH", "TR", "V", "X"}

// syllableRhymes are the rhymes of Vietnamese syllables written without marks (ă, â as A;
// ê as E; ô, ơ as O; ư as U). The ones starting with Y stand alone (with an initial, "yê" is
// written "iê").
var syllableRhymes = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range strings.Fields(`
		A AC ACH AI AM AN ANG ANH AO AP AT AU AY
		E EC ECH EM EN ENG ENH EO EP ET EU
		I IA ICH IEC IEM IEN IENG IEP IET IEU IM IN INH IP IT IU
		O OA OAC OACH OAI OAM OAN OANG OANH OAO OAP OAT OAY OC OE OEN OEO OET OI OM ON ONG OONG OP OT
		U UA UAC UACH UAI UAN UANG UANH UAT UAY UC UE UENH UI UM UN UNG UOC UOI UOM UON UONG UOP UOT
		UOU UP UT UU UY UYA UYCH UYE UYEN UYET UYNH UYT UYU
		Y YEM YEN YET YEU`) {
		m[r] = true
	}
	return m
}()

// isSyllable reports whether w (capitals, no marks) is a Vietnamese syllable.
func isSyllable(w string) bool {
	for _, in := range syllableInitials {
		rhyme, ok := strings.CutPrefix(w, in)
		if !ok || !syllableRhymes[rhyme] {
			continue
		}
		if in != "" && rhyme[0] == 'Y' && len(rhyme) > 1 {
			continue // "yê" only stands alone
		}
		if in == "Q" && rhyme[0] != 'U' {
			continue
		}
		return true
	}
	return false
}

// zoneLookAlikes are the letters of the zone's typeface (OCR-B) OCR reads for one another; an
// I may also be one stem of a U (LUU read "ILITU").
var zoneLookAlikes = map[byte]string{
	'I': "LTJU", 'L': "I", 'T': "IY", 'J': "I", 'Y': "TV", 'V': "YU", 'U': "VO", 'O': "DQU", 'D': "O",
	'Q': "O", 'E': "F", 'F': "E", 'B': "R", 'R': "BP", 'P': "R", 'C': "G", 'G': "C", 'M': "N",
	'N': "MH", 'H': "N", 'K': "X", 'X': "K",
}

// nameSyllable returns the name's syllable a misread word of the zone's name line stands for,
// when w is no syllable: the one name word (a surname or a given or middle name, nameWords)
// one look-alike letter away (zoneLookAlikes), or, when there is none, two ("DTFU" for
// DIEU), or one with a glyph read twice (one or two letters more, "IEFE" for LE: its E read
// again as "FE"); false when there is none or more than one.
func nameSyllable(w string) (string, bool) {
	if w == "" || isSyllable(w) {
		return "", false
	}
	one := lookAlikes(w)
	var two, shorter []string
	for _, c := range one {
		two = append(two, lookAlikes(c)...)
	}
	for n := 1; n <= 2; n++ {
		for i := 0; i+n <= len(w); i++ {
			c := w[:i] + w[i+n:]
			shorter = append(append(shorter, c), lookAlikes(c)...)
		}
	}
	for _, candidates := range [][]string{one, two, shorter} {
		found, n := "", 0
		for _, c := range candidates {
			if c != found && isSyllable(c) && isNameWord(c) {
				found, n = c, n+1
			}
		}
		switch {
		case n == 1:
			return found, true
		case n > 1:
			return "", false // two names as near: no telling
		}
	}
	return "", false
}

// lookAlikes returns w with one letter replaced by a look-alike (zoneLookAlikes), every way.
func lookAlikes(w string) []string {
	var out []string
	for i := range len(w) {
		for _, r := range []byte(zoneLookAlikes[w[i]]) {
			out = append(out, w[:i]+string(r)+w[i+1:])
		}
	}
	return out
}

// isNameWord reports whether w (capitals, no marks) is a surname or a given or middle name's
// word.
func isNameWord(w string) bool {
	_, given := nameWordsByFold[w]
	return surnameTokens[w] || given
}

// fixZoneNames gives a Vietnamese document's zone (issuing state VNM) the name syllables its
// name line's misread words stand for (nameSyllable) and returns it parsed again; m itself
// when there is none to fix or nothing changed.
func fixZoneNames(m *mrz.MRZ) *mrz.MRZ {
	if m == nil || m.IssuingState != "VNM" {
		return m
	}
	line, from := nameField(m)
	if line >= len(m.Lines) || from > len(m.Lines[line]) {
		return m
	}
	l := m.Lines[line]
	words := strings.Split(l[from:], "<")
	changed := false
	for i, w := range words {
		if s, ok := nameSyllable(w); ok {
			words[i], changed = s, true
		}
	}
	if !changed {
		return m
	}
	lines := append([]string(nil), m.Lines...)
	lines[line] = l[:from] + strings.Join(words, "<")
	lines[line] += strings.Repeat("<", max(0, len(l)-len(lines[line]))) // a glyph read twice dropped
	fixed, err := mrz.Parse(lines)
	if err != nil || fixed.Valid != m.Valid {
		return m
	}
	return fixed
}
