package imagequality

import (
	"image"
	"image/color"
	"slices"
	"testing"

	"github.com/idstream/idstream/internal/cardrender"
)

// scene photographs the chip ID front on bg in a 1280×960 frame, as s (size and background
// filled in) says.
func scene(t *testing.T, s cardrender.Scene) (image.Image, [4][2]float64) {
	t.Helper()
	s.Width, s.Height = 1280, 960
	s.NoiseStdDev, s.JPEGQuality = 3, 85
	img, corners, err := cardrender.Place(documentRenders(t)["id-front"], s, 9)
	if err != nil {
		t.Fatal(err)
	}
	return img, corners
}

func TestCardInTheFramePasses(t *testing.T) {
	img, truth := scene(t, cardrender.Scene{Background: cardrender.Wood, CenterX: 0.5, CenterY: 0.5, Scale: 0.7, RotationDeg: 8, Skew: 0.03})
	res := NewGate(DefaultThresholds()).Assess(img, Document)
	if !res.Passed || res.Framing != FramingOK || len(res.Reasons) != 0 {
		t.Fatalf("card in the frame: %+v, want passed", res)
	}
	if e := quadError(res.Document, truth); e > 12 {
		t.Errorf("document found at %s, truth %s: a corner %.0f px off", fmtQuad(res.Document), fmtQuad(truth), e)
	}
	if res.DocumentArea < 0.37 || res.DocumentArea > 0.46 { // 0.7² / 1.587 × 4/3 ≈ 0.41 of the frame
		t.Errorf("document area %.3f, want about 0.41", res.DocumentArea)
	}
}

func TestCutOffCardIsNotFramed(t *testing.T) {
	for name, s := range map[string]cardrender.Scene{
		"left edge":    {CenterX: 0.15, CenterY: 0.5, Scale: 0.6},
		"bottom edge":  {CenterX: 0.5, CenterY: 0.9, Scale: 0.6, RotationDeg: -4},
		"one corner":   {CenterX: 0.75, CenterY: 0.72, Scale: 0.6, RotationDeg: 10},
		"too close":    {CenterX: 0.5, CenterY: 0.5, Scale: 1.1},
		"light table":  {Background: cardrender.LightTable, CenterX: 0.85, CenterY: 0.5, Scale: 0.6},
		"fabric, left": {Background: cardrender.Fabric, CenterX: 0.2, CenterY: 0.45, Scale: 0.65, RotationDeg: 3},
	} {
		img, _ := scene(t, s)
		res := NewGate(DefaultThresholds()).Assess(img, Document)
		if res.Passed || res.Framing != FramingNotFramed || !slices.Equal(res.Reasons, []string{ReasonNotFramed}) {
			t.Errorf("%s: %+v, want only %q", name, res, ReasonNotFramed)
		}
	}
}

func TestFarAwayCardIsNotFramed(t *testing.T) {
	img, _ := scene(t, cardrender.Scene{Background: cardrender.DarkSmooth, CenterX: 0.4, CenterY: 0.6, Scale: 0.3, RotationDeg: -6})
	res := NewGate(DefaultThresholds()).Assess(img, Document)
	if res.Passed || !slices.Equal(res.Reasons, []string{ReasonNotFramed}) {
		t.Fatalf("card at 30 %% of the width: %+v, want only %q", res, ReasonNotFramed)
	}
	if res.DocumentArea > 0.1 {
		t.Errorf("far card's area %.3f, want about 0.07", res.DocumentArea)
	}
}

func TestNoDocument(t *testing.T) {
	for _, bg := range backgrounds {
		img, _, err := cardrender.Place(nil, cardrender.Scene{Width: 1600, Height: 1200, Background: bg.bg, NoiseStdDev: 3, JPEGQuality: 85}, 4)
		if err != nil {
			t.Fatal(err)
		}
		res := NewGate(DefaultThresholds()).Assess(img, Document)
		if res.Passed || res.Framing != FramingNotFramed || !slices.Contains(res.Reasons, ReasonNoDocument) || slices.Contains(res.Reasons, ReasonNotFramed) {
			t.Errorf("%s surface: %+v, want %q", bg.name, res, ReasonNoDocument)
		}
		// A selfie is not searched for a document.
		if res := NewGate(DefaultThresholds()).Assess(img, Selfie); slices.Contains(res.Reasons, ReasonNoDocument) {
			t.Errorf("%s surface as a selfie: %+v", bg.name, res)
		}
	}
}

// A picture already cropped to the document (its own shape a card's or a passport page's)
// passes framing: the document's sides are the frame's.
func TestCroppedDocumentPasses(t *testing.T) {
	g := NewGate(DefaultThresholds())
	for name, img := range documentRenders(t) {
		res := g.Assess(img, Document)
		if !res.Passed || res.Framing != FramingOK || res.DocumentArea != 1 {
			t.Errorf("%s cropped: %+v, want passed with the whole frame as the document", name, res)
		}
	}
	// A blank picture of a card's shape has nothing to frame: it is only blurry.
	blank := image.NewRGBA(image.Rect(0, 0, 1000, 630))
	fillRect(blank, blank.Bounds(), color.RGBA{200, 200, 200, 255})
	if res := g.Assess(blank, Document); !slices.Equal(res.Reasons, []string{ReasonBlurry}) {
		t.Errorf("blank card-shaped picture: %+v, want only %q", res, ReasonBlurry)
	}
}

func TestFramingCheckCanBeTurnedOff(t *testing.T) {
	th := DefaultThresholds()
	th.MinDocumentArea = 0
	img, _, err := cardrender.Place(nil, cardrender.Scene{Width: 1280, Height: 960, Background: cardrender.Wood}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res := NewGate(th).Assess(img, Document); res.Framing != FramingOK || slices.Contains(res.Reasons, ReasonNoDocument) {
		t.Fatalf("framing off: %+v, want framing ok", res)
	}
}
