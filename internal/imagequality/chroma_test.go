package imagequality

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"testing"
)

// hueCard returns an 800×600 picture of a bluish card on a beige table of the same luma
// (181 and 180), with some print on the card, as RGBA and as the JPEG a phone would send,
// and the card's corners.
func hueCard(t *testing.T) (image.Image, image.Image, [4][2]float64) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 800, 600))
	x0, y0, x1, y1 := 180.0, 150.0, 180.0+440, 150.0+277 // ID-1 shape
	for y := range 600 {
		for x := range 800 {
			fx, fy := float64(x), float64(y)
			c := color.RGBA{190, 180, 165, 255} // beige table
			if fx >= x0 && fx < x1 && fy >= y0 && fy < y1 {
				c = color.RGBA{160, 186, 205, 255} // bluish card
				// lines of print
				if int(fy-y0)%28 < 6 && fx > x0+40 && fx < x1-60 && fy > y0+30 && fy < y1-30 {
					c = color.RGBA{40, 40, 60, 255}
				}
			}
			n := uint8(2 + 2*math.Sin(fx*0.9+fy*1.7)) // a little texture
			img.Set(x, y, color.RGBA{c.R + n, c.G + n, c.B + n, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	dec, err := jpeg.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return img, dec, [4][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
}

// TestCardOfTheTablesLightButAnotherHue: a card as bright as its table but of another hue
// has no luma edges to be found by; the chroma passes find it, in an RGB picture and in a
// JPEG (its own subsampled chroma), corners where the card's are.
func TestCardOfTheTablesLightButAnotherHue(t *testing.T) {
	rgb, jpg, truth := hueCard(t)
	p := downscaleLuma(rgb, WorkingWidth)
	if d := locateDocument(p, nil, 800, 600, DefaultThresholds().MinDocumentArea); d.verdict == docFramed {
		t.Fatalf("luma alone framed the card (%s): the test shows nothing", fmtQuad(d.quad))
	}
	for name, img := range map[string]image.Image{"rgb": rgb, "jpeg": jpg} {
		res := NewGate(DefaultThresholds()).Assess(img, Document)
		if res.Framing != FramingOK {
			t.Errorf("%s: framing %v (reasons %v), want ok", name, res.Framing, res.Reasons)
			continue
		}
		if e := quadError(res.Document, truth); e > 12 {
			t.Errorf("%s: document at %s, truth %s: a corner %.0f px off", name, fmtQuad(res.Document), fmtQuad(truth), e)
		}
	}
}
