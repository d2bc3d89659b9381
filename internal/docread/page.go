package docread

import (
	"fmt"
	"image"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/otiai10/gosseract/v2"
)

// Word is one word Tesseract read on a rectified document, with its box in the document's
// pixel coordinates, its confidence in [0, 1] and its place in Tesseract's reading order.
type Word struct {
	Text string
	Box  image.Rectangle
	Conf Confidence
	// Block, Par and Line number Tesseract's layout units; words sharing all three are one
	// text line of Tesseract's.
	Block, Par, Line int
}

// Page is a document located in a picture, rectified to Width × Height, and every word of it
// that one Tesseract pass (the text model, automatic page segmentation) read. Fields are
// found on it by their printed labels (see Fields); the rectified image is kept so that a
// value's box can be read again with a stricter engine.
type Page struct {
	Width, Height int
	Words         []Word
	doc, clean    *image.Gray // as rectified; prepared for the page pass (cleanForText)
	src           source      // where doc was rectified from (zero for none)
}

// ReadPage locates the document in img, rectifies it onto w × h and reads all its text once
// with the text model. The error is only for OCR engine failures.
func (r *Reader) ReadPage(img image.Image, w, h int) (*Page, error) {
	return r.ReadPageAbove(img, w, h, 1)
}

// ReadPageAbove is ReadPage leaving out the part of the document from top (a fraction of its
// height, as ReadMRZAt reports where a machine readable zone begins) down: the zone is read
// by ReadMRZ, and reading it again as text would only cost time. A top above the document's
// middle is not a zone's (no document prints its zone there) and leaves out nothing, as
// does top ≥ 1.
func (r *Reader) ReadPageAbove(img image.Image, w, h int, top float64) (*Page, error) {
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("ocr: page size %d×%d", w, h)
	}
	g := toGray(img)
	src := source{g: g, q: findDocument(img, g), top: top}
	doc, clean := src.prepare(w, h)
	return r.readPage(doc, clean, gosseract.PSM_AUTO, src)
}

// source is where a page was rectified from: the picture, the document's outline in it and
// where its zone begins (ReadPageAbove's top).
type source struct {
	g   *image.Gray
	q   quad
	top float64
}

// prepare rectifies the source's document onto w × h and prepares it for the page pass
// (cleanForText), its zone painted out.
func (s source) prepare(w, h int) (doc, clean *image.Gray) {
	doc = rectify(s.g, s.q, w, h)
	clean = cleanForText(doc)
	if s.top >= 0.45 && s.top < 1 {
		// The zone is painted out in the page's own background level, not white: on a
		// photographed card (a grey 180–200) a white band a quarter of the page high moves
		// Tesseract's global threshold between the band and the card, and the whole card
		// above, text and all, reads as one dark area (no words at all).
		from := max(0, int(s.top*float64(h))-h/100)
		bg := median(clean.Pix[:from*clean.Stride])
		for y := from; y < h; y++ {
			row := clean.Pix[y*clean.Stride : y*clean.Stride+w]
			for x := range row {
				row[x] = bg
			}
		}
	}
	return doc, clean
}

// CutOff reports whether three or more words touch the page's top or bottom edge: a row of
// print cut through by the document's outline (found on the card's print instead of its
// edge), which ReadGrown reads whole.
func (p *Page) CutOff() bool {
	n := 0
	for _, w := range p.Words {
		if w.Box.Min.Y <= 1 || w.Box.Max.Y >= p.Height-1 {
			n++
		}
	}
	return n >= 3
}

// growShare is how much (share of the document's width and height, on each side) ReadGrown
// grows the document's outline: a light card on a light table was outlined on a line of its
// own print up to a tenth of its height in from its top.
const growShare = 0.12

// ReadGrown reads the page again from its picture with the document's outline grown by
// growShare on every side (along the outline's sides, so perspective is kept): an outline
// found on the card's print instead of its faint edge cuts off the rows beyond that print.
// The grown page holds a margin of what lies around the document. Callers use it when the
// other readings leave required fields unread or the page shows a row cut (CutOff); a page
// not read from a picture (nil source) is returned as it is.
func (r *Reader) ReadGrown(p *Page) (*Page, error) {
	if p.src.g == nil {
		return p, nil
	}
	q := p.src.q
	var grown quad
	for k := range 4 {
		prev, next := q[(k+3)%4], q[(k+1)%4]
		// Out from corner k along both sides that meet there: the side from the next
		// corner and the side from the previous one.
		for a := range 2 {
			grown[k][a] = q[k][a] + growShare*(q[k][a]-next[a]) + growShare*(q[k][a]-prev[a])
		}
	}
	src := source{g: p.src.g, q: grown, top: 1}
	if p.src.top < 1 {
		src.top = (p.src.top + growShare) / (1 + 2*growShare)
	}
	w, h := int(float64(p.Width)*(1+2*growShare)), int(float64(p.Height)*(1+2*growShare))
	doc, clean := src.prepare(w, h)
	return r.readPage(doc, clean, gosseract.PSM_AUTO, src)
}

// ReadAsBlock reads the page's document again as one block of text (Tesseract's single-block
// segmentation instead of its automatic page layout). Automatic layout keeps columns apart
// but now and then drops a short line beside a larger block (a label above its value); one
// block keeps every line but may run columns together. Callers use it when the first
// reading says too little (no document title found, required fields unread).
func (r *Reader) ReadAsBlock(p *Page) (*Page, error) {
	return r.readPage(p.doc, p.clean, gosseract.PSM_SINGLE_BLOCK, p.src)
}

// ReadBinarised reads the page's document again thresholded against its local mean
// (binariseLocal) with automatic page layout: behind small print, a card's guilloche of mid
// grey pulls Tesseract's global threshold into the pattern, and whole rows read as nothing
// in both other readings. Callers use it when those leave required fields unread.
func (r *Reader) ReadBinarised(p *Page) (*Page, error) {
	return r.readPage(p.doc, binariseLocal(p.clean), gosseract.PSM_AUTO, p.src)
}

// ReadFlattened reads the page's document again with everything lighter than halfway from
// the ink's level to the paper's painted in the paper's (flatten), with automatic page layout:
// a card's guilloche of fine grey lines crossing all over it (a 9-digit card's back) reads as
// a page of junk in every other reading, the local threshold's too, which keeps the lines.
// Callers use it when the other readings leave required fields unread, and first when the
// page as read has almost no words.
func (r *Reader) ReadFlattened(p *Page) (*Page, error) {
	return r.readPage(p.doc, flatten(p.clean), gosseract.PSM_AUTO, p.src)
}

// readPage reads clean (doc prepared by cleanForText) with psm; values are read again from
// doc, as printed. src is where doc was rectified from (kept for ReadGrown).
func (r *Reader) readPage(doc, clean *image.Gray, psm gosseract.PageSegMode, src source) (*Page, error) {
	words, err := r.words(engineText, pgm(clean), psm)
	if err != nil {
		return nil, fmt.Errorf("ocr: read page: %w", err)
	}
	w, h := doc.Rect.Dx(), doc.Rect.Dy()
	return &Page{Width: w, Height: h, Words: dropFlatMarks(dropDetachedMarks(splitWords(words))), doc: doc, clean: clean, src: src}, nil
}

// dropFlatMarks drops the words with letters or digits read with low confidence whose box is
// at most a quarter of the page's median word height high: a dotted leader or a rule read as
// letters (the 9-digit card's dots under a name read as "SA bên", 4 pixels high, which then
// ended the name). No glyph is that flat.
func dropFlatMarks(ws []Word) []Word {
	hs := make([]int, 0, len(ws))
	for _, w := range ws {
		hs = append(hs, w.Box.Dy())
	}
	if len(hs) < 4 {
		return ws
	}
	slices.Sort(hs)
	typical := hs[len(hs)/2]
	out := ws[:0:0]
	for _, w := range ws {
		if w.Conf < 0.5 && 4*w.Box.Dy() <= typical && token(w.Text) != "" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// words runs engine e on the encoded image with page segmentation mode psm and returns its
// words (empty ones dropped).
func (r *Reader) words(e engine, img []byte, psm gosseract.PageSegMode) ([]Word, error) {
	boxes, err := r.boxes(e, img, psm)
	if err != nil {
		return nil, err
	}
	out := make([]Word, 0, len(boxes))
	for _, b := range boxes {
		t := strings.TrimSpace(b.Word)
		if t == "" || b.Box.Empty() {
			continue
		}
		out = append(out, Word{Text: t, Box: b.Box, Conf: Confidence(b.Confidence / 100), Block: b.BlockNum, Par: b.ParNum, Line: b.LineNum})
	}
	return out, nil
}

// dropDetachedMarks drops the words that are a diacritic Tesseract read apart from the word
// it belongs to: a word read with low confidence whose box is less than half that word's
// height both wide and high, within its horizontal extent and touching it from above or below
// (the hook of THẢO's Ả read as a word "Ờ" that then ended the name). A small label above or
// below a value is wider than that and read with confidence.
func dropDetachedMarks(ws []Word) []Word {
	out := ws[:0:0]
	for i, w := range ws {
		mark := false
		for j, o := range ws {
			if j == i || w.Conf >= 0.5 || 2*w.Box.Dy() >= o.Box.Dy() || 2*w.Box.Dx() >= o.Box.Dy() ||
				w.Box.Min.X < o.Box.Min.X || w.Box.Max.X > o.Box.Max.X {
				continue
			}
			gap := o.Box.Dy() / 4
			if w.Box.Max.Y >= o.Box.Min.Y-gap && w.Box.Min.Y <= o.Box.Max.Y+gap {
				mark = true
				break
			}
		}
		if !mark {
			out = append(out, w)
		}
	}
	return out
}

// splitWords splits words glued to a label by a colon ("tên:NGUYỄN") or a slash between
// letters ("tên/Full", the Vietnamese label and its English subtitle) into two, dividing the
// box in proportion to the characters. A slash between digits (a date) stays.
func splitWords(ws []Word) []Word {
	out := make([]Word, 0, len(ws))
	for _, w := range ws {
		rs := []rune(w.Text)
		if parts := splitAroundDate(w); parts != nil {
			out = append(out, parts...)
			continue
		}
		k := -1
		for i, r := range rs {
			if i == len(rs)-1 {
				break
			}
			if r == ':' || (r == '/' && i > 0 && unicode.IsLetter(rs[i-1]) && unicode.IsLetter(rs[i+1])) {
				k = i + 1
				break
			}
		}
		if k < 0 {
			out = append(out, w)
			continue
		}
		x := w.Box.Min.X + w.Box.Dx()*k/len(rs)
		a, b := w, w
		a.Text, a.Box.Max.X = string(rs[:k]), x
		b.Text, b.Box.Min.X = string(rs[k:]), x
		out = append(out, a)
		out = append(out, splitWords([]Word{b})...)
	}
	return out
}

// embeddedDate is a date inside a longer word: a label and its dotted leaders read into one
// word with the value ("SìnR`npay¬)19/05/1990,XÀV0696919").
var embeddedDate = regexp.MustCompile(`\d{1,2}/\d{1,2}/\d{4}`)

// splitAroundDate splits a word of more than 14 characters holding a date with something
// before it into the part before, the date and the part after (when any), dividing the box
// in proportion to the characters; nil when there is no such date.
func splitAroundDate(w Word) []Word {
	rs := []rune(w.Text)
	loc := embeddedDate.FindStringIndex(w.Text)
	if len(rs) <= 14 || loc == nil || loc[0] == 0 {
		return nil
	}
	from, to := utf8.RuneCountInString(w.Text[:loc[0]]), utf8.RuneCountInString(w.Text[:loc[1]])
	at := func(k int) int { return w.Box.Min.X + w.Box.Dx()*k/len(rs) }
	var out []Word
	for _, part := range [][2]int{{0, from}, {from, to}, {to, len(rs)}} {
		if part[0] == part[1] {
			continue
		}
		p := w
		p.Text, p.Box.Min.X, p.Box.Max.X = string(rs[part[0]:part[1]]), at(part[0]), at(part[1])
		out = append(out, p)
	}
	return out
}

// Text returns the page's text in Tesseract's reading order, one line per text line.
func (p *Page) Text() string {
	var b strings.Builder
	for i, w := range p.Words {
		if i > 0 {
			prev := p.Words[i-1]
			if prev.Block != w.Block || prev.Par != w.Par || prev.Line != w.Line {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(w.Text)
	}
	return b.String()
}

// maxWordHeight is how many times the median word height of a page a word's box may be and
// still place a row: taller boxes are marks read as glyphs (a fingerprint, a stamp, a
// photo's edge), which, taken for a row's height, joined the lines above and below them into
// one row ("Ngày 14 tháng 04 năm 2020" merged with the authority's title under it).
const maxWordHeight = 2.0

// maxSkew is the steepest slope (dy/dx) of text lines rows follows (skew): 0.06, 3.4°,
// beyond the 1.8° that a card's outline found a little off left on a chip card's back (its
// place of residence, rising across the card, joined its label's row at the right).
const maxSkew = 0.06

// skewWordConf is the least confidence of the words skew measures by: marks read as words
// on a fingerprint or a guilloche make text lines of their own at any slope.
const skewWordConf = 0.7

// skew returns the slope (dy/dx) of the page's text lines: the median over Tesseract's text
// lines of the slope from the first to the last of their words read with skewWordConf, for
// lines whose words span at least four word heights (a word's box rises and falls with its
// diacritics; across a line that is little); 0 when fewer than two lines tell it or the
// median is steeper than maxSkew (no page is rectified that far askew: such lines are
// marks, not print).
func skew(ws []Word, idx []int) float64 {
	type key struct{ block, par, line int }
	lines := map[key][]int{}
	for _, i := range idx {
		if w := ws[i]; w.Line > 0 && w.Conf >= skewWordConf && len([]rune(token(w.Text))) >= 2 {
			k := key{w.Block, w.Par, w.Line}
			lines[k] = append(lines[k], i)
		}
	}
	var slopes []float64
	for _, l := range lines {
		if len(l) < 2 {
			continue
		}
		first, last := ws[l[0]].Box, ws[l[0]].Box
		for _, i := range l[1:] {
			b := ws[i].Box
			if b.Min.X < first.Min.X {
				first = b
			}
			if b.Min.X > last.Min.X {
				last = b
			}
		}
		dx := float64(last.Min.X+last.Max.X-first.Min.X-first.Max.X) / 2
		if dx >= 4*float64(max(first.Dy(), last.Dy())) {
			slopes = append(slopes, (cy(last)-cy(first))/dx)
		}
	}
	if len(slopes) < 2 {
		return 0
	}
	slices.Sort(slopes)
	if m := slopes[len(slopes)/2]; abs64(m) <= maxSkew {
		return m
	}
	return 0
}

// rows groups word indices into visual rows across the whole page width: words whose
// vertical centres lie within half a word height of a row's centre join it, centres taken
// along the page's text lines (skew: a page rectified a little askew keeps a long line in
// one row). A word taller than maxWordHeight times the median joins the row whose centre is
// nearest, when within half that row's height, else makes its own. Rows are sorted top to
// bottom, their words left to right.
func rows(ws []Word, idx []int) [][]int {
	slope := skew(ws, idx)
	along := func(b image.Rectangle) float64 { return cy(b) - slope*float64(b.Min.X+b.Max.X)/2 }
	hs := make([]float64, 0, len(idx))
	for _, i := range idx {
		hs = append(hs, float64(ws[i].Box.Dy()))
	}
	slices.Sort(hs)
	var typical float64
	if len(hs) > 0 {
		typical = hs[len(hs)/2]
	}
	var sorted, outsized []int
	for _, i := range idx {
		if len(hs) >= 4 && float64(ws[i].Box.Dy()) > maxWordHeight*typical {
			outsized = append(outsized, i)
		} else {
			sorted = append(sorted, i)
		}
	}
	sort.Slice(sorted, func(a, b int) bool {
		return along(ws[sorted[a]].Box) < along(ws[sorted[b]].Box)
	})
	var out [][]int
	var centre, height []float64
	for _, i := range sorted {
		b := ws[i].Box
		placed := false
		for r := len(out) - 1; r >= 0 && r >= len(out)-3; r-- {
			if abs64(along(b)-centre[r]) <= 0.5*max(float64(b.Dy()), height[r]) {
				n := float64(len(out[r]))
				centre[r] = (centre[r]*n + along(b)) / (n + 1)
				height[r] = max(height[r], float64(b.Dy()))
				out[r] = append(out[r], i)
				placed = true
				break
			}
		}
		if !placed {
			out = append(out, []int{i})
			centre = append(centre, along(b))
			height = append(height, float64(b.Dy()))
		}
	}
	for _, i := range outsized {
		best, dist := -1, math.Inf(1)
		for r := range out {
			if d := abs64(along(ws[i].Box) - centre[r]); d <= 0.5*height[r] && d < dist {
				best, dist = r, d
			}
		}
		if best >= 0 {
			out[best] = append(out[best], i)
			continue
		}
		out = append(out, []int{i})
		centre = append(centre, along(ws[i].Box))
		height = append(height, float64(ws[i].Box.Dy()))
	}
	order := make([]int, len(out))
	for r := range order {
		order[r] = r
	}
	sort.SliceStable(order, func(a, b int) bool { return centre[order[a]] < centre[order[b]] })
	sortedRows := make([][]int, len(out))
	for k, r := range order {
		row := out[r]
		sort.Slice(row, func(a, b int) bool { return ws[row[a]].Box.Min.X < ws[row[b]].Box.Min.X })
		sortedRows[k] = row
	}
	return sortedRows
}

func cy(r image.Rectangle) float64 { return float64(r.Min.Y+r.Max.Y) / 2 }

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// median returns the median of pix (255 when empty).
func median(pix []uint8) uint8 { return darkestLevel(pix, 0.5) }
