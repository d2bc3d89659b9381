package ocr

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// TestDocumentFoundByHue: a pale blue card on a cream table of the same brightness has no
// edge in grey; the document is found by its hue, as the quality gate finds it, and not left
// to the bright-region fallback that a picture in grey gets.
func TestDocumentFoundByHue(t *testing.T) {
	const w, h = 1200, 900
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	table := color.RGBA{226, 214, 168, 255} // luma 212
	card := color.RGBA{200, 214, 236, 255}  // luma 212
	want := quad{{180, 150}, {1020, 150}, {1020, 680}, {180, 680}}
	for y := range h {
		for x := range w {
			c := table
			if x >= 180 && x < 1020 && y >= 150 && y < 680 {
				c = card
				if y%60 >= 40 && y%60 < 48 && x >= 240 && x < 700 && y < 600 {
					c = color.RGBA{40, 40, 50, 255} // rows of print
				}
			}
			img.SetRGBA(x, y, c)
		}
	}
	got := findDocument(img, toGray(img))
	for k := range 4 {
		if d := math.Hypot(got[k][0]-want[k][0], got[k][1]-want[k][1]); d > 20 {
			t.Fatalf("document found at %v, want about %v", got, want)
		}
	}
}
