package docread

import (
	"image"
	"image/color"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"

	"github.com/idstream/idstream/internal/mrz"
)

// TestZoneColumns: a zone read glyph by glyph comes back row by row, each glyph in the
// column of the grid it is printed in.
func TestZoneColumns(t *testing.T) {
	want := []string{"IDVNM1940550134079194055013<<<", "9409178F3409176VNM<<<<<<<<<<<0", "LUU<<MY<NGAN<<<<<<<<<<<<<<<<<<"}
	face := ocrbFace(t, 34)
	band := image.NewGray(image.Rect(0, 0, 1200, 230))
	for i := range band.Pix {
		band.Pix[i] = 255
	}
	d := font.Drawer{Dst: band, Src: image.NewUniform(color.Gray{Y: 0}), Face: face}
	for i, l := range want {
		d.Dot = fixed.P(40, 60+i*60)
		d.DrawString(l)
	}
	rows, err := testReader(t).zoneColumns(band, 3, 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for i, row := range rows {
		var got strings.Builder
		for _, col := range row {
			if len(col) != 1 {
				t.Fatalf("row %d: a column with %d glyphs: %+v", i, len(col), row)
			}
			got.WriteByte(col[0].c)
		}
		if got.String() != want[i] {
			t.Errorf("row %d by column %q, want %q", i, got.String(), want[i])
		}
	}
}

// TestNameFromColumns: the name line of a chip card's zone read "IIUIUL<<MY<NGAN" for
// LUU<<MY<NGAN (each U read as an I and a U, the zone then padded by its filler run) is
// mended from its glyphs by column: two glyphs were read in each of the surname's three
// columns (doc00421 of the evaluation corpus of seed 60606, as Tesseract read it), and
// the one name the columns spell a look-alike away is LUU. A name with a column read as
// nothing stays as read.
func TestNameFromColumns(t *testing.T) {
	read := []string{"IDVNM1940550134079194055013<<<", "9409178F3409176VNM<<<<<<<<<<<0", "IIUIUL<<MY<NGAN<<<<<<<<<<<<<<<"}
	m, err := mrz.Parse(read)
	if err != nil || !m.Valid || !misreadName(m) {
		t.Fatalf("zone as read: %+v, %v; want it valid with a misread name", m, err)
	}
	printed := func(s string) [][]glyph {
		cols := make([][]glyph, len(s))
		for i := range len(s) {
			cols[i] = []glyph{{s[i], 99}}
		}
		return cols
	}
	name := printed("LUU<<MY<NGAN<<<<<<<<<<<<<<<<<<")
	name[0] = []glyph{{'I', 91}, {'1', 98}}
	name[1] = []glyph{{'U', 95}, {'I', 88}}
	name[2] = []glyph{{'U', 81}, {'L', 87}}
	rows := [][][]glyph{printed(read[0]), printed(read[1]), name}
	got := nameFromColumns(m, rows)
	if got.Lines[2] != "LUU<<MY<NGAN<<<<<<<<<<<<<<<<<<" || got.Surname != "LUU" || !got.Valid {
		t.Errorf("mended zone %q (surname %q, valid %v), want the name LUU MY NGAN", got.Lines, got.Surname, got.Valid)
	}
	lost := slices.Clone(name)
	lost[1] = nil
	if got := nameFromColumns(m, [][][]glyph{rows[0], rows[1], lost}); got != m {
		t.Errorf("a name with a column read as nothing became %q, want it as read", got.Lines)
	}
}

// TestZoneShapes: a zone's line is a row of glyphs across the band (a card's, at the size it
// has on a card rectified to 1200 pixels); a line of text of the same size across a third
// of it, or scattered marks, is not; a tinted zone thresholded to a block of ink is a block.
func TestZoneShapes(t *testing.T) {
	zoneRow := func(g *image.Gray) bool { rows, _ := zoneShapes(g); return rows }
	face := ocrbFace(t, 58)
	band := func(text string, x int) *image.Gray {
		g := image.NewGray(image.Rect(0, 0, 1200, 120))
		for i := range g.Pix {
			g.Pix[i] = 255
		}
		d := font.Drawer{Dst: g, Src: image.NewUniform(color.Gray{Y: 0}), Face: face, Dot: fixed.P(x, 70)}
		d.DrawString(text)
		return g
	}
	if !zoneRow(band("9409178F3409176VNM<<<<<<<<<<<0", 40)) {
		t.Errorf("a zone's line is not a zone's row")
	}
	if zoneRow(band("NGAY 12 THANG 09", 600)) {
		t.Errorf("a line of text across a third of the band is a zone's row")
	}
	if zoneRow(band("NGUYENVANANHCUCTRUONG", 40)) {
		t.Errorf("21 glyphs across three fifths of the band are a zone's row")
	}
	askew := band("", 0)
	d := font.Drawer{Dst: askew, Src: image.NewUniform(color.Gray{Y: 0}), Face: face}
	for i, c := range "9409178F3409176VNM<<<<<<<<<<<0" { // 1.5 degrees askew: 0.94 px down per glyph
		d.Dot = fixed.P(40+i*36, 60+i*36*2618/100000)
		d.DrawString(string(c))
	}
	if !zoneRow(askew) {
		t.Errorf("a zone's line 1.5 degrees askew is not a zone's row")
	}
	if zoneRow(band("I  I  I  I  I  I  I  I  I  I", 40)) {
		t.Errorf("ten marks across the band are a zone's row")
	}
	if _, block := zoneShapes(band("9409178F3409176VNM<<<<<<<<<<<0", 40)); block {
		t.Errorf("a zone's line on white is a block of ink")
	}
	dark := band("", 0)
	for y := 20; y < 100; y++ {
		for x := 60; x < 1140; x++ {
			dark.Pix[y*dark.Stride+x] = 0
		}
	}
	if rows, block := zoneShapes(dark); rows || !block {
		t.Errorf("a block of ink across the band: rows %v, block %v; want a block and no row", rows, block)
	}
}
