package docread

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/idstream/idstream/internal/idnumber"
)

// placeAbbreviations are the administrative units places are written with on Vietnamese
// documents, each printed with a dot: xã, phường, thị trấn, huyện, quận, thị xã, thành phố,
// tỉnh.
var placeAbbreviations = map[string]bool{"X": true, "P": true, "TT": true, "H": true, "Q": true, "TX": true, "TP": true, "T": true}

// fixPlace corrects what OCR adds to or drops from a place as printed: marks read before a
// word ("„Thanh", "_Nội", ".Quy") or alone are dropped (a dash between names stays), a comma
// is followed by a space ("Anh,Hà"), two capitalised syllables run together are parted
// ("BếnTre"), underscores read under a word and marks read after the place go ("Nha__",
// "Bình Dương ề TL ị"), a unit's abbreviation keeps its dot ("H Tiên Du", "H, Tiên Du" →
// "H. Tiên Du") and "ø", which Vietnamese does not write, is the "ơ" it was read for.
func fixPlace(s string) string {
	s = strings.NewReplacer("ø", "ơ", "Ø", "Ơ").Replace(s)
	var out []string
	for _, w := range strings.Fields(s) {
		for _, part := range splitAfterComma(w) {
			if part == "-" || part == "–" || part == "/" {
				out = append(out, part) // "Bà Rịa - Vũng Tàu"
				continue
			}
			part = strings.TrimLeftFunc(strings.ReplaceAll(placeLookAlikes(part), "_", ""), func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '('
			})
			if part != "" && !strayLetter(part) {
				out = append(out, splitSyllables(part)...)
			}
		}
	}
	// A place ends on a name (a province's, a city's) or a number: marks read after it
	// ("Bình Dương ề TL ị", the dotted leaders' remains) go.
	for len(out) > 1 && trailingMark(out[len(out)-1], out[len(out)-2]) {
		out = out[:len(out)-1]
	}
	fixUnits(out)
	for i := 0; i+1 < len(out); i++ {
		r, _ := utf8.DecodeRuneInString(out[i+1])
		if abbr := strings.TrimSuffix(out[i], ","); placeAbbreviations[abbr] && unicode.IsUpper(r) {
			out[i] = abbr + "." // its dot read as a comma too ("X, Tân Thạch")
		}
	}
	return strings.Join(fixProvince(out), " ")
}

// placeLookAlikes mends a word of a place OCR read with a look-alike no address holds: a
// dagger among digits is a 1 ("22†/10", "Tổ †,"), and an 8, a 5 or a dollar sign before
// lower-case letters only is an S ("8ổ 57" and "$ố 47" for "Số", "Võ Thị 8áu" for "Sáu"; a
// house number's letter is a capital: "8A").
func placeLookAlikes(w string) string {
	core := strings.TrimRight(w, ",.")
	if strings.ContainsRune(core, '†') && strings.IndexFunc(core, func(r rune) bool { return r != '†' && r != '/' && !unicode.IsDigit(r) }) < 0 {
		return strings.ReplaceAll(w, "†", "1")
	}
	if len(core) < 2 || (core[0] != '8' && core[0] != '5' && core[0] != '$') || strings.IndexFunc(core[1:], func(r rune) bool { return !unicode.IsLower(r) }) >= 0 {
		return w
	}
	return "S" + w[1:]
}

// Units places are written with, by their letters without diacritics: the two-word ones
// wherever they stand, the one-word ones before a number (where no name can stand).
var (
	unitPairs = map[string]string{"THITRAN": "Thị trấn", "THIXA": "Thị xã", "THANHPHO": "Thành phố", "KHUPHO": "Khu phố"}
	unitWords = map[string]string{"TO": "Tổ", "PHUONG": "Phường", "QUAN": "Quận", "AP": "Ấp", "XOM": "Xóm", "KHOM": "Khóm", "SO": "Số"}
)

// fixUnits gives the units of a place's words their marks when OCR read them wrong ("Thí
// trấn" → "Thị trấn", "Tố 5" → "Tổ 5"), in the case they were read in; in place.
func fixUnits(words []string) {
	for i := 0; i+1 < len(words); i++ {
		pair := words[i : i+2]
		if u, ok := unitPairs[token(pair[0])+token(pair[1])]; ok && !strings.HasSuffix(pair[0], ",") {
			fixed := strings.Fields(inCaseOf(u, pair))
			pair[1] = fixed[1] + strings.TrimLeftFunc(pair[1], unicode.IsLetter) // its comma kept
			pair[0] = fixed[0]
			continue
		}
		r, _ := utf8.DecodeRuneInString(pair[1])
		letters := strings.IndexFunc(pair[0], func(r rune) bool { return !unicode.IsLetter(r) }) < 0
		if u, ok := unitWords[token(pair[0])]; ok && letters && unicode.IsDigit(r) {
			pair[0] = inCaseOf(u, pair[:1])
		}
	}
}

// provinceByFold maps the letters of a province's name without diacritics (token) to its
// words as written, for the 63 provinces and centrally governed cities.
var provinceByFold = func() map[string][]string {
	m := map[string][]string{}
	for _, code := range idnumber.ProvinceCodes() {
		name, _ := idnumber.ProvinceName(code)
		m[token(name)] = strings.Fields(name)
	}
	return m
}()

// maxProvinceWords is the most words a province's name has ("Bà Rịa – Vũng Tàu").
const maxProvinceWords = 5

// fixProvince gives a place's last words, its province (a Vietnamese place is written from
// the smallest unit to the province), the diacritics and spelling of the province's name when
// they have exactly its letters ("Hái Phòng", "Bắc Nính", "Huế."), in the case they were
// read in ("BÌNH ĐỊNH"). What was read after the province goes: a place ends on it. A place
// that does not end on a province's letters is returned as read.
func fixProvince(words []string) []string {
	// Up to two short marks read after the province ("Bến Tre 8") go with its fix.
	for junk := 0; junk <= 2 && junk < len(words); junk++ {
		if junk > 0 && len([]rune(words[len(words)-junk])) > 2 {
			break
		}
		if out, ok := endsOnProvince(words[:len(words)-junk]); ok {
			return commaBeforeProvince(out)
		}
	}
	// Longer text read after it, a neighbour's print or the guilloche's ("Đồng Đa, Hà Nội
	// 22X»%<<o", "Quỳnh Phụ, Thái Bình 1019 N MU VÀ MA"): the place ends on the last province
	// followed by no unit (no comma) of its own.
	for end := len(words) - 1; end >= 2; end-- {
		if strings.Contains(words[end], ",") || strings.HasSuffix(words[end-1], ",") {
			break
		}
		if out, ok := endsOnProvince(words[:end]); ok && afterUnit(out) {
			return commaBeforeProvince(out)
		}
	}
	return words
}

// provinceUnits are the letters of the words a province's name follows without a comma
// when the place names its kind ("Tỉnh Quảng Ngãi", "Thành phố Hải Phòng", "TP. Hồ Chí
// Minh", "T. Bình Dương").
var provinceUnits = map[string]bool{"TINH": true, "PHO": true, "TP": true, "T": true}

// commaBeforeProvince returns a place's words, which end on a province, with the comma that
// ends the unit before the province where OCR lost it ("Năm Căn Cà Mau" → "Năm Căn, Cà Mau":
// cards write each unit of a place apart), unless that word names the province's kind
// (provinceUnits); "Tỉnh" there gets its marks when OCR read them wrong ("Tính Cà Mau",
// "Tĩnh Cà Mau").
func commaBeforeProvince(words []string) []string {
	if n := provinceWords(words); n > 0 {
		prev := words[len(words)-n-1]
		t := token(prev)
		switch {
		case t == "TINH" && prev == strings.TrimRight(prev, ".,"):
			words[len(words)-n-1] = inCaseOf("Tỉnh", []string{prev})
		case t != "" && !provinceUnits[t] && !strings.HasSuffix(prev, ",") && !strings.HasSuffix(prev, "-"):
			words[len(words)-n-1] = strings.TrimRight(prev, ".") + ","
		}
	}
	return words
}

// afterUnit reports whether the province a place's words end on follows a comma, the end of
// the unit before it (a town named as a province, "Xã Bình Dương Tây", is no end).
func afterUnit(words []string) bool {
	n := provinceWords(words)
	return n > 0 && strings.HasSuffix(words[len(words)-n-1], ",")
}

// provinceWords returns how many of a place's last words are its province's name, the fewest
// that are one, with at least one word before them; 0 when none are.
func provinceWords(words []string) int {
	for n := 1; n <= maxProvinceWords && n < len(words); n++ {
		if _, ok := provinceByFold[token(strings.Join(words[len(words)-n:], " "))]; ok {
			return n
		}
	}
	return 0
}

// endsOnProvince is fixProvince for words that end on a province's letters, marks read
// between its words left out ("Cần mm. Tho", "Thừa Thiên. XS. Huế"); false when they do not.
func endsOnProvince(words []string) ([]string, bool) {
	upperPlace := strings.ToUpper(strings.Join(words, " ")) == strings.Join(words, " ")
	mark := func(w string) bool {
		r, _ := utf8.DecodeRuneInString(w)
		t := token(w)
		return t == "" || unicode.IsLower(r) || (!upperPlace && len(t) == 2 && strings.ToUpper(w) == w && strings.HasSuffix(w, "."))
	}
	var tail []int // the words the province may be, from the last one leftwards
	for i := len(words) - 1; i >= 0 && len(tail) < maxProvinceWords; i-- {
		if i < len(words)-1 && (mark(words[i]) || strings.HasSuffix(words[i], ",")) {
			if strings.HasSuffix(words[i], ",") {
				break // the unit before the province
			}
			continue
		}
		tail = append(tail, i)
	}
	for k := len(tail); k >= 1; k-- {
		from := tail[k-1]
		var read []string
		for j := k - 1; j >= 0; j-- {
			read = append(read, words[tail[j]])
		}
		name, ok := provinceByFold[token(strings.Join(read, " "))]
		if !ok {
			continue
		}
		upper := strings.ToUpper(strings.Join(read, " ")) == strings.Join(read, " ")
		out := append([]string(nil), words[:from]...)
		for _, w := range name {
			if w == "–" && slices.Contains(words[from:], "-") {
				w = "-" // the dash as printed
			}
			if upper {
				w = strings.ToUpper(w)
			}
			out = append(out, w)
		}
		return out, true
	}
	return nil, false
}

// province returns the province a text names, as written, in the case it was read in, and
// whether it names one: its letters without diacritics are exactly a province's.
func province(text string) (string, bool) {
	words := strings.Fields(text)
	if len(words) == 0 || len(words) > maxProvinceWords {
		return "", false
	}
	if _, ok := provinceByFold[token(text)]; !ok {
		return "", false
	}
	return strings.Join(fixProvince(words), " "), true
}

// isPlace reports whether the named field holds a place: an address, a place of birth,
// origin or residence.
func isPlace(name string) bool { return name == "address" || strings.HasPrefix(name, "place_of_") }

// CutShort reports whether f is a place or a mark read short of its end (the line that
// continues it was lost): a place ends on its province (a place named by its province alone
// is one), never on the comma before the next unit nor on another name ("…, Phước Hội, Đất"
// for "…, Đất Đỏ, Bà Rịa - Vũng Tàu"); identifying marks end on the part of the face or body
// where the mark lies, never on a word that leads to it (markLeads).
func CutShort(f Field) bool {
	if !f.Valid {
		return false
	}
	ws := strings.Fields(f.Value)
	if f.Name == "identifying_marks" {
		return len(ws) > 0 && markLeads(ws[len(ws)-1])
	}
	if !isPlace(f.Name) {
		return false
	}
	if _, whole := provinceByFold[token(f.Value)]; whole {
		return false
	}
	return strings.HasSuffix(f.Value, ",") || provinceWords(ws) == 0
}

// markLeads reports whether a word of identifying marks leads to more: a distance ("1cm",
// "C" for "cách"), a direction ("trên", "dưới", "trước", "sau", …) or a joining word.
func markLeads(w string) bool {
	w = strings.ToLower(strings.TrimRight(w, ",.;:"))
	if w == "c" || (strings.HasSuffix(w, "cm") && len(digitsOf(w)) == len(w)-2 && len(w) > 2) {
		return true
	}
	return slices.Contains([]string{"cách", "trên", "dưới", "trước", "sau", "giữa", "ngang", "bên", "ở", "và", "có", "phía", "gần", "cạnh"}, w)
}

// Continues reports whether the text longer goes on from short: it has more letters and
// begins with short's (letters without diacritics, within two of them), as a place read whole
// does from the same place read short of its last line.
func Continues(longer, short string) bool {
	l, s := token(longer), token(short)
	return len(s) > 0 && len(l) > len(s) && levenshtein(l[:len(s)], s) <= 2
}

// strayLetter reports whether a word of a place is a small letter alone ("Q. Lê Chân, ỏ Hải
// Phòng", "Tổ s Phong Điền"): a mark or a digit read as one, as a place's names begin with
// capitals and its small words ("xã", "phố") have more than one letter.
func strayLetter(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	return n == len(w) && unicode.IsLower(r)
}

// splitAfterComma splits a word at its commas, each kept with the part before it ("Anh,Hà"
// → "Anh,", "Hà").
func splitAfterComma(w string) []string {
	var parts []string
	for {
		i := strings.IndexByte(w, ',')
		if i < 0 || i == len(w)-1 {
			return append(parts, w)
		}
		parts = append(parts, w[:i+1])
		w = w[i+1:]
	}
}

// splitSyllables parts a word where a small letter is followed by a capital ("NghệAn" →
// "Nghệ", "An"): a place's syllables each begin with a capital, and abbreviations ("TP",
// "ĐKHK") are all capitals.
func splitSyllables(w string) []string {
	var parts []string
	prevLower, start := false, 0
	for i, r := range w {
		if prevLower && unicode.IsUpper(r) {
			parts = append(parts, w[start:i])
			start = i
		}
		prevLower = unicode.IsLower(r)
	}
	return append(parts, w[start:])
}

// trailingMark reports whether w, after prev, cannot end a place: it starts with a small
// letter ("ề", "ị"), or it is one or two capitals after a word in small letters ("Bình Dương
// TL"; a place in capitals, "NGHỆ AN", ends as it may).
func trailingMark(w, prev string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	if unicode.IsLower(r) {
		return true
	}
	letters := strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
	return letters && utf8.RuneCountInString(w) <= 2 && strings.ToUpper(w) == w && strings.ToUpper(prev) != prev
}
