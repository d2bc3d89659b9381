package imagequality

import (
	"image"
	"image/color"
	"image/draw"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSharpCardPasses(t *testing.T) {
	res := NewGate(DefaultThresholds()).Assess(syntheticCard(1280, 800), Document)
	if !res.Passed || res.Reasons == nil || len(res.Reasons) != 0 {
		t.Fatalf("sharp card: %+v, want passed with empty reasons", res)
	}
	if res.Framing != FramingOK || res.Width != 1280 || res.Height != 800 {
		t.Fatalf("sharp card: %+v", res)
	}
	if res.Blur < 2*DefaultThresholds().MinBlur {
		t.Errorf("sharp card blur %.1f is not clearly above the threshold", res.Blur)
	}
}

func TestBlurredCardIsBlurry(t *testing.T) {
	img := syntheticCard(1280, 800)
	boxBlur(img, 3) // ≈ Gaussian σ 3.5 px
	res := NewGate(DefaultThresholds()).Assess(img, Document)
	if res.Passed || !slices.Equal(res.Reasons, []string{ReasonBlurry}) {
		t.Fatalf("blurred card: %+v, want only %q", res, ReasonBlurry)
	}
}

func TestBlurScoreIsResolutionIndependent(t *testing.T) {
	g := NewGate(DefaultThresholds())
	small := g.Assess(syntheticCard(1280, 800), Document).Blur
	large := g.Assess(syntheticCard(2560, 1600), Document).Blur
	if ratio := large / small; ratio < 0.7 || ratio > 1.4 {
		t.Fatalf("blur at 1280 px %.1f vs at 2560 px %.1f: ratio %.2f, want within 0.7..1.4", small, large, ratio)
	}
}

// A flat white area with sharp edges (a label, a white MRZ zone, a white card) is not glare,
// however large.
func TestWhitePatchIsNotGlare(t *testing.T) {
	img := syntheticCard(1280, 800)
	fillRect(img, image.Rect(500, 200, 800, 450), color.RGBA{255, 255, 255, 255}) // 7.3 % of the frame
	res := NewGate(DefaultThresholds()).Assess(img, Document)
	if !res.Passed || res.Glare != 0 {
		t.Fatalf("white patch: %+v, want passed with glare 0", res)
	}
}

// A specular highlight (a saturated core with a smooth halo) over the text is glare.
func TestSpecularSpotIsGlare(t *testing.T) {
	img := syntheticCard(1280, 800)
	specular(img, 700, 330, 25, 450)
	res := NewGate(DefaultThresholds()).Assess(img, Document)
	if res.Passed || !slices.Equal(res.Reasons, []string{ReasonGlare}) {
		t.Fatalf("specular spot: %+v, want only %q", res, ReasonGlare)
	}
	if res.Glare <= DefaultThresholds().MaxGlare {
		t.Errorf("glare = %.4f, want above MaxGlare", res.Glare)
	}
}

func TestSmallHighlightsAreNotGlare(t *testing.T) {
	img := syntheticCard(1280, 800)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 400 { // 400 specks of 4×4 px: 0.6 % of the frame, but no large region
		x, y := rng.IntN(1270), rng.IntN(790)
		fillRect(img, image.Rect(x, y, x+4, y+4), color.RGBA{255, 255, 255, 255})
	}
	res := NewGate(DefaultThresholds()).Assess(img, Document)
	if res.Glare != 0 || !res.Passed {
		t.Fatalf("specks: %+v, want glare 0 and passed", res)
	}
}

func TestDarkImageIsTooDark(t *testing.T) {
	img := syntheticCard(1280, 800)
	scaleBrightness(img, 0.12)
	res := NewGate(DefaultThresholds()).Assess(img, Selfie)
	if res.Passed || !slices.Contains(res.Reasons, ReasonTooDark) || res.Brightness >= 40 {
		t.Fatalf("dark image: %+v, want %q", res, ReasonTooDark)
	}
}

func TestOverexposedImageIsGlare(t *testing.T) {
	img := syntheticCard(1280, 800)
	for y := range 800 {
		for x := range 1280 {
			c := img.RGBAAt(x, y)
			img.SetRGBA(x, y, color.RGBA{min(248, c.R/4+200), min(248, c.G/4+200), min(248, c.B/4+200), 255})
		}
	}
	res := NewGate(DefaultThresholds()).Assess(img, Document)
	if res.Glare != 0 || !slices.Contains(res.Reasons, ReasonGlare) {
		t.Fatalf("washed-out image (no saturated pixel): %+v, want %q from brightness", res, ReasonGlare)
	}
}

func TestTinyImageIsNotFramed(t *testing.T) {
	res := NewGate(DefaultThresholds()).Assess(syntheticCard(320, 200), Document)
	if res.Passed || res.Framing != FramingNotFramed || !slices.Contains(res.Reasons, ReasonNotFramed) {
		t.Fatalf("tiny image: %+v, want %q", res, ReasonNotFramed)
	}
}

func TestPortraitMeetsMinimumSize(t *testing.T) {
	res := NewGate(DefaultThresholds()).Assess(syntheticCard(480, 640), Selfie)
	if res.Framing != FramingOK || slices.Contains(res.Reasons, ReasonNotFramed) {
		t.Fatalf("480×640 portrait: %+v, want framing ok", res)
	}
}

func TestDegenerateImages(t *testing.T) {
	g := NewGate(DefaultThresholds())
	for name, img := range map[string]image.Image{
		"nil":    nil,
		"empty":  image.NewRGBA(image.Rect(0, 0, 0, 0)),
		"1x1":    image.NewGray(image.Rect(0, 0, 1, 1)),
		"1x5000": image.NewGray(image.Rect(0, 0, 1, 5000)),
		"5000x1": image.NewGray(image.Rect(0, 0, 5000, 1)),
	} {
		res := g.Assess(img, Document)
		if res.Passed || !slices.Contains(res.Reasons, ReasonNotFramed) {
			t.Errorf("%s: %+v, want not_framed", name, res)
		}
	}
}

// Every pixel layout the decoders produce must give the same scores as the RGBA path.
func TestPixelLayoutsAgree(t *testing.T) {
	src := syntheticCard(1280, 800)
	b := src.Bounds()
	gray := image.NewGray(b)
	ycc := image.NewYCbCr(b, image.YCbCrSubsampleRatio444)
	nrgba := image.NewNRGBA(b)
	pal := image.NewPaletted(b, color.Palette{color.Black, color.White, color.RGBA{28, 28, 40, 255},
		color.RGBA{85, 78, 70, 255}, color.RGBA{222, 216, 200, 255}, color.RGBA{150, 130, 110, 255}})
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := src.RGBAAt(x, y)
			gray.Set(x, y, c)
			nrgba.Set(x, y, c)
			yy, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
			ycc.Y[ycc.YOffset(x, y)], ycc.Cb[ycc.COffset(x, y)], ycc.Cr[ycc.COffset(x, y)] = yy, cb, cr
		}
	}
	g := NewGate(DefaultThresholds())
	want := g.Assess(src, Document)
	for name, img := range map[string]image.Image{"gray": gray, "nrgba": nrgba, "ycbcr": ycc} {
		got := g.Assess(img, Document)
		if d := got.Brightness - want.Brightness; d > 1 || d < -1 {
			t.Errorf("%s brightness %.2f, rgba %.2f", name, got.Brightness, want.Brightness)
		}
		if r := got.Blur / want.Blur; r < 0.97 || r > 1.03 {
			t.Errorf("%s blur %.1f, rgba %.1f", name, got.Blur, want.Blur)
		}
	}
	// A sub-image (non-zero origin) goes through the same fast path.
	sub := src.SubImage(image.Rect(100, 100, 1100, 700))
	if res := g.Assess(sub, Document); res.Width != 1000 || res.Height != 600 || res.Blur <= 0 {
		t.Errorf("sub-image: %+v", res)
	}
	draw := func(dst *image.Paletted) {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				dst.Set(x, y, src.At(x, y))
			}
		}
	}
	draw(pal)
	if res := g.Assess(pal, Document); res.Blur < DefaultThresholds().MinBlur {
		t.Errorf("paletted (generic path): %+v, want sharp", res)
	}
}

func BenchmarkAssess(b *testing.B) {
	img := syntheticCard(1920, 1080)
	g := NewGate(DefaultThresholds())
	b.ReportAllocs()
	for b.Loop() {
		g.Assess(img, Document)
	}
}

// TestLitCardOnADarkTable: a well-lit card on a near-black table, the frame's mean luma under
// MinBrightness, is judged by the card's own brightness and passes; the same capture with
// all its light cut to a fifth is still too dark.
func TestLitCardOnADarkTable(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 1600, 1200))
	fillRect(img, img.Bounds(), color.RGBA{10, 10, 12, 255})
	card := syntheticCard(640, 400)
	draw.Draw(img, image.Rect(480, 400, 1120, 800), card, image.Point{}, draw.Src)
	g := NewGate(DefaultThresholds())
	res := g.Assess(img, Document)
	if res.Brightness >= g.Thresholds().MinBrightness {
		t.Fatalf("frame brightness %.1f, want the scene under %.0f", res.Brightness, g.Thresholds().MinBrightness)
	}
	if !res.Passed {
		t.Errorf("lit card on a dark table: %v, want passed", res.Reasons)
	}
	scaleBrightness(img, 0.2)
	if res := g.Assess(img, Document); !slices.Contains(res.Reasons, ReasonTooDark) {
		t.Errorf("whole capture dimmed: %v, want too_dark", res.Reasons)
	}
}
