package imagequality

import (
	"image"
	"math"
	"math/rand/v2"
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

// fadingPage returns a 1600 × 1200 photo of a light passport page (205) with lines of print
// on a table lit from its top left: the table is 202 there and darkens towards the bottom
// right, so the page's top and left sides step less than minGradient and fade out towards
// the top left corner, while its right and bottom sides step more. The page's corners are
// returned too.
func fadingPage() (*image.Gray, [4][2]float64) {
	const w, h = 1600, 1200
	r := rand.New(rand.NewPCG(1, 2))
	img := image.NewGray(image.Rect(0, 0, w, h))
	x0, y0, x1, y1 := 300.0, 250.0, 1300.0, 250+1000/AspectPassport
	for y := range h {
		for x := range w {
			fx, fy := float64(x), float64(y)
			luma := 202 - 50*(fx+fy)/(w+h) + r.NormFloat64()*1.5
			if fx >= x0 && fx < x1 && fy >= y0 && fy < y1 {
				luma = 205 + r.NormFloat64()*1.5
				if int(fy-y0)%60 > 40 && fx > x0+100 && fx < x0+600+math.Mod(fy, 200) {
					luma = 70
				}
			}
			img.Pix[y*w+x] = uint8(max(0, min(255, luma)))
		}
	}
	return img, [4][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
}

// TestAllFourSidesBeforeAnInferredOne: on a page whose top and left sides fade out towards
// their corner, the second pass sees the left side only up to where it fades, and infers a
// top side from there across the page, 10° off; the faint pass sees all four sides. The page
// found is the one with four sides seen (before, the inferred one was taken: a passport
// page on pale stone was read with its top left quarter cut off).
func TestAllFourSidesBeforeAnInferredOne(t *testing.T) {
	img, truth := fadingPage()
	res := NewGate(DefaultThresholds()).Assess(img, Document)
	if !res.Passed {
		t.Fatalf("page: %v, want framed", res.Reasons)
	}
	if e := quadError(res.Document, truth); e > 16 {
		t.Errorf("corners %s, truth %s: off by %.1f px", fmtQuad(res.Document), fmtQuad(truth), e)
	}
}

// cornerCard returns a 640×480 luma plane of a light card (200) on a table of the same light
// with its shadow (6 px of 120) along its right and bottom sides only, and a photo box (a
// 3 px dark frame, 90×120 px) printed on its left, with the card's corners. shift moves the
// card right by that many pixels (to cut it by the frame); shadow false leaves the shadow
// out (the box alone on the table); vein draws dashes of the shadow's darkness on the
// line of the card's right side from its top right corner up to the frame's top, as a
// vein of stone touching that line does.
func cornerCard(shift float64, shadow, vein bool) (plane, [4][2]float64) {
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
			inVein := fx >= x1 && fx < x1+6 && fy < y0-8 && int(fy)%25 < 10
			switch {
			case inShadow && shadow, inVein && vein:
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
// card's are, also when a vein of the stone carries its right side's line on to the frame's
// top (the side's dense stretch ends at the card's corner: denseEnd); cut by the frame's
// right edge (its seen sides running off the picture) it is not framed, and the box alone on the table is a document too far, not a framed one.
func TestDocumentSeenAtOneCorner(t *testing.T) {
	minArea := DefaultThresholds().MinDocumentArea
	p, truth := cornerCard(0, true, false)
	d := locateDocument(p, nil, p.w, p.h, minArea)
	if d.verdict != docFramed {
		t.Fatalf("card seen at one corner: verdict %d, want framed (%d)", d.verdict, docFramed)
	}
	if e := quadError(d.quad, truth); e > 12 {
		t.Errorf("corners %s, truth %s: off by %.1f px", fmtQuad(d.quad), fmtQuad(truth), e)
	}
	p, truth = cornerCard(0, true, true)
	if d := locateDocument(p, nil, p.w, p.h, minArea); d.verdict != docFramed {
		t.Errorf("card seen at one corner, a vein touching its right side's line: verdict %d, want framed (%d)", d.verdict, docFramed)
	} else if e := quadError(d.quad, truth); e > 12 {
		t.Errorf("card seen at one corner, a vein touching its right side's line: corners %s, truth %s: off by %.1f px", fmtQuad(d.quad), fmtQuad(truth), e)
	}
	p, _ = cornerCard(220, true, false)
	if d := locateDocument(p, nil, p.w, p.h, minArea); d.verdict == docFramed {
		t.Errorf("card cut by the frame's right edge taken as framed: %s", fmtQuad(d.quad))
	}
	p, _ = cornerCard(0, false, false)
	if d := locateDocument(p, nil, p.w, p.h, minArea); d.verdict == docFramed {
		t.Errorf("a box alone on the table taken as a framed document: %s", fmtQuad(d.quad))
	}
}

// TestReachTakesInTheAnchor: an inferred side a few pixels short of the box printed on the
// document moves out to take it in; one far short of it does not move.
func TestReachTakesInTheAnchor(t *testing.T) {
	anchor := &quadCand{corners: [4][2]float64{{40, 50}, {100, 50}, {100, 130}, {40, 130}}} // a box from x = 40
	for _, tt := range []struct {
		at, want float64 // the inferred left side's x, and where it ends up
		ok       bool
	}{
		{30, 30, true}, // the box is inside: no move
		{45, 39, true}, // 5 px short: moved a pixel beyond the box
		{80, 80, false},
	} {
		l := newLine(0, tt.at)
		ok := l.reach(300, 100, anchor, 10) // the seen corner at (300, 100)
		if ok != tt.ok || math.Abs(l.rho-tt.want) > 1e-9 {
			t.Errorf("side at x = %.0f: reach %v, side at %.1f; want %v, %.0f", tt.at, ok, l.rho, tt.ok, tt.want)
		}
	}
}

// TestSeenSideClearOfTheAnchor: a line along a side of the box printed on a document (the
// box's foot carried on by a line of print beside it) is no seen side of the document; one
// that passes the box at a distance is.
func TestSeenSideClearOfTheAnchor(t *testing.T) {
	anchor := &quadCand{corners: [4][2]float64{{40, 50}, {100, 50}, {100, 130}, {40, 130}}}
	for _, tt := range []struct {
		y    float64 // a horizontal line's y
		want bool
	}{{130, false}, {132, false}, {48, false}, {150, true}, {30, true}, {90, false}} {
		l := newLine(90, tt.y)
		if got := clearOf(&l, anchor, 4); got != tt.want {
			t.Errorf("line y = %.0f: clear of the box %v, want %v", tt.y, got, tt.want)
		}
	}
}

// TestInferredAroundAPrintedBox: a document inferred by a later pass replaces the first one
// inferred when it holds it and is much larger (the first a box printed on the card: its
// photo's edge, extended, with the card's far side), not when it is the same document with
// its sides a few pixels out (on its shadow's far edge), nor when it only overlaps it.
func TestInferredAroundAPrintedBox(t *testing.T) {
	cand := func(c [4][2]float64) *quadCand { return &quadCand{corners: c, area: shoelace(c) / (320 * 240)} }
	card := cand([4][2]float64{{31, 44}, {286, 17}, {303, 180}, {48, 207}})
	photoBox := cand([4][2]float64{{105, 86}, {286, 22}, {299, 150}, {115, 169}}) // eval seed 16180's chip card
	shadowed := cand([4][2]float64{{29, 42}, {288, 15}, {305, 182}, {46, 209}})
	beside := cand([4][2]float64{{150, 30}, {310, 30}, {310, 200}, {150, 200}})
	for _, c := range []struct {
		name         string
		outer, inner *quadCand
		want         bool
	}{
		{"card around its photo's box", card, photoBox, true},
		{"card on its shadow's edge", shadowed, card, false},
		{"photo's box inside the card", photoBox, card, false},
		{"overlapping", beside, photoBox, false},
	} {
		if got := encloses(c.outer, c.inner); got != c.want {
			t.Errorf("%s: encloses %v, want %v", c.name, got, c.want)
		}
	}
}
