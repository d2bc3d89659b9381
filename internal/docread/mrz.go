package docread

import (
	"errors"
	"fmt"
	"image"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/otiai10/gosseract/v2"

	"github.com/idstream/idstream/internal/imagequality"
	"github.com/idstream/idstream/internal/mrz"
)

// Errors of ReadMRZ, wrapped with context; test with errors.Is.
var (
	ErrNoMRZ          = errors.New("ocr: no machine readable zone found")
	ErrMRZCheckDigits = errors.New("ocr: machine readable zone fails its check digits")
)

// mrzWidth is the width documents are rectified to before the MRZ band is read.
const mrzWidth = 1200

// bandPad is the white border put around a zone's band before it is read: Tesseract drops a
// glyph that touches the image's edge, which the first glyph of a line does when the
// document's corners were found a little inside it ("A<<THANH<HA" for LA).
const bandPad = 16

// ReadMRZ finds and reads the machine readable zone of a card (TD1), TD2 document or passport
// page (TD3) in img. It locates the document, rectifies it, reads candidate bands from the
// bottom up (bottom 32 % thresholded globally, then against the local mean for uneven light
// and tinted zones; the same for the bottom 45 %; then the whole document; then the bottom
// 45 % run past the edge found, belowEdge; last run past each side, sideEdge) with the OCR-B
// model — when the bottom of the document shows no row of a zone's glyphs (zoneShapes), only
// the usual band's local read, and only if a block of ink there could be a tinted zone; the
// rest only if that finds a zone-shaped line: a document without a zone costs no OCR-B read,
// or one — restores
// the line lengths of the format and validates the check digits. Characters the format allows
// only as digits or only as letters are mapped through the classic confusions (O↔0, I↔1,
// B↔8, S↔5, Z↔2, G↔6); in alphanumeric fields (document number, optional data) those
// substitutions are tried only as a set that makes every check digit hold. A Vietnamese
// holder's name read with a word that is no syllable is read again glyph by glyph, each word
// at the length its columns of the zone's grid give (nameFromColumns).
//
// It returns the zone with every check digit valid and its mean OCR confidence. When a zone
// of the right shape is read but no correction makes it valid, it returns that zone (Valid
// false) with ErrMRZCheckDigits, provided it shows the fillers of a zone (minFillerRuns); when
// nothing MRZ-shaped is read, ErrNoMRZ.
func (r *Reader) ReadMRZ(img image.Image) (*mrz.MRZ, Confidence, error) {
	m, conf, _, err := r.ReadMRZAt(img)
	return m, conf, err
}

// ReadMRZAt is ReadMRZ that also tells where the zone begins: the fraction of the document's
// height (0 at its top edge) at which the zone's first line starts, 1 when no zone was read.
// ReadPageAbove leaves the zone out of a page pass with it.
func (r *Reader) ReadMRZAt(img image.Image) (*mrz.MRZ, Confidence, float64, error) {
	return r.readMRZ(img, false)
}

// ReadPageMRZAt is ReadMRZAt for a passport's data page, which always has a zone: every band
// is read, evidence or not, and when the page is found wider than a page (pageBelow), its
// zone is also looked for below it, where only a zone its check digits validate counts.
func (r *Reader) ReadPageMRZAt(img image.Image) (*mrz.MRZ, Confidence, float64, error) {
	return r.readMRZ(img, true)
}

// readMRZ is ReadMRZAt, or with page set ReadPageMRZAt.
func (r *Reader) readMRZ(img image.Image, page bool) (*mrz.MRZ, Confidence, float64, error) {
	g := toGray(img)
	q := findDocument(img, g)
	width := (dist(q[0], q[1]) + dist(q[3], q[2])) / 2
	height := (dist(q[0], q[3]) + dist(q[1], q[2])) / 2
	if width < 10 || height < 10 {
		return nil, 0, 1, fmt.Errorf("%w: image too small", ErrNoMRZ)
	}
	doc := rectify(g, q, mrzWidth, int(mrzWidth*height/width))
	h := doc.Rect.Dy()
	var invalid, implausible *mrz.MRZ
	var invalidConf, implausibleConf Confidence
	invalidTop, implausibleTop := 1.0, 1.0
	type attempt struct {
		top   float64
		local bool // threshold against the local mean, for uneven light and tinted zones
		// below is how far (share of the document's height) the band runs past the
		// document's bottom edge as found: belowEdge, or to a passport page's shape
		// (pageBelow).
		below float64
		// wide is how far (share of the document's width) the band runs past each side of
		// the document as found (sideEdge).
		wide float64
	}
	// A zone prints rows of 30 to 44 glyphs across the document (zoneShapes). Where the bottom
	// 45 %, thresholded globally, shows none, the global read of the usual band is skipped;
	// its local read is made only where a block of ink could be a tinted zone (dark under a
	// global threshold), and the other bands only when it finds a zone-shaped line. A
	// passport page, which always has a zone, reads every band.
	rows, block := zoneShapes(binarise(crop(doc, image.Rect(mrzWidth/60, int(0.55*float64(h)), mrzWidth-mrzWidth/60, h-h/60))))
	structure := page || rows
	attempts := []attempt{{0.68, false, 0, 0}, {0.68, true, 0, 0}, {0.55, false, 0, 0}, {0.55, true, 0, 0}, {0, false, 0, 0},
		{0.55, false, belowEdge, 0}, {0.55, true, belowEdge, 0}, {0.55, false, 0, sideEdge}, {0.55, true, 0, sideEdge}}
	if f := pageBelow(width, height); page && f > 0 {
		attempts = append(attempts, attempt{0.55, false, f, 0}, attempt{0.55, true, f, 0})
	}
	extended := map[float64]*image.Gray{} // the document rectified run past its bottom, by how far
	widened := map[float64]*image.Gray{}  // and past its sides
	evidence := structure
	for i, a := range attempts {
		if i == 0 && !structure {
			continue
		}
		if i == 1 && !structure && !block {
			// Neither a zone's row nor a block of ink a zone too dark for the global
			// threshold would make: no zone to read (and a textured band's local read is
			// the slowest of all, a second of junk lines).
			break
		}
		if i == 2 && !evidence {
			break
		}
		// Inner margins keep slivers of the background (imprecise corners) out of the band.
		region := crop(doc, image.Rect(mrzWidth/60, int(a.top*float64(h)), mrzWidth-mrzWidth/60, h-h/60))
		if a.below > 0 {
			if extended[a.below] == nil {
				extended[a.below] = rectify(g, extendDown(q, a.below), mrzWidth, int(float64(h)*(1+a.below)))
			}
			end := h + int(a.below*float64(h)/2)
			if a.below != belowEdge {
				end = extended[a.below].Rect.Dy()
			}
			region = crop(extended[a.below], image.Rect(mrzWidth/60, int(a.top*float64(h)), mrzWidth-mrzWidth/60, end))
		}
		if a.wide > 0 {
			if widened[a.wide] == nil {
				widened[a.wide] = rectify(g, extendSides(q, a.wide), mrzWidth, h)
			}
			region = crop(widened[a.wide], image.Rect(0, int(a.top*float64(h)), mrzWidth, h-h/60))
		}
		band := binarise(region)
		if a.local {
			band = binariseLocal(region)
		}
		band = padWhite(band, bandPad)
		lines, err := r.recognise(engineMRZ, pgm(band), gosseract.PSM_SINGLE_BLOCK)
		if err != nil {
			return nil, 0, 1, err
		}
		m, conf, lineTop := bestMRZ(lines)
		evidence = evidence || m != nil
		if m == nil || ((a.below > 0 || a.wide > 0) && !m.Valid) {
			// A band run past the document reads the surface around it too: only a zone
			// its check digits validate counts from there.
			continue
		}
		top := min(1, (a.top*float64(h)+float64(max(0, lineTop-bandPad)))/float64(h))
		if m.Valid && plausible(m) {
			if misreadName(m) {
				rows, err := r.zoneColumns(band, len(m.Lines), len(m.Lines[0]))
				if err != nil {
					return nil, 0, 1, err
				}
				if rows != nil {
					m = nameFromColumns(m, rows)
				}
			}
			return m, conf, top, nil
		}
		if m.Valid && implausible == nil {
			implausible, implausibleConf, implausibleTop = m, conf, top
		}
		if !m.Valid && invalid == nil {
			invalid, invalidConf, invalidTop = m, conf, top
		}
	}
	if implausible != nil {
		return implausible, implausibleConf, implausibleTop, nil
	}
	if invalid != nil {
		return invalid, invalidConf, invalidTop, fmt.Errorf("%w: %q", ErrMRZCheckDigits, invalid.Lines)
	}
	return nil, 0, 1, ErrNoMRZ
}

// zoneShapes reports what of a zone a binarised band (ink 0) shows. rows: a row of a zone,
// at least minZoneGlyphs glyph-sized components (10 to 70 pixels high at mrzWidth, no wider
// than twice their height), their middles within 0.8 of a glyph's height of the row's
// highest (a line left 1.5 degrees askew by the rectification stays one row; a zone's lines
// are 1.5 glyph heights apart or more), spanning minZoneSpan of the band's width. block: a
// solid block of ink across minZoneSpan of the width and two glyphs high, which a tinted
// zone thresholded globally becomes. On docgen's calibration half every zone showed a row of
// 30 or 44 spanning 0.9 of the width, and no document without one a row of 20 spanning 0.6.
func zoneShapes(band *image.Gray) (rows, block bool) {
	w, h := band.Rect.Dx(), band.Rect.Dy()
	comps, _ := components(w, h, func(i int) bool { return band.Pix[(i/w)*band.Stride+i%w] == 0 })
	type glyphBox struct{ mid, h, x0, x1 int }
	var gs []glyphBox
	for _, c := range comps {
		cw, ch := c.x1-c.x0+1, c.y1-c.y0+1
		if ch >= 10 && ch <= 70 && cw >= 3 && cw <= 2*ch {
			gs = append(gs, glyphBox{(c.y0 + c.y1) / 2, ch, c.x0, c.x1})
		}
		if float64(cw) >= minZoneSpan*float64(w) && ch >= 50 && 2*c.n >= cw*ch {
			block = true
		}
	}
	slices.SortFunc(gs, func(a, b glyphBox) int { return a.mid - b.mid })
	for i := 0; i < len(gs); {
		j, lo, hi := i, gs[i].x0, gs[i].x1
		for ; j < len(gs) && gs[j].mid-gs[i].mid <= 4*gs[i].h/5; j++ {
			lo, hi = min(lo, gs[j].x0), max(hi, gs[j].x1)
		}
		if j-i >= minZoneGlyphs && float64(hi-lo) >= minZoneSpan*float64(w) {
			return true, block
		}
		i = j
	}
	return false, block
}

// Thresholds of zoneShapes.
const (
	minZoneGlyphs = 20
	minZoneSpan   = 0.75
)

// belowEdge is how far (share of the document's height) the last attempts' band runs past
// the bottom edge found: a passport page whose zone is printed close to its edge, found a
// few pixels short of it, had the bottoms of its last line cut (9 read as O, 6 as A, 8 as R).
const belowEdge = 0.04

// pageBelow returns how far (share of its height) a passport page found width × height must
// be extended down to a page's shape, and by twice belowEdge more (a zone printed close to
// the page's edge), 0 when it has one (within 5 %): a page whose white zone lies on a white
// table is found without the zone, the page above it (card-shaped, 1.6 times as wide as
// high), and its zone is read below it.
func pageBelow(width, height float64) float64 {
	if r := width / height; r > imagequality.AspectPassport*1.05 {
		return r/imagequality.AspectPassport - 1 + 2*belowEdge
	}
	return 0
}

// sideEdge is how far (share of the document's width) the last attempts' band runs past each
// side found: a card whose corners were found inside its edge lost the first glyph of each
// line to the cut ("DVNM…" for IDVNM…, seed 64209), and no check digit held.
const sideEdge = 0.05

// extendSides returns q with its left and right sides moved out by f of its width.
func extendSides(q quad, f float64) quad {
	out := q
	for _, k := range [2][2]int{{0, 1}, {3, 2}} { // left and right corner of the top, then the bottom
		l, r := q[k[0]], q[k[1]]
		out[k[0]] = [2]float64{l[0] + f*(l[0]-r[0]), l[1] + f*(l[1]-r[1])}
		out[k[1]] = [2]float64{r[0] + f*(r[0]-l[0]), r[1] + f*(r[1]-l[1])}
	}
	return out
}

// extendDown returns q with its bottom side moved down by f of its sides' lengths.
func extendDown(q quad, f float64) quad {
	out := q
	for _, k := range [2][2]int{{3, 0}, {2, 1}} { // bottom corner, top corner of each side
		b, t := q[k[0]], q[k[1]]
		out[k[0]] = [2]float64{b[0] + f*(b[0]-t[0]), b[1] + f*(b[1]-t[1])}
	}
	return out
}

// bestMRZ picks the MRZ lines out of the recognised lines (the last two or three long lines of
// one format's length; a valid zone may end one or two long lines above the last) and
// returns the best parse: a valid one when any correction gives one, else an invalid one
// whose lines as read show minFillerRuns runs of fillers, else nil.
func bestMRZ(lines []line) (*mrz.MRZ, Confidence, int) {
	var texts []string
	var confs []Confidence
	var tops []int
	var spans [][2]int
	for _, l := range lines {
		t := strings.Map(func(r rune) rune {
			if strings.ContainsRune(mrzAlphabet, r) {
				return r
			}
			return -1
		}, strings.ToUpper(l.text))
		if len(t) >= 24 {
			texts = append(texts, t)
			confs = append(confs, l.conf)
			tops = append(tops, l.top)
			spans = append(spans, [2]int{l.left, l.right})
		}
	}
	var fallback *mrz.MRZ
	var fallbackConf Confidence
	fallbackTop := 0
	// The zone is the last lines, or, when its check digits validate it, ends a line or two
	// above them: a band run past the document's edge (belowEdge) can read the surface below
	// it as a line of junk.
	for end := len(texts); end >= max(1, len(texts)-2); end-- {
		for _, f := range []struct {
			lines, length int
		}{{3, 30}, {2, 44}, {2, 36}} {
			if end < f.lines {
				continue
			}
			from := end - f.lines
			cand := alignLines(texts[from:end], spans[from:end], f.length)
			ok := true
			for _, t := range cand {
				if abs(len(t)-f.length) > 3 {
					ok = false
				}
			}
			if !ok {
				continue
			}
			var conf Confidence
			for _, c := range confs[from:end] {
				conf += c / Confidence(f.lines)
			}
			m := correctMRZ(cand, f.length)
			if m == nil {
				continue
			}
			if m.Valid {
				return m, conf, tops[from]
			}
			// A zone that no correction validates counts only as the last lines, with a
			// zone's fillers as read (before correctMRZ pads a short line with them).
			if fallback == nil && end == len(texts) && fillerRuns(cand) >= minFillerRuns {
				fallback, fallbackConf, fallbackTop = m, conf, tops[from]
			}
		}
	}
	return fallback, fallbackConf, fallbackTop
}

// alignLines drops the characters of a line longer than n that lie outside the zone's
// columns: a zone's lines are printed in one monospace grid, so a line whose extent begins
// (or ends) at least 0.6 of a character's pitch before (after) the other lines' read one or
// more spurious glyphs there (a card's edge or shadow), which no filler run's count explains.
// spans holds each line's horizontal extent. The grid is taken only from lines read at the
// format's length n, and a line is trimmed only when its extent is its characters' (within
// half a pitch: a box widened by specks Tesseract read as nothing says nothing about its
// characters), on one side, and by no more than its extra length.
func alignLines(texts []string, spans [][2]int, n int) []string {
	out := slices.Clone(texts)
	for i, t := range texts {
		extra := len(t) - n
		if extra <= 0 {
			continue
		}
		var lefts, rights []int
		var pitch float64
		for j, u := range texts {
			if j != i && len(u) == n && spans[j][1] > spans[j][0] {
				lefts, rights = append(lefts, spans[j][0]), append(rights, spans[j][1])
				pitch += float64(spans[j][1] - spans[j][0])
			}
		}
		if len(lefts) == 0 {
			continue
		}
		pitch /= float64(n * len(lefts))
		if math.Abs(float64(spans[i][1]-spans[i][0])-pitch*float64(len(t))) > pitch/2 {
			continue
		}
		slices.Sort(lefts)
		slices.Sort(rights)
		before := int(math.Round(float64(lefts[len(lefts)/2]-spans[i][0])/pitch - 0.1))
		after := int(math.Round(float64(spans[i][1]-rights[len(rights)/2])/pitch - 0.1))
		switch {
		case before > 0 && after <= 0:
			out[i] = t[min(before, extra):]
		case after > 0 && before <= 0:
			out[i] = t[:len(t)-min(after, extra)]
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// lengthVariants returns ways to bring t to n characters: by growing or shrinking one run of
// fillers, the longest first (OCR most often miscounts long runs of '<'; a name line has no
// check digit to refuse a "<<" between surname and given names shrunk instead), or at the
// end.
func lengthVariants(t string, n int) []string {
	if len(t) == n {
		return []string{t}
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if len(s) == n && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	d := n - len(t)
	var runs [][2]int // start, end of each run of fillers
	for i := 0; i < len(t); i++ {
		if t[i] != '<' || (i > 0 && t[i-1] == '<') {
			continue
		}
		j := i
		for j < len(t) && t[j] == '<' {
			j++
		}
		runs = append(runs, [2]int{i, j})
	}
	slices.SortStableFunc(runs, func(a, b [2]int) int { return (b[1] - b[0]) - (a[1] - a[0]) })
	for _, r := range runs {
		i, j := r[0], r[1]
		if d > 0 {
			add(t[:j] + strings.Repeat("<", d) + t[j:])
		} else if j-i >= -d {
			add(t[:i] + t[i-d:])
		}
	}
	if d > 0 {
		add(t + strings.Repeat("<", d))
	} else {
		add(t[:n])
		add(t[-d:])
	}
	// One glyph read twice as two look-alikes ("3O04…" for "304…": its 0 read as O and 0):
	// either of two neighbours that are one character to a zone (toDigit) dropped.
	if d == -1 {
		for i := 0; i+1 < len(t); i++ {
			if asDigit(t[i]) == asDigit(t[i+1]) && t[i] != t[i+1] {
				add(t[:i] + t[i+1:])
				add(t[:i+1] + t[i+2:])
			}
		}
	}
	return out
}

// asDigit returns the digit c is read for in a zone's digit field (toDigit), c itself when it
// is none.
func asDigit(c byte) byte {
	if d, ok := toDigit[c]; ok {
		return d
	}
	return c
}

// asLetter returns the letter c is read for in a zone's letter field (toLetter), c itself when
// it is none.
func asLetter(c byte) byte {
	if l, ok := toLetter[c]; ok {
		return l
	}
	return c
}

// documentCodes are the letters a zone's first line begins with, by line length: an identity
// card's (TD1, TD2) I, A or C; a passport's (TD3) P.
var documentCodes = map[int]string{30: "IAC", 36: "IAC", 44: "P"}

// codeLost returns ways to bring a zone's first line t to n characters with the document
// code's first letter put back where it was lost at the line's start ("DVNMI8273…" for
// "IDVNM18273…", the band's margin cutting the I off), when t begins with none of them.
func codeLost(t string, n int) []string {
	codes := documentCodes[n]
	if t == "" || strings.IndexByte(codes, t[0]) >= 0 {
		return nil
	}
	var out []string
	for _, c := range []byte(codes) {
		out = append(out, lengthVariants(string(c)+t, n)...)
	}
	return out
}

// Position classes of a format: 'D' digits only (dates, check digits), 'A' letters or filler
// only, 'X' alphanumeric.
var mrzClasses = map[int][]string{
	30: {"AAAAAXXXXXXXXXDXXXXXXXXXXXXXXX", "DDDDDDDADDDDDDDAAAXXXXXXXXXXXD", strings.Repeat("A", 30)},
	36: {"AA" + strings.Repeat("A", 34), "XXXXXXXXXDAAADDDDDDDADDDDDDDXXXXXXXD"},
	44: {strings.Repeat("A", 44), "XXXXXXXXXDAAADDDDDDDADDDDDDDXXXXXXXXXXXXXXDD"},
}

var (
	toDigit  = map[byte]byte{'O': '0', 'Q': '0', 'D': '0', 'U': '0', 'I': '1', 'L': '1', 'T': '1', 'B': '8', 'S': '5', 'Z': '2', 'G': '6', 'A': '4'}
	toLetter = map[byte]byte{'0': 'O', '1': 'I', '8': 'B', '5': 'S', '2': 'Z', '6': 'G', '4': 'A'}
)

// maxAmbiguous bounds the alphanumeric positions tried together (2^n parses).
const maxAmbiguous = 10

// correctMRZ fixes line lengths and classic confusions and returns the first valid parse
// that is plausible, else the first valid one, else the plain parse when none is valid (nil
// when the text is not an MRZ at all), with a Vietnamese holder's name syllables fixed
// (fixZoneNames). A line cut at its start meets the check digits too when the fields they
// cover keep their places ("DVNMO0991…"), so a parse with no document code is no answer
// while another reading makes one.
func correctMRZ(lines []string, n int) *mrz.MRZ {
	return fixZoneNames(correctZone(lines, n))
}

// correctZone is correctMRZ without the names' fix.
func correctZone(lines []string, n int) *mrz.MRZ {
	classes := mrzClasses[n]
	variants := [][]string{{}}
	for i, l := range lines {
		lvs := lengthVariants(l, n)
		if i == 0 {
			lvs = append(lvs, codeLost(l, n)...)
		}
		var next [][]string
		for _, v := range variants {
			for _, lv := range lvs {
				next = append(next, append(append([]string{}, v...), lv))
			}
		}
		variants = next
	}
	var first, implausible *mrz.MRZ
	// accept reports whether a valid parse is the answer, keeping the first implausible one.
	accept := func(m *mrz.MRZ) bool {
		if plausible(m) {
			return true
		}
		if implausible == nil {
			implausible = m
		}
		return false
	}
	for _, v := range variants {
		fixed := make([]string, len(v))
		var amb [][2]int // line, position of confusable alphanumerics
		for i, l := range v {
			b := []byte(l)
			for j := range b {
				switch classes[i][j] {
				case 'D':
					if d, ok := toDigit[b[j]]; ok {
						b[j] = d
					}
				case 'A':
					if a, ok := toLetter[b[j]]; ok {
						b[j] = a
					}
				}
			}
			if i == 1 {
				fixSex(b, n)
				fixOpenExpiry(b, n)
			}
			amb = append(amb, ambiguous(b, classes[i], i)...)
			fixed[i] = string(b)
		}
		m, err := mrz.Parse(fixed)
		if err != nil {
			continue
		}
		if m.Valid {
			if accept(m) {
				return m
			}
			continue
		}
		if first == nil {
			first = m
		}
		if len(amb) > maxAmbiguous {
			amb = amb[:maxAmbiguous]
		}
		// Try every subset of substitutions, fewest changes first.
		for k := 1; k <= len(amb); k++ {
			if m := trySubsets(fixed, amb, k); m != nil {
				if accept(m) {
					return m
				}
				break
			}
		}
	}
	if implausible != nil {
		return implausible
	}
	return first
}

// sexAt is the position of the sex in the second line of each format (by line length).
var sexAt = map[int]int{30: 7, 36: 20, 44: 20}

// fixSex maps a letter read where the zone's sex stands to the look-alike of M, F or '<' (no
// check digit covers it): E, P, R, K → F; N, H, W → M.
func fixSex(b []byte, n int) {
	p, ok := sexAt[n]
	if !ok || p >= len(b) {
		return
	}
	switch b[p] {
	case 'E', 'P', 'R', 'K':
		b[p] = 'F'
	case 'N', 'H', 'W':
		b[p] = 'M'
	}
}

// expiryAt is where the expiry date starts in the second line of each format.
var expiryAt = map[int]int{30: 8, 36: 21, 44: 21}

// fixOpenExpiry makes an expiry date read as fillers and zeros, at least four of them
// fillers ("<<<<<0"), all fillers: a document that does not expire (the identity card of
// 2024 of a person over 60) prints six, and a filler read as a zero is invisible to the
// check digits, which count both as 0.
func fixOpenExpiry(b []byte, n int) {
	p, ok := expiryAt[n]
	if !ok || p+6 > len(b) {
		return
	}
	f := b[p : p+6]
	fillers := 0
	for _, c := range f {
		switch c {
		case '<':
			fillers++
		case '0':
		default:
			return
		}
	}
	if fillers < 4 {
		return
	}
	for i := range f {
		f[i] = '<'
	}
}

// trySubsets returns a valid parse of lines with exactly k of the ambiguous positions
// swapped to their look-alike, or nil.
func trySubsets(lines []string, amb [][2]int, k int) *mrz.MRZ {
	var rec func(start, left int, b [][]byte) *mrz.MRZ
	rec = func(start, left int, b [][]byte) *mrz.MRZ {
		if left == 0 {
			ls := make([]string, len(b))
			for i := range b {
				ls[i] = string(b[i])
			}
			if m, err := mrz.Parse(ls); err == nil && m.Valid {
				return m
			}
			return nil
		}
		for i := start; i <= len(amb)-left; i++ {
			p := amb[i]
			old := b[p[0]][p[1]]
			alt, ok := toDigit[old]
			if !ok {
				alt = toLetter[old]
			}
			b[p[0]][p[1]] = alt
			if m := rec(i+1, left-1, b); m != nil {
				return m
			}
			b[p[0]][p[1]] = old
		}
		return nil
	}
	b := make([][]byte, len(lines))
	for i, l := range lines {
		b[i] = []byte(l)
	}
	return rec(0, k, b)
}

// ambiguous returns the confusable positions of line i's alphanumeric fields (runs of 'X'):
// in a field that is mostly digits, its letters that look like digits; in a field that is
// mostly letters, its digits that look like letters.
func ambiguous(b []byte, class string, i int) [][2]int {
	var out [][2]int
	for j := 0; j < len(b); {
		if class[j] != 'X' {
			j++
			continue
		}
		k := j
		digits, letters := 0, 0
		for ; k < len(b) && class[k] == 'X'; k++ {
			switch {
			case b[k] >= '0' && b[k] <= '9':
				digits++
			case b[k] >= 'A' && b[k] <= 'Z':
				letters++
			}
		}
		for p := j; p < k; p++ {
			if _, ok := toDigit[b[p]]; ok && digits >= letters {
				out = append(out, [2]int{i, p})
			}
			if _, ok := toLetter[b[p]]; ok && letters > digits {
				out = append(out, [2]int{i, p})
			}
		}
		j = k
	}
	return out
}

// minFillerRuns is the least number of filler runs ("<<" or longer) a zone that fails its
// check digits must show to be taken for a zone at all: every real zone has at least two
// (TD1: after the optional data and between the names; TD3: between the names and after
// them), misreads of a few fillers leave most of them, while two long lines of other text
// (a vehicle registration's engine and chassis numbers read with the OCR-B model) show none.
const minFillerRuns = 2

// fillerRuns counts the runs of two or more fillers in lines.
func fillerRuns(lines []string) int {
	n := 0
	for _, l := range lines {
		for _, run := range strings.FieldsFunc(l, func(r rune) bool { return r != '<' }) {
			if len(run) >= 2 {
				n++
			}
		}
	}
	return n
}

// The forms of Vietnamese document numbers.
var (
	vietnamesePassportNumber = regexp.MustCompile(`^[A-Z][0-9]{7}$`)
	nineDigits               = regexp.MustCompile(`^[0-9]{9}$`)
)

// plausible reports whether the parts of a zone that no check digit covers look right: a
// known document code letter (I, A, C for cards, P for passports, V for visas) and a name
// field whose fillers, once they start running, run to the end; and whether a Vietnamese
// document's number has its form (a passport's a letter and seven digits, an ID card's
// nine digits): a misread zone corrected through its look-alikes can meet its check
// digits by chance (a passport's B1226997 came out as 199490O7, both digits met).
func plausible(m *mrz.MRZ) bool {
	if m.DocumentCode == "" || !strings.ContainsRune("IACPV", rune(m.DocumentCode[0])) {
		return false
	}
	if m.IssuingState == "VNM" {
		switch n := m.DocumentNumber; m.DocumentCode[0] {
		case 'P':
			if !vietnamesePassportNumber.MatchString(n) {
				return false
			}
		case 'I':
			if !nineDigits.MatchString(n) {
				return false
			}
		}
	}
	line, from := nameField(m)
	name := m.Lines[line][from:]
	if i := strings.Index(name, "<<<"); i >= 0 && strings.Trim(name[i:], "<") != "" {
		return false
	}
	return true
}

// nameField returns where a parsed zone's name field is: from position from of line line to
// the line's end (a card's (TD1) last line; a TD2 or TD3 zone's first, after "P<VNM").
func nameField(m *mrz.MRZ) (line, from int) {
	if m.Format == mrz.FormatTD1 {
		return len(m.Lines) - 1, 0
	}
	return 0, 5
}
