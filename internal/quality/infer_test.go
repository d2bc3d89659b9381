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
	d := locateDocument(p, nil, p.w, p.h, DefaultThresholds().MinDocumentArea)
	if d.verdict != docFramed {
		t.Fatalf("card with an unseen side: verdict %d, want framed (%d)", d.verdict, docFramed)
	}
	if e := quadError(d.quad, truth); e > 12 {
		t.Errorf("corners %s, truth %s: off by %.1f px", fmtQuad(d.quad), fmtQuad(truth), e)
	}
	p, _ = shadowCard(200)
	if d := locateDocument(p, nil, p.w, p.h, DefaultThresholds().MinDocumentArea); d.verdict == docFramed {
		t.Errorf("card cut by the frame's left edge taken as framed: %s", fmtQuad(d.quad))
	}
}

// cornerCard returns a 640×480 luma plane of a light card (200) on a table of the same light
// with its shadow (6 px of 120) along its right and bottom sides only, and a photo box (a
// 3 px dark frame, 90×120 px) printed on its left, with the card's corners. shift moves the
// card right by that many pixels (to cut it by the frame); shadow false leaves the shadow
// out (the box alone on the table).
func cornerCard(shift float64, shadow bool) (plane, [4][2]float64) {
	const w, h = 640, 480
	p := plane{w: w, h: h, pix: make([]float32, w*h)}
	x0, y0, x1, y1 := 150+shift, 130.0, 150+shift+340, 130.0+214 // ID-1 shape
	bx0, by0 := x0+24, y0+60
	bx1, by1 := bx0+90, by0+120
	for y := range h {
		for x := range w {
			fx, fy := float64(x), float64(y)
			v := float32(200)
			inCard := fx >= x0 && fx < x1 && fy >= y0 && fy < y1
			inShadow := !inCard && fx >= x0+6 && fx < x1+6 && fy >= y0+6 && fy < y1+6
			inBox := fx >= bx0 && fx < bx1 && fy >= by0 && fy < by1
			inFrame := inBox && (fx < bx0+3 || fx >= bx1-3 || fy < by0+3 || fy >= by1-3)
			switch {
			case inShadow && shadow:
				v = 120
			case inFrame:
				v = 60
			}
			v += float32(3 * math.Sin(fx*0.7+fy*1.3))
			p.pix[y*w+x] = v
		}
	}
	return p, [4][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
}

// TestDocumentSeenAtOneCorner: a card showing only the two sides its shadow falls on and
// the box printed on it is framed from that corner (cornerQuad), its corners where the
// card's are; cut by the frame's right edge (its seen sides running off the picture) it is
// not framed, and the box alone on the table is a document too far, not a framed one.
func TestDocumentSeenAtOneCorner(t *testing.T) {
	minArea := DefaultThresholds().MinDocumentArea
	p, truth := cornerCard(0, true)
	d := locateDocument(p, nil, p.w, p.h, minArea)
	if d.verdict != docFramed {
		t.Fatalf("card seen at one corner: verdict %d, want framed (%d)", d.verdict, docFramed)
	}
	if e := quadError(d.quad, truth); e > 12 {
		t.Errorf("corners %s, truth %s: off by %.1f px", fmtQuad(d.quad), fmtQuad(truth), e)
	}
	p, _ = cornerCard(220, true)
	if d := locateDocument(p, nil, p.w, p.h, minArea); d.verdict == docFramed {
		t.Errorf("card cut by the frame's right edge taken as framed: %s", fmtQuad(d.quad))
	}
	p, _ = cornerCard(0, false)
	if d := locateDocument(p, nil, p.w, p.h, minArea); d.verdict == docFramed {
		t.Errorf("a box alone on the table taken as a framed document: %s", fmtQuad(d.quad))
	}
}
