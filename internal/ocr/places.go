package ocr

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// placeAbbreviations are the administrative units places are written with on Vietnamese
// documents, each printed with a dot: xã, phường, thị trấn, huyện, quận, thị xã, thành phố,
// tỉnh.
var placeAbbreviations = map[string]bool{"X": true, "P": true, "TT": true, "H": true, "Q": true, "TX": true, "TP": true, "T": true}

// fixPlace corrects what OCR adds to or drops from a place as printed: marks read before a
// word ("„Thanh", "_Nội", ".Quy") or alone are dropped (a dash between names stays), a comma
// is followed by a space ("Anh,Hà"), two capitalised syllables run together are parted
// ("BếnTre"), underscores read under a word and marks read after the place go ("Nha__",
// "Bình Dương ề TL ị"), a unit's abbreviation keeps its dot ("H Tiên Du" → "H. Tiên Du")
// and "ø", which Vietnamese does not write, is the "ơ" it was read for.
func fixPlace(s string) string {
	s = strings.NewReplacer("ø", "ơ", "Ø", "Ơ").Replace(s)
	var out []string
	for _, w := range strings.Fields(s) {
		for _, part := range splitAfterComma(w) {
			if part == "-" || part == "–" || part == "/" {
				out = append(out, part) // "Bà Rịa - Vũng Tàu"
				continue
			}
			part = strings.TrimLeftFunc(strings.ReplaceAll(part, "_", ""), func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '('
			})
			if part != "" {
				out = append(out, splitSyllables(part)...)
			}
		}
	}
	// A place ends on a name (a province's, a city's) or a number: marks read after it
	// ("Bình Dương ề TL ị", the dotted leaders' remains) go.
	for len(out) > 1 && trailingMark(out[len(out)-1], out[len(out)-2]) {
		out = out[:len(out)-1]
	}
	for i := 0; i+1 < len(out); i++ {
		r, _ := utf8.DecodeRuneInString(out[i+1])
		if placeAbbreviations[out[i]] && unicode.IsUpper(r) {
			out[i] += "."
		}
	}
	return strings.Join(out, " ")
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
