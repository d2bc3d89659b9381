package docread

import (
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/otiai10/gosseract/v2"
	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"

	"github.com/idstream/idstream/internal/cardrender"
)

// TestRowsCutByTheOutlineReadGrown: a document outlined on a line of its own print, a tenth
// of its height below its top, loses the row above that line; the page read again with the
// outline grown holds it.
func TestRowsCutByTheOutlineReadGrown(t *testing.T) {
	face, err := cardrender.LoadFace(cardrender.DefaultSansFont, 30)
	if err != nil {
		t.Skipf("font: %v", err)
	}
	r := testReader(t)
	img := image.NewGray(image.Rect(0, 0, 1600, 1200))
	for i := range img.Pix {
		img.Pix[i] = 90 // the table
	}
	card := image.Rect(200, 200, 1400, 956) // 1200 × 756
	for y := card.Min.Y; y < card.Max.Y; y++ {
		for x := card.Min.X; x < card.Max.X; x++ {
			img.Pix[y*img.Stride+x] = 225
		}
	}
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.Gray{Y: 30}), Face: face}
	for i, row := range []string{"Nơi cư trú: Thôn Hạ, Xã Cao Xá", "Ngày cấp: 07/04/2025", "Họ và tên: NGUYỄN NGỌC HUY"} {
		d.Dot = fixed.P(260, 260+i*120)
		d.DrawString(row)
	}
	// Outlined from just under the first row: 80 px of the card's 756 are cut off at the top.
	inner := quad{{200, 280}, {1400, 280}, {1400, 956}, {200, 956}}
	src := source{g: img, q: inner, top: 1}
	doc, clean := src.prepare(1200, 676)
	page, err := r.readPage(doc, clean, gosseract.PSM_AUTO, src)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.Text(), "Thôn") {
		t.Fatalf("the cut page reads the first row: %q", page.Text())
	}
	grown, err := r.ReadGrown(page)
	if err != nil {
		t.Fatal(err)
	}
	if text := grown.Text(); !strings.Contains(text, "Thôn Hạ") || !strings.Contains(text, "NGUYỄN NGỌC HUY") {
		t.Errorf("grown page: %q, want the first row and the name", text)
	}
}

// TestCutOff: three words on the page's top edge are a row cut by the outline; words
// inside are not.
func TestCutOff(t *testing.T) {
	p := &Page{Width: 1200, Height: 756, Words: append(wordsInRow(40, 0, "Thôn", "Hạ,", "Xã"), wordsInRow(40, 100, "Ngày", "cấp")...)}
	if !p.CutOff() {
		t.Error("a row on the top edge: not cut off")
	}
	p.Words = wordsInRow(40, 100, "Ngày", "cấp", "07/04/2025")
	if p.CutOff() {
		t.Error("rows inside the page: cut off")
	}
}
