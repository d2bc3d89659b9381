package docread

import (
	"fmt"
	"image"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/otiai10/gosseract/v2"
)

// FieldSpec is a field a document prints behind a label: its canonical name and kind, and
// whether its value may wrap onto following lines (places, addresses).
type FieldSpec struct {
	Name      string
	Kind      FieldKind
	Multiline bool
}

// labelTexts are the printed labels of every field of the Vietnamese documents idstream
// reads (both sides of the 9-digit, 12-digit and chip ID cards and of the 2024 identity card,
// the passport data page and the vehicle registration), Vietnamese and English, folded
// (upper case, no diacritics, letters and digits only). A label of another document or a
// caption with no field ("" names) still stops a value that runs into it. A long label
// whose first word is small print OCR loses ("Nơi" read "ẢW§", "INGf" before "đăng ký khai
// sinh" on the 2024 card's back) is also matched without it.
var labelTexts = map[string][]string{
	"id_number": {"SO", "NO", "SONO", "SODINHDANHCANHAN", "PERSONALIDENTIFICATIONNUMBER", "PERSONALIDNO",
		"PERSONALNO", "SOGCMND", "SOCMND", "IDCARDNO", "SOCCCD", "SOGCMNDIDCARDNO"},
	"full_name": {"HOVATEN", "FULLNAME", "HOCHUDEMVATEN", "HOCHUDEMVATENKHAISINH", "HOTEN", "SURNAMEANDGIVENNAMES",
		"SURNAMEMIDDLENAMEANDGIVENNAME", "SURNAMEMIDDLEANDGIVENNAMES", "SURNAMEMIDDLEANDGIVENNAME", "NAME"},
	"date_of_birth":      {"NGAYSINH", "NGAYTHANGNAMSINH", "DATEOFBIRTH", "SINHNGAY"},
	"sex":                {"GIOITINH", "SEX"},
	"nationality":        {"QUOCTICH", "NATIONALITY"},
	"place_of_origin":    {"QUEQUAN", "PLACEOFORIGIN", "NGUYENQUAN"},
	"place_of_residence": {"NOITHUONGTRU", "PLACEOFRESIDENCE", "NOICUTRU", "CUTRU", "NOIDKHKTHUONGTRU", "NOIDANGKYHOKHAUTHUONGTRU"},
	"place_of_birth":     {"NOISINH", "PLACEOFBIRTH", "NOIDANGKYKHAISINH", "DANGKYKHAISINH", "PLACEOFBIRTHREGISTRATION"},
	"expiry_date":        {"COGIATRIDEN", "DATEOFEXPIRY", "NGAYTHANGNAMHETHAN", "NGAYHETHAN", "EXPIRYDATE"},
	"issue_date":         {"NGAYTHANGNAM", "DATEMONTHYEAR", "NGAYCAP", "DATEOFISSUE", "NGAYTHANGNAMCAP"},
	"identifying_marks":  {"DACDIEMNHANDANG", "PERSONALIDENTIFICATION", "DAUVETRIENGVADIHINH", "DAUVETRIENG"},
	"ethnicity":          {"DANTOC", "ETHNICITY"},
	"religion":           {"TONGIAO", "RELIGION"},
	"passport_number":    {"SOHOCHIEU", "PASSPORTNO", "PASSPORTNUMBER"},
	"owner":              {"TENCHUXE", "OWNERSFULLNAME", "CHUXE", "OWNER"},
	"address":            {"DIACHI", "ADDRESS"},
	"brand":              {"NHANHIEU", "BRAND"},
	"model":              {"SOLOAI", "MODELCODE", "MODEL"},
	"engine_number":      {"SOMAY", "ENGINENO", "ENGINENUMBER"},
	"color":              {"MAUSON", "COLOR", "COLOUR"},
	"chassis_number":     {"SOKHUNG", "CHASSISNO", "CHASSISNUMBER"},
	"registration_date":  {"DANGKYLANDAU", "FIRSTREGISTRATION", "NGAYDANGKY"},
	"plate":              {"BIENSODANGKY", "NUMBERPLATE", "BIENSO"},
	"issuing_authority":  {"GIAMDOC", "CUCTRUONGCUCCANHSAT"},
	"": {"LOAI", "TYPE", "MASO", "CODE", "MAQUOCGIA", "COUNTRYCODE", "NGONTROTRAI", "NGONTROPHAI",
		"LEFTINDEXFINGER", "RIGHTINDEXFINGER", "NOICAP", "PLACEOFISSUE", "AUTHORITY", "COQUANCAP"},
}

// labelVariant is one label text of a field.
type labelVariant struct {
	field string
	text  string
}

var allLabels = func() []labelVariant {
	var out []labelVariant
	for f, ts := range labelTexts {
		for _, t := range ts {
			out = append(out, labelVariant{f, t})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].text) != len(out[j].text) {
			return len(out[i].text) > len(out[j].text)
		}
		if out[i].field != out[j].field {
			return out[i].field < out[j].field
		}
		return out[i].text < out[j].text
	})
	return out
}()

// labelEdits is the number of OCR edits a label of n letters tolerates.
func labelEdits(n int) int {
	switch {
	case n <= 4:
		return 0
	case n <= 7:
		return 1
	case n <= 12:
		return 2
	}
	return 3
}

// token folds a word for label matching: upper case, no diacritics, letters and digits only.
func token(s string) string {
	return strings.Map(func(r rune) rune {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return -1
	}, foldVietnamese(strings.ReplaceAll(s, "Ð", "Đ")))
}

// labelMatch is a label found on the page: the field, the words it spans (indices into the
// row), its length and edits.
type labelMatch struct {
	field      string
	row        int
	from, to   int // word positions in the row, inclusive
	length     int
	edits      int
	box        image.Rectangle
	short      bool
	digitsNext bool
}

// layoutIndex is the page analysed for labels.
type layoutIndex struct {
	words  []Word
	tokens []string
	rows   [][]int // word indices per visual row, left to right
	rowOf  []int   // row of each word
	posOf  []int   // position of each word in its row
	label  []int   // index into groups of the label a word belongs to, -1 when none
	groups []labelGroup
}

// labelGroup is a field's label as printed: one or more matches on the same row (the
// Vietnamese label and its English subtitle) or stacked on consecutive rows.
type labelGroup struct {
	field   string
	matches []labelMatch
	box     image.Rectangle
}

// hasLabel reports whether the label of the named field was found on the page.
func (ix *layoutIndex) hasLabel(field string) bool {
	for _, g := range ix.groups {
		if g.field == field {
			return true
		}
	}
	return false
}

// analyse finds the labels of the page.
func analyse(ws []Word) *layoutIndex {
	ix := &layoutIndex{words: ws, tokens: make([]string, len(ws)), rowOf: make([]int, len(ws)), posOf: make([]int, len(ws)), label: make([]int, len(ws))}
	all := make([]int, len(ws))
	for i := range ws {
		ix.tokens[i] = token(ws[i].Text)
		all[i] = i
		ix.label[i] = -1
	}
	ix.rows = rows(ws, all)
	for r, row := range ix.rows {
		for p, i := range row {
			ix.rowOf[i], ix.posOf[i] = r, p
		}
	}
	var matches []labelMatch
	for r, row := range ix.rows {
		for p := range row {
			if ix.tokens[row[p]] == "" {
				continue
			}
			for _, lv := range allLabels {
				if m, ok := ix.matchAt(r, p, lv); ok {
					matches = append(matches, m)
				}
			}
		}
	}
	// Longest labels first, fewest edits, then top to bottom.
	sort.SliceStable(matches, func(i, j int) bool {
		a, b := matches[i], matches[j]
		if a.length-2*a.edits != b.length-2*b.edits {
			return a.length-2*a.edits > b.length-2*b.edits
		}
		return a.box.Min.Y < b.box.Min.Y
	})
	used := make([]bool, len(ws))
	var accepted []labelMatch
	for _, m := range matches {
		row := ix.rows[m.row]
		free := true
		for p := m.from; p <= m.to; p++ {
			if used[row[p]] {
				free = false
			}
		}
		if !free || (m.short && !m.digitsNext && needsDigits(m.field)) {
			continue
		}
		for p := m.from; p <= m.to; p++ {
			used[row[p]] = true
		}
		accepted = append(accepted, m)
	}
	ix.group(accepted)
	return ix
}

// needsDigits reports whether a field's value is a long number, so that a short label of it
// ("Số", "No") counts only before one (not "Số 12 Lê Lợi" in an address).
func needsDigits(field string) bool {
	switch field {
	case "id_number", "passport_number":
		return true
	}
	return false
}

// matchAt matches label variant lv at word position p of row r, over as many words as fit.
func (ix *layoutIndex) matchAt(r, p int, lv labelVariant) (labelMatch, bool) {
	row := ix.rows[r]
	first := ix.tokens[row[p]]
	pat := lv.text
	if first[0] != pat[0] && (len(first) < 2 || len(pat) < 2 || first[1] != pat[1]) {
		return labelMatch{}, false
	}
	k := labelEdits(len(pat))
	best := labelMatch{edits: k + 1}
	var text string
	h := ix.words[row[p]].Box.Dy()
	prev := ix.words[row[p]].Box
	for q := p; q < len(row) && q < p+8; q++ {
		w := ix.words[row[q]]
		if q > p {
			if w.Box.Max.X <= prev.Max.X {
				// A word read inside the one before it ("Đặc điểm Đề nhân dạng", the mark
				// over "điểm" read again as a word of its own) is no part of the label.
				continue
			}
			if first := ix.words[row[p]].Box; 2*w.Box.Dy() < h && 2*w.Box.Max.Y < first.Min.Y+first.Max.Y {
				// Nor is a sliver above the label's middle, less than half its height
				// ("Đặc X5 điểm nhân dạng", the marks over "Đặc điểm" read as a word 7 pixels
				// high; a short word on the line, "xe" after "Tên chủ", is part of it).
				continue
			}
			if w.Box.Min.X-prev.Max.X > 2*max(h, w.Box.Dy()) {
				break // a gap: the next word is not part of the label
			}
			prev = w.Box
		}
		t := ix.tokens[row[q]]
		if t == "" {
			continue
		}
		text += t
		if len(text) > len(pat)+k {
			break
		}
		if len(text) < len(pat)-k {
			continue
		}
		// Edits are mostly misread letters: a label only one letter longer or shorter (a
		// title "HỘ CHIẾU" is not the label "Số hộ chiếu").
		if abs(len(text)-len(pat)) > max(1, k/2) {
			continue
		}
		if d := levenshtein(text, pat); d <= k && d < best.edits {
			best = labelMatch{field: lv.field, row: r, from: p, to: q, length: len(pat), edits: d, short: len(pat) <= 3}
		}
	}
	if best.edits > k {
		return labelMatch{}, false
	}
	if best.edits > 0 && ix.capitals(row[best.from:best.to+1]) {
		// A misread label is not a run of capitals with diacritics of its own: cards print
		// their labels in sentence case and the holder's name in capitals, and the most
		// common names, "NGUYỄN VĂN …", are two edits from the label "Nguyên quán".
		return labelMatch{}, false
	}
	if best.edits > 0 && p > 0 {
		// A misread label does not continue running text: "Số 188 Nguyễn Văn Cừ" holds
		// "Nguyễn Văn", two edits from the label "Nguyên quán".
		prev, cur := ix.words[row[p-1]], ix.words[row[p]]
		if ix.tokens[row[p-1]] != "" && cur.Box.Min.X-prev.Box.Max.X < 3*max(prev.Box.Dy(), cur.Box.Dy())/2 {
			return labelMatch{}, false
		}
	}
	for q := best.from; q <= best.to; q++ {
		best.box = best.box.Union(ix.words[row[q]].Box)
	}
	for q := best.to + 1; q < len(row); q++ {
		t := ix.tokens[row[q]]
		if t == "" {
			continue
		}
		best.digitsNext = len(digitsOf(t)) >= 6
		break
	}
	return best, true
}

// capitals reports whether the words at idx are all capitals and at least one carries a
// Vietnamese diacritic (a name in capitals: NGUYỄN VĂN), not a label in capitals whose
// OCR lost its marks.
func (ix *layoutIndex) capitals(idx []int) bool {
	marked := false
	for _, i := range idx {
		for _, r := range ix.words[i].Text {
			if unicode.IsLower(r) {
				return false
			}
			if r > 0x7f && unicode.IsLetter(r) {
				marked = true
			}
		}
	}
	return marked
}

// group merges the accepted matches of one field that belong to one printed label: on the
// same row with only separators between (the words between then belong to the label), or
// the English subtitle on the row just below.
func (ix *layoutIndex) group(ms []labelMatch) {
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].row != ms[j].row {
			return ms[i].row < ms[j].row
		}
		return ms[i].from < ms[j].from
	})
	for _, m := range ms {
		joined := false
		for gi := range ix.groups {
			g := &ix.groups[gi]
			if g.field != m.field {
				continue
			}
			last := g.matches[len(g.matches)-1]
			h := max(last.box.Dy(), m.box.Dy())
			sameRow := last.row == m.row && ix.onlySeparators(m.row, last.to+1, m.from-1) && m.box.Min.X-last.box.Max.X < 4*h
			below := m.row > last.row && m.box.Min.Y-g.box.Max.Y < h && abs(m.box.Min.X-g.box.Min.X) < 3*h
			if sameRow || below {
				g.matches = append(g.matches, m)
				g.box = g.box.Union(m.box)
				joined = true
				ix.markLabel(m, gi)
				if sameRow {
					for p := last.to + 1; p < m.from; p++ {
						ix.label[ix.rows[m.row][p]] = gi
					}
				}
				break
			}
		}
		if !joined {
			ix.groups = append(ix.groups, labelGroup{field: m.field, matches: []labelMatch{m}, box: m.box})
			ix.markLabel(m, len(ix.groups)-1)
		}
	}
	for gi := range ix.groups {
		g := &ix.groups[gi]
		last := &g.matches[len(g.matches)-1]
		if end := ix.subtitleEnd(*last); end > last.to {
			row := ix.rows[last.row]
			for p := last.to + 1; p <= end; p++ {
				ix.label[row[p]] = gi
				last.box = last.box.Union(ix.words[row[p]].Box)
			}
			last.to = end
			g.box = g.box.Union(last.box)
		}
	}
}

// subtitleEnd returns the position in its row of the last word of the subtitle that follows
// the label match m, misread beyond labelEdits ("Họ và tên / Eull naeae", "Nơi sinh /
// PIace f bítth."): after a slash (a label word ending in one, or separators and single
// glyphs a slash is read as, "ý"), within a short gap, the words whose letters are nearest,
// within half its length in edits, to one of the field's label texts of six letters or more;
// m.to when there is none, or when the label ends in a colon. The words after it are the
// value.
func (ix *layoutIndex) subtitleEnd(m labelMatch) int {
	row := ix.rows[m.row]
	h := m.box.Dy()
	last := ix.words[row[m.to]].Text
	if strings.HasSuffix(last, ":") {
		return m.to // a colon ends a label
	}
	// A word of the subtitle may have matched a label of the same field on its own ("name").
	free := func(q int) bool { l := ix.label[row[q]]; return l < 0 || ix.groups[l].field == m.field }
	p := m.to + 1
	for p < len(row) && free(p) && len(ix.tokens[row[p]]) <= 1 {
		p++
	}
	if p == m.to+1 && !strings.HasSuffix(last, "/") {
		return m.to // no slash before a subtitle
	}
	if p >= len(row) || !free(p) || ix.words[row[p]].Box.Min.X-m.box.Max.X > 4*h {
		return m.to
	}
	end, bestD := m.to, -1
	text := ""
	for q := p; q < len(row) && q < p+4 && free(q); q++ {
		if q > p && ix.words[row[q]].Box.Min.X-ix.words[row[q-1]].Box.Max.X > 2*h {
			break
		}
		text += ix.tokens[row[q]]
		for _, pat := range labelTexts[m.field] {
			if len(pat) < 6 || abs(len(text)-len(pat)) > 3 {
				continue
			}
			if d := levenshtein(text, pat); 2*d <= len(pat) && (bestD < 0 || d < bestD) {
				end, bestD = q, d
			}
		}
	}
	return end
}

func (ix *layoutIndex) markLabel(m labelMatch, gi int) {
	row := ix.rows[m.row]
	for p := m.from; p <= m.to; p++ {
		ix.label[row[p]] = gi
	}
}

// onlySeparators reports whether the words at positions from..to of row r carry no letters or
// digits, or are one glyph a slash is read as ("Nơi cư trú / Place of residence" read with
// a "7" between the two labels, which was then taken for the value).
func (ix *layoutIndex) onlySeparators(r, from, to int) bool {
	for p := from; p <= to; p++ {
		if t := ix.tokens[ix.rows[r][p]]; t != "" && (len(t) != 1 || !strings.Contains("71IL", t)) {
			return false
		}
	}
	return true
}

// value is a value found for a label: its words (indices) in reading order, row by row.
type value struct {
	rows [][]int
}

func (v value) text(ws []Word) string {
	var parts []string
	for _, r := range v.rows {
		for _, i := range r {
			parts = append(parts, ws[i].Text)
		}
	}
	return strings.Join(parts, " ")
}

func (v value) box(ws []Word) image.Rectangle {
	var b image.Rectangle
	for _, r := range v.rows {
		for _, i := range r {
			b = b.Union(ws[i].Box)
		}
	}
	return b
}

func (v value) conf(ws []Word) Confidence {
	var sum Confidence
	n := 0
	for _, r := range v.rows {
		for _, i := range r {
			sum += ws[i].Conf
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / Confidence(n)
}

// valueOf finds the value of label group g: the words right of the label on its row (up to
// the next label), else the words on the first row below the label, starting under it;
// multiline values continue on the rows below while those start under the value and no
// label comes first.
func (ix *layoutIndex) valueOf(gi int, multiline, below bool) value {
	g := ix.groups[gi]
	var v value
	for _, m := range g.matches {
		if below {
			break
		}
		chain := ix.chainRight(m.row, m.to+1, true)
		if len(chain) > 0 && ix.words[chain[0]].Box.Min.X-m.box.Max.X > 12*m.box.Dy() {
			chain = nil // far right of the label: another column's text
		}
		// Words up to one ending in a colon are the rest of the label, misread ("Họ và
		// tên/Eull narae:" for "Full name:", "Đlace ofresidence:", "FuÍ| riarrse;"): labels
		// end in one, values do not. A label matched up to its colon has no rest: a mark
		// read as "€:" in the value ("Mốt ruồi €: 3cm") is the value's.
		if !endsLabel(ix.words[ix.rows[m.row][m.to]].Text) {
			for k := range min(len(chain), 4) {
				if endsLabel(ix.words[chain[k]].Text) {
					chain = chain[k+1:]
					break
				}
			}
		}
		chain = ix.skipLabelRest(g.field, chain)
		if len(chain) > 0 {
			v.rows = append(v.rows, chain)
			break
		}
	}
	if len(v.rows) == 0 {
		first := ix.below(g.box, g.box.Min.X, g.box.Dy())
		if len(first) == 0 {
			return v
		}
		v.rows = append(v.rows, first)
	}
	if !multiline {
		return v
	}
	h := g.box.Dy()
	start := ix.words[v.rows[0][0]].Box.Min.X
	for len(v.rows) < 4 {
		// The row below is looked for under the value's start, where it begins, not under
		// the whole last row: on a page rectified a few degrees off, a long row slants down
		// past the start of the next label's row.
		var last image.Rectangle
		for _, i := range v.rows[len(v.rows)-1] {
			if b := ix.words[i].Box; b.Min.X < start+8*h {
				last = last.Union(b)
			}
		}
		next := ix.belowWithin(last, g.box.Min.X-2*h, start+2*h, last.Dy(), h, g.box.Min.X-2*h)
		if len(next) == 0 || ix.misreadLabel(next) || ix.labelAfter(next) {
			break
		}
		v.rows = append(v.rows, next)
	}
	return v
}

// skipLabelRest drops from the start of chain the rest of field's label that no label text
// matched (its English half, misread): words that spell the start of one of the field's
// label texts, five letters or more ("Place of" of "Place of birth"), perhaps after a stray
// mark, and after them a word mostly of marks whose letters all come, in order, from the
// text's unread end ("‹-...h." for "birth"; a unit's "H." stays). The chain comes back as it
// was when it starts otherwise.
func (ix *layoutIndex) skipLabelRest(field string, chain []int) []int {
	for start := 0; start < min(2, len(chain)); start++ {
		if start == 1 && len(ix.tokens[chain[0]]) > 1 {
			break // only a stray mark before the label's words
		}
		for _, text := range labelTexts[field] {
			prefix, n := "", 0
			for k := start; k < len(chain) && k < start+4; k++ {
				next := prefix + ix.tokens[chain[k]]
				if next == prefix || !strings.HasPrefix(text, next) {
					break
				}
				prefix = next
				if len(prefix) >= 5 {
					n = k + 1
				}
			}
			if n == 0 || len(prefix) < 5 {
				continue
			}
			rest := chain[n:]
			if missing := text[len(prefix):]; len(rest) > 0 && missing != "" && subsequence(ix.tokens[rest[0]], missing) &&
				2*len(ix.tokens[rest[0]]) < utf8.RuneCountInString(ix.words[rest[0]].Text) {
				rest = rest[1:]
			}
			return rest
		}
	}
	return chain
}

// subsequence reports whether the letters of s all come, in order, in t (s not empty).
func subsequence(s, t string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(t) && s != ""; i++ {
		if t[i] == s[0] {
			s = s[1:]
		}
	}
	return s == ""
}

// endsLabel reports whether a word ends a printed label: in a colon, or in a semicolon, which
// OCR reads a colon as.
func endsLabel(word string) bool {
	return strings.HasSuffix(word, ":") || strings.HasSuffix(word, ";")
}

// misreadLabel reports whether the chain of words starts with a label no label text matched:
// one of its first five words ends one (endsLabel). A place wrapped onto a second row never
// holds such a word, so a row that does is the next field's ("Wøí thướng tr//Plac øf
// esider‹e: Tố 14, …" under a place of origin).
func (ix *layoutIndex) misreadLabel(chain []int) bool {
	for _, i := range chain[:min(len(chain), 5)] {
		if endsLabel(ix.words[i].Text) {
			return true
		}
	}
	return false
}

// labelAfter reports whether a label follows the chain of words closely on its row (within
// the gap chainRight bridges; a label further right is another column's): the chain is a
// label's first word, misread ("INGf đăng ký khai sinh", the label matched without "Nơi"),
// not a value's next line.
func (ix *layoutIndex) labelAfter(chain []int) bool {
	last := chain[len(chain)-1]
	row := ix.rows[ix.rowOf[last]]
	p := ix.posOf[last] + 1
	if p >= len(row) || ix.label[row[p]] < 0 {
		return false
	}
	prev, next := ix.words[last].Box, ix.words[row[p]].Box
	return next.Min.X-prev.Max.X <= 3*max(prev.Dy(), next.Dy())
}

// chainRight returns the words of row r from position p rightwards: leading separators
// skipped, up to the first label word or a wide gap.
func (ix *layoutIndex) chainRight(r, p int, skipSeparators bool) []int {
	row := ix.rows[r]
	var out []int
	for q := p; q < len(row); q++ {
		i := row[q]
		if ix.label[i] >= 0 {
			break
		}
		if len(out) == 0 && skipSeparators && ix.tokens[i] == "" {
			continue
		}
		if len(out) > 0 {
			prev := ix.words[out[len(out)-1]].Box
			h := max(prev.Dy(), ix.words[i].Box.Dy())
			if ix.words[i].Box.Min.X-prev.Max.X > 3*h {
				break
			}
		}
		out = append(out, i)
	}
	// Drop trailing separators.
	for len(out) > 0 && ix.tokens[out[len(out)-1]] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// below returns the value chain on the first row below box (within 2.5 label heights h)
// that has a word starting under it (from x − 1.5 h rightwards); nothing when that first word
// is a label. A value wider than its label, centred under it, may start further left.
func (ix *layoutIndex) below(box image.Rectangle, x, h int) []int {
	return ix.belowWithin(box, x-3*h/2, 1<<30, 5*h/2, h, -1<<30)
}

// belowWithin returns the chain on the nearest row under box, at most gap pixels below it,
// whose leftmost word with its middle right of minX starts at or before maxX; nothing when
// that word is a label. Words before it close enough to be the same text are taken too, as
// far as the last one with its middle right of column.
func (ix *layoutIndex) belowWithin(box image.Rectangle, minX, maxX, gap, h, column int) []int {
	bestRow, bestPos, bestY := -1, -1, 1<<30
	for r, row := range ix.rows {
		for p, i := range row {
			b := ix.words[i].Box
			if b.Min.X+b.Max.X < 2*minX {
				// Another column's, left of the value: a card's photo column, or the expiry
				// label under the photo, which a garbled reading stretches towards the value.
				continue
			}
			if b.Min.Y < box.Max.Y-h/3 || b.Min.Y > box.Max.Y+gap || cy(b) <= cy(box) {
				break // rows are visual: one word out of the band puts the row out
			}
			if ix.tokens[i] == "" {
				continue
			}
			if b.Min.X <= maxX && b.Min.Y < bestY {
				bestRow, bestPos, bestY = r, p, b.Min.Y
			}
			break
		}
	}
	if bestRow < 0 || ix.label[ix.rows[bestRow][bestPos]] >= 0 {
		return nil
	}
	// A value wider than its label (centred under it) starts further left: take the words
	// closely before the first one too.
	row := ix.rows[bestRow]
	for bestPos > 0 {
		prev, cur := ix.words[row[bestPos-1]], ix.words[row[bestPos]]
		if ix.label[row[bestPos-1]] >= 0 || ix.tokens[row[bestPos-1]] == "" || cur.Box.Min.X-prev.Box.Max.X > max(cur.Box.Dy(), prev.Box.Dy()) ||
			prev.Box.Min.X+prev.Box.Max.X < 2*column {
			break
		}
		bestPos--
	}
	return ix.chainRight(bestRow, bestPos, false)
}

// levenshtein returns the edit distance between two ASCII strings.
func levenshtein(a, b string) int { return editDistance([]byte(a), []byte(b)) }

// editDistance returns the Levenshtein distance between two sequences.
func editDistance[T comparable](a, b []T) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Fields reads the fields of specs on the page by their printed labels (see labelTexts): a
// field's value is the text right of its label on the same line, or, when the label ends its
// line, the line(s) below it, up to the next label; places join wrapped lines with single
// spaces. Numbers, dates and codes are read again from their value's box with the digit or
// code engine, and the reading that passes its kind's validation is kept. A field whose
// label is not found is read from fallback's region of the same name when fallback has one
// (fixed positions, the last resort), else it comes back empty and invalid. Fields come back
// in specs' order, every one present, each Labelled when its label is on the page. The error
// is only for OCR engine failures.
func (r *Reader) Fields(p *Page, specs []FieldSpec, fallback *Layout) ([]Field, error) {
	ix := analyse(p.Words)
	out := make([]Field, 0, len(specs))
	for _, s := range specs {
		f, found, err := r.labelled(p, ix, s)
		if err != nil {
			return nil, err
		}
		if !found && fallback != nil {
			for _, reg := range fallback.Regions {
				if reg.Field != s.Name || reg.Box.Empty() || !checkable(reg.Kind) {
					continue
				}
				doc := p.doc
				if fallback.Width != p.Width || fallback.Height != p.Height {
					doc = resize(p.doc, fallback.Width, fallback.Height)
				}
				if f, err = r.readRegion(doc, reg); err != nil {
					return nil, err
				}
			}
		}
		f.Labelled = ix.hasLabel(s.Name)
		if f.Valid && (s.Name == "full_name" || s.Name == "owner") {
			f.Value = fixName(f.Value)
		}
		if f.Valid && s.Name == "chassis_number" {
			f.Value = vinCharacters.Replace(f.Value)
		}
		out = append(out, f)
	}
	birth := slices.ContainsFunc(specs, func(s FieldSpec) bool { return s.Name == "date_of_birth" })
	earliest := func(a, b string) bool { return a < b }
	// The issue date last: on a holder's page it is told by the birth and expiry dates.
	order := make([]int, 0, len(specs))
	for _, pass := range []bool{false, true} {
		for i, s := range specs {
			if (s.Name == "issue_date") == pass {
				order = append(order, i)
			}
		}
	}
	for _, i := range order {
		s := specs[i]
		if out[i].Valid || s.Kind != KindDate {
			continue
		}
		// A holder's side (its birth date read) prints the expiry last.
		dob, front := field(out, "date_of_birth")
		expiry, dated := field(out, "expiry_date")
		var f Field
		var err error
		switch {
		case s.Name == "date_of_birth":
			// A holder's side prints the birth date first (a 9-digit card's dotted leaders
			// read into one word with its label).
			f, err = r.unclaimedDate(p, ix, s, out, earliest, nil)
		case front && s.Name == "expiry_date":
			// A card's expiry is its latest date.
			f, err = r.unclaimedDate(p, ix, s, out, func(a, b string) bool { return a > b }, nil)
		case !birth && s.Name == "issue_date":
			// A back's first date is its issue date (a 2024 card's back prints its expiry
			// after it).
			f, err = r.unclaimedDate(p, ix, s, out, earliest, nil)
		case front && dated && s.Name == "issue_date":
			// A passport's page prints the issue date with the birth and expiry dates: the
			// date between them.
			f, err = r.unclaimedDate(p, ix, s, out, earliest, func(v string) bool { return v > dob.Value && v < expiry.Value })
		}
		if err != nil {
			return nil, err
		}
		if f.Valid {
			out[i] = f
		}
	}
	return out, nil
}

// field returns the valid field of fields with the given name; false when there is none.
func field(fields []Field, name string) (Field, bool) {
	for _, f := range fields {
		if f.Name == name && f.Valid {
			return f, true
		}
	}
	return Field{}, false
}

// vinCharacters maps the letters a vehicle identification number never holds (ISO 3779: I,
// O and Q, for their likeness to 1 and 0) to the digits OCR took them for.
var vinCharacters = strings.NewReplacer("I", "1", "O", "0", "Q", "0")

// unclaimedDate finds a date whose label was not read: of the dates printed on the page that
// no other field took (and that allowed takes, when not nil), the one before all others by
// before.
func (r *Reader) unclaimedDate(p *Page, ix *layoutIndex, s FieldSpec, read []Field, before func(a, b string) bool, allowed func(string) bool) (Field, error) {
	taken := map[string]bool{}
	for _, f := range read {
		if f.Valid {
			taken[f.Value] = true
		}
	}
	var best Field
	for i, w := range ix.words {
		if n := len(digitsOf(w.Text)); n < 6 || n > 10 || ix.label[i] >= 0 || 2*n < len([]rune(w.Text)) {
			continue
		}
		f, err := r.readValue(p, ix, value{rows: [][]int{{i}}}, s)
		if err != nil {
			return Field{}, err
		}
		if f.Valid && !taken[f.Value] && (allowed == nil || allowed(f.Value)) && (!best.Valid || before(f.Value, best.Value)) {
			best = f
		}
	}
	return best, nil
}

// checkable reports whether a kind's validation can tell a misplaced read from a value
// (numbers, dates, sex, nationality): only those are read from a fixed position when their
// label is not found, as free text read from the wrong place would pass for a value.
func checkable(k FieldKind) bool {
	switch k {
	case KindIDNumber, KindLegacyIDNumber, KindDate, KindLongDate, KindSex, KindNationality, KindPassportNumber:
		return true
	}
	return false
}

// labelled reads field s by its label; found is false when no label of it is on the page.
func (r *Reader) labelled(p *Page, ix *layoutIndex, s FieldSpec) (Field, bool, error) {
	best := Field{Name: s.Name}
	found := false
	for gi, g := range ix.groups {
		if g.field != s.Name {
			continue
		}
		// The value right of the label, else below it; below it too when the text right of
		// it does not validate (a stray mark read on the label's line).
		for _, below := range []bool{false, true} {
			v := ix.valueOf(gi, s.Multiline, below)
			if len(v.rows) == 0 {
				continue
			}
			found = true
			f, err := r.readValue(p, ix, v, s)
			if err != nil {
				return Field{}, false, err
			}
			if f.Valid {
				return f, true, nil
			}
			if best.Raw == "" {
				best = f
			}
			if !checkable(s.Kind) {
				break
			}
		}
	}
	if !best.Valid {
		if f, ok, err := r.byShape(p, ix, s); err != nil || ok {
			return f, ok, err
		}
	}
	return best, found, nil
}

// byShape finds a value that identifies itself without its label: a word of exactly 12
// digits (9 for the 9-digit card's number) for an ID number, a date written out ("Ngày 15
// tháng 03 năm 2012") for a long date, up to three words of a plate's form for a vehicle's
// plate (printed large, its small label is easily lost), a province's name, a person's name
// and a passport's nationality (shapes.go).
func (r *Reader) byShape(p *Page, ix *layoutIndex, s FieldSpec) (Field, bool, error) {
	if s.Name == "plate" {
		for _, row := range ix.rows {
			for a := range row {
				for b := a; b < len(row) && b < a+3 && ix.label[row[b]] < 0; b++ {
					v := value{rows: [][]int{row[a : b+1]}}
					if !plateForm.MatchString(plateText(v.text(ix.words))) {
						continue
					}
					f, err := r.readValue(p, ix, v, s)
					if err != nil || f.Valid {
						return f, f.Valid, err
					}
				}
			}
		}
		return Field{}, false, nil
	}
	switch {
	case s.Kind == KindProvince:
		f, ok := byProvince(ix, s)
		return f, ok, nil
	case s.Name == "full_name" || s.Name == "owner":
		return r.byName(p, ix, s)
	case s.Kind == KindNationality:
		f, ok := byNationality(ix, s)
		return f, ok, nil
	}
	switch s.Kind {
	case KindIDNumber, KindLegacyIDNumber:
		n := 12
		if s.Kind == KindLegacyIDNumber {
			n = 9
		}
		for i, w := range ix.words {
			d := digitsOf(w.Text)
			if len(d) < n-2 || len(d) > n+2 || 2*len(d) < len([]rune(w.Text)) || ix.label[i] >= 0 {
				continue
			}
			f, err := r.readValue(p, ix, value{rows: [][]int{{i}}}, s)
			if err != nil || f.Valid {
				return f, f.Valid, err
			}
		}
	case KindPassportNumber:
		// A passport number: one letter and seven digits.
		for i, w := range ix.words {
			t := token(w.Text)
			if len(t) != 8 || len(digitsOf(t[1:])) < 6 || ix.label[i] >= 0 || strings.ContainsRune(w.Text, '<') {
				continue
			}
			f, err := r.readValue(p, ix, value{rows: [][]int{{i}}}, s)
			if err != nil || f.Valid {
				return f, f.Valid, err
			}
		}
	case KindLongDate, KindDate:
		if s.Kind == KindDate && s.Name != "issue_date" {
			break
		}
		// An issue date written out under the holder's data ("Ngày 15 tháng 03 năm 2012"):
		// from a word "Ngày" to the first four-digit group after it.
		for _, row := range ix.rows {
			for p, i := range row {
				if t := ix.tokens[i]; t != "NGAY" && levenshtein(t, "NGAY") > 1 {
					continue
				}
				var parts []string
				for q := p; q < len(row) && q < p+8; q++ {
					parts = append(parts, ix.words[row[q]].Text)
					if len(digitsOf(ix.words[row[q]].Text)) == 4 {
						break
					}
				}
				text := strings.Join(parts, " ")
				if !strings.Contains(token(text), "THANG") {
					continue
				}
				if v, ok := NormalizeLongDate(text); ok {
					return Field{Name: s.Name, Value: v, Raw: text, Valid: true, Confidence: value{rows: [][]int{row[p:]}}.conf(ix.words)}, true, nil
				}
			}
		}
	}
	return Field{}, false, nil
}

// sureDate is the page pass's word confidence from which a valid date is not read again.
const sureDate = 0.85

// readValue normalises a value found on the page, reading numbers, dates and codes again
// from the value's box with a whitelisted engine.
func (r *Reader) readValue(p *Page, ix *layoutIndex, v value, s FieldSpec) (Field, error) {
	raw := v.text(ix.words)
	f := Field{Name: s.Name, Raw: raw, Confidence: v.conf(ix.words)}
	f.Value, f.Valid = normalizeField(s.Kind, stripLeading(raw))
	switch s.Kind {
	case KindDate:
		// A date the page read valid and sure of stands; others are read again.
		if f.Valid && f.Confidence >= sureDate {
			return f, nil
		}
	case KindIDNumber, KindLegacyIDNumber, KindCode, KindPassportNumber, KindModel:
		// always read again
	case KindSex, KindNationality:
		if f.Valid {
			return f, nil
		}
	case KindUpperText:
		// Names in some typefaces lose their spaces on a full-page pass ("QUÁCHTHỊKIMOANH"):
		// a word longer than any Vietnamese syllable sends the line to a single-line read.
		if !glued(f.Value) {
			return f, nil
		}
	default:
		switch {
		case s.Name == "identifying_marks":
			f.Value = fixMarks(f.Value)
		case isPlace(s.Name):
			if again, err := r.houseNumbersAgain(p, ix, v); err != nil {
				return Field{}, fmt.Errorf("ocr: field %s: %w", s.Name, err)
			} else if again != raw {
				f.Raw = again
				f.Value, f.Valid = normalizeField(s.Kind, stripLeading(again))
			}
			f.Value = fixPlace(f.Value)
		case lexicons[s.Name] != nil:
			f.Value, _ = fromLexicon(f.Value, lexicons[s.Name])
		case s.Name == "color":
			// A colour is words ("Trắng", "Xanh - Đen"): marks read at its ends go.
			f.Value = strings.TrimFunc(f.Value, func(r rune) bool { return !unicode.IsLetter(r) })
		}
		return f, nil
	}
	b := v.box(ix.words)
	h := b.Dy()
	if len(v.rows) == 1 {
		h = ix.words[v.rows[0][0]].Box.Dy()
	}
	// Tesseract's word box may leave out a first character it could not read (a "0" next
	// to a bracket): reach left by a character and a half, short of the previous word.
	left := b.Min.X - 3*h/2
	first := v.rows[0][0]
	if p := ix.posOf[first]; p > 0 {
		left = max(left, ix.words[ix.rows[ix.rowOf[first]][p-1]].Box.Max.X+2)
	}
	pad := image.Rect(min(left, b.Min.X-h/4), b.Min.Y-h/4, b.Max.X+h/2, b.Max.Y+h/4)
	again, conf, err := r.readLine(engineFor(s.Kind), crop(p.doc, pad))
	if err != nil {
		return Field{}, fmt.Errorf("ocr: field %s: %w", s.Name, err)
	}
	val, ok := normalizeField(s.Kind, again)
	if s.Name == "plate" {
		// The page keeps the space between the plate's two rows; the code engine drops it.
		if p := plateText(raw); plateLike(p) {
			f.Value, f.Valid = seriesFrom(p, plateText(again)), true
		} else if p := plateText(again); p != "" {
			f.Raw, f.Value, f.Valid, f.Confidence = again, p, true, conf
		}
		return f, nil
	}
	if s.Kind == KindModel {
		// The code engine reads a model's letters best ("FADIL", not "EADIL") but drops its
		// spaces: they go where the page has them when both have as many characters.
		if ok {
			f.Raw, f.Value, f.Confidence = again, spacedAs(val, f.Value), conf
		}
		return f, nil
	}
	if s.Kind == KindUpperText {
		if ok && !glued(val) {
			f.Raw, f.Value, f.Confidence = again, val, conf
		}
		return f, nil
	}
	if ok || !f.Valid {
		f.Raw, f.Value, f.Valid, f.Confidence = again, val, ok, conf
		if !ok && s.Kind != KindCode {
			// Neither reading validates: keep the page's, which has the surrounding text.
			f.Raw = raw
			f.Value, f.Valid = normalizeField(s.Kind, stripLeading(raw))
		}
	}
	return f, nil
}

// sureNumber is the page pass's word confidence from which a place's number is not read
// again.
const sureNumber = 0.9

// houseNumber matches a number of a place as printed: a house number, a lane's or a unit's
// ("116/38", "8A", "12/3B"), its trailing comma aside.
var houseNumber = regexp.MustCompile(`^\d+[A-Z]?(?:/\d+[A-Z]?)*$`)

// houseNumbersAgain returns the text of place value v with every number the page pass was
// unsure of (sureNumber) read again alone: the page's text model, reading a number in the
// flow of a line, loses or doubles a digit ("16/38" for "116/38", "1899/30" for "199/30")
// that a read of the number's box alone gets right. The new reading replaces the page's when
// it is a number too, surer, and at most two edits from it.
func (r *Reader) houseNumbersAgain(p *Page, ix *layoutIndex, v value) (string, error) {
	var parts []string
	for _, row := range v.rows {
		for k, i := range row {
			w := ix.words[i]
			core := strings.TrimRight(w.Text, ",.;")
			if w.Conf >= sureNumber || !houseNumber.MatchString(core) {
				parts = append(parts, w.Text)
				continue
			}
			h := w.Box.Dy()
			box := image.Rect(w.Box.Min.X-h/2, w.Box.Min.Y-h/4, w.Box.Max.X+h/4, w.Box.Max.Y+h/4)
			if k > 0 {
				box.Min.X = max(box.Min.X, ix.words[row[k-1]].Box.Max.X+2)
			}
			if k+1 < len(row) {
				box.Max.X = min(box.Max.X, ix.words[row[k+1]].Box.Min.X-2)
			}
			if box.Dx() < 2 || box.Dy() < 2 {
				parts = append(parts, w.Text) // squeezed by its neighbours: nothing to read
				continue
			}
			text, conf, err := r.readLine(engineText, crop(p.doc, box))
			if err != nil {
				return "", err
			}
			again := strings.TrimFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			if houseNumber.MatchString(again) && conf > w.Conf && levenshtein(again, core) <= 2 {
				parts = append(parts, again+w.Text[len(core):])
				continue
			}
			parts = append(parts, w.Text)
		}
	}
	return strings.Join(parts, " "), nil
}

// seriesFrom returns the plate read on the page with its letters as the code engine read
// them, which reads a series letter best (the page's text model read "24-E3" for "24-F3"):
// where both readings have as many characters, spaces aside, and a letter at the same place.
func seriesFrom(page, code string) string {
	p, c := []rune(page), []rune(strings.ReplaceAll(code, " ", ""))
	if len(c) != len(p)-strings.Count(page, " ") {
		return page
	}
	k := 0
	for i, r := range p {
		if r == ' ' {
			continue
		}
		if unicode.IsUpper(r) && unicode.IsUpper(c[k]) {
			p[i] = c[k]
		}
		k++
	}
	return string(p)
}

// plateText returns a number plate as printed: upper case, the space between its two
// rows kept ("79-E1 531.08"), no space around '-' or '.'; "" when nothing is left.
func plateText(s string) string {
	s = strings.ToUpper(strings.Join(strings.Fields(s), " "))
	for _, sep := range []string{"-", "."} {
		s = strings.ReplaceAll(s, " "+sep, sep)
		s = strings.ReplaceAll(s, sep+" ", sep)
	}
	s = strings.Map(func(r rune) rune {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '.' || r == ' ' {
			return r
		}
		return -1
	}, s)
	s = strings.Trim(s, " .-")
	// A motorbike's plate, two rows printed on one line: "79-E1 531.08" (the space between
	// the series and the number is easily lost).
	if m := motorbikePlate.FindStringSubmatch(s); m != nil {
		s = m[1] + " " + m[2]
	}
	return s
}

var motorbikePlate = regexp.MustCompile(`^(\d\d-[A-Z][A-Z0-9])(\d{3}\.?\d{2})$`)

// plateForm is a Vietnamese plate exactly: a car's "30A-123.45" (or "30A-1234", "51LD-123.45")
// or a motorbike's "79-E1 531.08".
var plateForm = regexp.MustCompile(`^\d\d(?:[A-Z][A-Z0-9]?-\d{3}\.?\d{2}|[A-Z]-\d{4}|-[A-Z][A-Z0-9] ?\d{3}\.?\d{2})$`)

// plateLike reports whether s has the shape of a Vietnamese plate: two digits, a series, a
// dash and four or five digits, or for a motorbike two digits, a dash, a series of a letter
// and a character, and four or five digits ("79-E1 531.08"); a dot and a space allowed.
func plateLike(s string) bool {
	series, rest, ok := strings.Cut(s, "-")
	if !ok || len(series) < 2 || len(digitsOf(series[:2])) != 2 {
		return false
	}
	if len(series) == 2 {
		if len(rest) < 2 || rest[0] < 'A' || rest[0] > 'Z' {
			return false
		}
		rest = rest[2:]
	}
	rest = strings.NewReplacer(" ", "", ".", "").Replace(rest)
	n := len(digitsOf(rest))
	return n == len(rest) && n >= 4 && n <= 5
}

// glued reports whether s has a word of more than eight letters, longer than any
// Vietnamese syllable: words run together.
func glued(s string) bool {
	for _, w := range strings.Fields(s) {
		if len([]rune(token(w))) > 8 {
			return true
		}
	}
	return false
}

// stripLeading removes separators a value may start with after its label (":", "/", ".").
func stripLeading(s string) string {
	return strings.TrimLeft(strings.TrimSpace(s), ":/.;,-|_ ")
}

// readRegion reads one region of a fixed layout from the rectified document.
func (r *Reader) readRegion(doc *image.Gray, reg Region) (Field, error) {
	raw, conf, err := r.readLine(engineFor(reg.Kind), crop(doc, reg.Box))
	if err != nil {
		return Field{}, fmt.Errorf("ocr: field %s: %w", reg.Field, err)
	}
	f := Field{Name: reg.Field, Raw: raw, Confidence: conf}
	f.Value, f.Valid = normalizeField(reg.Kind, raw)
	return f, nil
}

// spacedAs returns code without its spaces, spaced as page is when page has as many
// characters apart from spaces ("AIRBLADE" as "AIR BLADE"); code as read otherwise.
func spacedAs(code, page string) string {
	bare := []rune(strings.ReplaceAll(code, " ", ""))
	if len(bare) != len([]rune(strings.ReplaceAll(page, " ", ""))) {
		return code
	}
	var b strings.Builder
	for _, r := range page {
		if r == ' ' {
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(bare[0])
		bare = bare[1:]
	}
	return b.String()
}

// engineFor returns the engine that reads values of kind k: digits for numbers and dates,
// codes for codes, else the text model.
func engineFor(k FieldKind) engine {
	switch k {
	case KindIDNumber, KindLegacyIDNumber, KindDate:
		return engineDigits
	case KindCode, KindPassportNumber, KindModel:
		return engineCode
	}
	return engineText
}

// readLine reads img as a single line with engine e: the text (lines joined with spaces) and
// the mean confidence; nothing for an image less than two pixels wide or high.
func (r *Reader) readLine(e engine, img *image.Gray) (string, Confidence, error) {
	if img.Rect.Dx() < 2 || img.Rect.Dy() < 2 {
		return "", 0, nil // Tesseract crashes on an image of no pixels
	}
	lines, err := r.recognise(e, pgm(img), gosseract.PSM_SINGLE_LINE)
	if err != nil {
		return "", 0, err
	}
	var text string
	var conf Confidence
	for i, l := range lines {
		if i > 0 {
			text += " "
		}
		text += l.text
		conf += l.conf / Confidence(len(lines))
	}
	return text, conf, nil
}

// resize scales g to w × h (bilinear, through rectify's mapping of the whole image).
func resize(g *image.Gray, w, h int) *image.Gray {
	W, H := float64(g.Rect.Dx()), float64(g.Rect.Dy())
	return rectify(g, quad{{0, 0}, {W, 0}, {W, H}, {0, H}}, w, h)
}

// Specs returns the fields of layout as label-anchored field specs: free text (places,
// addresses, marks) may wrap onto several lines.
func Specs(layout Layout) []FieldSpec {
	out := make([]FieldSpec, 0, len(layout.Regions))
	for _, reg := range layout.Regions {
		out = append(out, FieldSpec{Name: reg.Field, Kind: reg.Kind, Multiline: reg.Kind == KindText})
	}
	return out
}

// ReadLabelled reads the fields of layout from img by their printed labels (ReadPage, then
// Fields with layout as the fallback for labels not found).
func (r *Reader) ReadLabelled(img image.Image, layout Layout) ([]Field, error) {
	p, err := r.ReadPage(img, layout.Width, layout.Height)
	if err != nil {
		return nil, err
	}
	return r.Fields(p, Specs(layout), &layout)
}

// dump describes the analysed page, row by row, labels in brackets (for debugging).
func (ix *layoutIndex) dump() string {
	var b strings.Builder
	for _, row := range ix.rows {
		for _, i := range row {
			w := ix.words[i]
			if g := ix.label[i]; g >= 0 {
				fmt.Fprintf(&b, "[%s:%s]@%d,%d ", ix.groups[g].field, w.Text, w.Box.Min.X, w.Box.Min.Y)
			} else {
				fmt.Fprintf(&b, "%s@%d,%d ", w.Text, w.Box.Min.X, w.Box.Min.Y)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Describe lists the page's words row by row with their positions, the labels found in
// brackets with their field (for debugging and tests).
func (p *Page) Describe() string { return analyse(p.Words).dump() }
