package quality

import (
	"math"
	"testing"
)

// shadowCard returns a 640×480 luma plane of a light card (200) on a table of the same
// light (200): only the soft shadow along three of its sides (the top, the right and the
// bottom, 6 px of 120) shows it; its left side has no edge at all. The card's corners are
// returned too. shift moves the card left by that many pixels (to cut it by the frame).
func shadowCard(shift float64) (plane, [4][2]float64) {
	const w, h = 640, 480
	p := plane{w: w, h: h, pix: make([]float32, w*h)}
	x0, y0, x1, y1 := 150-shift, 130.0, 150-shift+340, 130.0+214 // ID-1 shape
	for y := range h {
		for x := range w {
			fx, fy := float64(x), float64(y)
			v := float32(200)
			inCard := fx >= x0 && fx < x1 && fy >= y0 && fy < y1
			inShadow := !inCard && fx >= x0 && fx < x1+6 && fy >= y0-6 && fy < y1+6
			if inShadow {
				v = 120
			}
			// a little texture so that the plane is not flat
			v += float32(3 * math.Sin(fx*0.7+fy*1.3))
			p.pix[y*w+x] = v
		}
	}
	return p, [4][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
}

// TestDocumentWithAnUnseenSide: a card whose left side shows no edge is framed from its
// three seen sides, its corners where the card's are; the same card cut by the frame's
// left edge (its seen sides running off the picture) is not taken as framed.
func TestDocumentWithAnUnseenSide(t *testing.T) {
	p, truth := shadowCard(0)
	d := locateDocument(p, p.w, p.h, DefaultThresholds().MinDocumentArea)
	if d.verdict != docFramed {
		t.Fatalf("card with an unseen side: verdict %d, want framed (%d)", d.verdict, docFramed)
	}
	if e := quadError(d.quad, truth); e > 12 {
		t.Errorf("corners %s, truth %s: off by %.1f px", fmtQuad(d.quad), fmtQuad(truth), e)
	}
	p, _ = shadowCard(200)
	if d := locateDocument(p, p.w, p.h, DefaultThresholds().MinDocumentArea); d.verdict == docFramed {
		t.Errorf("card cut by the frame's left edge taken as framed: %s", fmtQuad(d.quad))
	}
}
