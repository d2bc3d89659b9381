package docread

import (
	"cmp"
	"fmt"
	"image"
	"math"
	"slices"
	"strings"

	"github.com/otiai10/gosseract/v2"

	"github.com/idstream/idstream/internal/mrz"
)

// A zone is printed in one monospace grid: every line holds its format's number of
// characters, each in its column. Read as text, a glyph of the name line read twice ("IIUIUL"
// for LUU: each U read as "IU") or a filler run miscounted shifts everything after it, and
// nothing tells where (the name line has no check digit). Read glyph by glyph, each glyph's
// box says its column: two glyphs in one column are one glyph read twice, and the name's
// words come back at their length.

// glyph is one character Tesseract read in a zone, with its confidence (0–100).
type glyph struct {
	c    byte
	conf float64
}

// zoneColumns reads band (the binarised band a zone was read from) again glyph by glyph and
// returns the glyphs of its last `lines` rows of print, each row by column of the zone's grid
// of n columns; nil when the band shows fewer rows, or no row of exactly n glyphs gives the
// grid's origin and pitch. The error is only for OCR engine failures.
func (r *Reader) zoneColumns(band *image.Gray, lines, n int) ([][][]glyph, error) {
	c := <-r.pools[engineMRZ]
	defer func() { r.pools[engineMRZ] <- c }()
	if err := c.SetPageSegMode(gosseract.PSM_SINGLE_BLOCK); err != nil {
		return nil, fmt.Errorf("ocr: page segmentation: %w", err)
	}
	if err := c.SetImageFromBytes(pgm(band)); err != nil {
		return nil, fmt.Errorf("ocr: set image: %w", err)
	}
	syms, err := c.GetBoundingBoxes(gosseract.RIL_SYMBOL)
	if err != nil {
		return nil, fmt.Errorf("ocr: recognise glyphs: %w", err)
	}
	type sym struct {
		g      glyph
		cx, cy float64
		h      int
	}
	var all []sym
	for _, s := range syms {
		if len(s.Word) != 1 || !strings.Contains(mrzAlphabet, s.Word) {
			continue
		}
		b := s.Box
		all = append(all, sym{glyph{s.Word[0], s.Confidence}, float64(b.Min.X+b.Max.X) / 2, float64(b.Min.Y+b.Max.Y) / 2, b.Dy()})
	}
	if len(all) == 0 {
		return nil, nil
	}
	// Rows: glyphs whose middles lie within 0.6 of a glyph's height of the row's first.
	slices.SortFunc(all, func(a, b sym) int { return cmp.Compare(a.cy, b.cy) })
	var rows [][]sym
	for _, s := range all {
		if k := len(rows) - 1; k >= 0 && s.cy-rows[k][0].cy < 0.6*float64(s.h) {
			rows[k] = append(rows[k], s)
			continue
		}
		rows = append(rows, []sym{s})
	}
	var zone [][]sym
	for _, row := range rows {
		if len(row) >= n/2 {
			zone = append(zone, row)
		}
	}
	if len(zone) < lines {
		return nil, nil
	}
	zone = zone[len(zone)-lines:]
	var origins, pitches []float64
	for _, row := range zone {
		if len(row) != n {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range row {
			lo, hi = min(lo, s.cx), max(hi, s.cx)
		}
		origins, pitches = append(origins, lo), append(pitches, (hi-lo)/float64(n-1))
	}
	if len(origins) == 0 {
		return nil, nil
	}
	slices.Sort(origins)
	slices.Sort(pitches)
	origin, pitch := origins[len(origins)/2], pitches[len(pitches)/2]
	if pitch <= 0 {
		return nil, nil
	}
	out := make([][][]glyph, lines)
	for i, row := range zone {
		out[i] = make([][]glyph, n)
		for _, s := range row {
			if k := int(math.Round((s.cx - origin) / pitch)); k >= 0 && k < n {
				out[i][k] = append(out[i][k], s.g)
			}
		}
	}
	return out, nil
}

// misreadName reports whether a Vietnamese document's zone has a word in its name that is
// no syllable (what its glyphs, read again by column, may mend: nameFromColumns).
func misreadName(m *mrz.MRZ) bool {
	if m == nil || m.IssuingState != "VNM" {
		return false
	}
	line, from := nameField(m)
	if line >= len(m.Lines) || from > len(m.Lines[line]) {
		return false
	}
	for _, w := range strings.Split(m.Lines[line][from:], "<") {
		if w != "" && !isSyllable(w) {
			return true
		}
	}
	return false
}

// nameFromColumns returns m with its name field rebuilt from the zone's glyphs by column
// (zoneColumns, one row per line of m): each word at the length its columns give, as the one
// name syllable (isSyllable, isNameWord) the glyphs read in its columns spell, or, failing
// that, the one such syllable a look-alike away (nameSyllable); m itself when a column of
// the name was read as nothing, a word spells no name or more than one, or nothing changes.
func nameFromColumns(m *mrz.MRZ, rows [][][]glyph) *mrz.MRZ {
	line, from := nameField(m)
	if len(rows) != len(m.Lines) || line >= len(rows) || from > len(m.Lines[line]) || len(rows[line]) != len(m.Lines[line]) {
		return m
	}
	cols := rows[line]
	best := func(k int) byte {
		return asLetter(slices.MaxFunc(cols[k], func(a, b glyph) int { return cmp.Compare(a.conf, b.conf) }).c)
	}
	out := []byte(m.Lines[line][:from])
	for k := from; k < len(cols); {
		if len(cols[k]) == 0 {
			return m
		}
		if best(k) == '<' {
			out = append(out, '<')
			k++
			continue
		}
		e := k
		for e < len(cols) && len(cols[e]) > 0 && best(e) != '<' {
			e++
		}
		w, ok := columnWord(cols[k:e])
		if !ok {
			return m
		}
		out = append(out, w...)
		k = e
	}
	if string(out) == m.Lines[line] {
		return m
	}
	lines := slices.Clone(m.Lines)
	lines[line] = string(out)
	fixed, err := mrz.Parse(lines)
	if err != nil || fixed.Valid != m.Valid {
		return m
	}
	return fixed
}

// maxColumnWords bounds the spellings columnWord tries.
const maxColumnWords = 512

// columnWord returns the one name syllable the glyphs of a word's columns spell, taking one
// glyph (a digit as its letter) of each column; else the one a look-alike away from a
// spelling (zoneLookAlikes), else two; false when there is none or more than one at the
// nearest distance, or too many spellings to try.
func columnWord(cols [][]glyph) (string, bool) {
	words := []string{""}
	for _, col := range cols {
		var opts []byte
		for _, g := range col {
			c := asLetter(g.c)
			if c >= 'A' && c <= 'Z' && !slices.Contains(opts, c) {
				opts = append(opts, c)
			}
		}
		if len(opts) == 0 || len(words)*len(opts) > maxColumnWords {
			return "", false
		}
		next := make([]string, 0, len(words)*len(opts))
		for _, w := range words {
			for _, c := range opts {
				next = append(next, w+string(c))
			}
		}
		words = next
	}
	for away := 0; ; away++ {
		found := map[string]bool{}
		var last string
		for _, w := range words {
			if isSyllable(w) && isNameWord(w) {
				found[w], last = true, w
			}
		}
		if len(found) > 0 {
			return last, len(found) == 1
		}
		if away == 2 {
			return "", false
		}
		var next []string
		for _, w := range words {
			if next = append(next, lookAlikes(w)...); len(next) > maxColumnWords*16 {
				return "", false
			}
		}
		words = next
	}
}
