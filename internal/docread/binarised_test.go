package docread

import (
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"

	"github.com/idstream/idstream/internal/cardrender"
)

// guillocheCard draws a 1200 × 756 card whose paper (205) carries a guilloche, waves of a
// grey of level under every 7 px, with rows of small print on it (at 185, Tesseract's
// global threshold reads none of them).
func guillocheCard(t *testing.T, under uint8, rows []string) *image.Gray {
	t.Helper()
	face, err := cardrender.LoadFace(cardrender.DefaultSansFont, 17)
	if err != nil {
		t.Skipf("font: %v", err)
	}
	img := image.NewGray(image.Rect(0, 0, 1200, 756))
	for y := range 756 {
		for x := range 1200 {
			v := uint8(205)
			if phase := math.Mod(float64(y)+6*math.Sin(float64(x)/23), 7); phase < 1.6 {
				v = under
			}
			img.Pix[y*img.Stride+x] = v
		}
	}
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.Gray{Y: 70}), Face: face}
	for i, r := range rows {
		d.Dot = fixed.P(60, 240+i*40)
		d.DrawString(r)
	}
	return img
}

// TestSmallPrintOnAGuillocheReadBinarised: rows of small print on a guilloche of mid grey,
// which the page's global threshold takes in with the print, read when the page is
// thresholded locally.
func TestSmallPrintOnAGuillocheReadBinarised(t *testing.T) {
	r := testReader(t)
	img := guillocheCard(t, 185, []string{"Tên chủ xe: CAO ĐÌNH GIANG", "Địa chỉ: Tổ 28, Phường Suối Hoa, Bắc Ninh", "Nhãn hiệu: HYUNDAI   Số loại: ACCENT"})
	page, err := r.ReadPage(img, 1200, 756)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := r.ReadBinarised(page)
	if err != nil {
		t.Fatal(err)
	}
	if text := bin.Text(); !strings.Contains(text, "CAO ĐÌNH GIANG") || !strings.Contains(text, "ACCENT") {
		t.Errorf("thresholded locally: %q, want the owner and the model (globally: %q)", text, page.Text())
	}
}
