package imagequality

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// ruledCardScene draws a 1600 × 1200 photo of a light card, 800 px wide and turned by rot
// degrees, on a table of almost its brightness: its top and left sides step step luma levels,
// its right and bottom sides cast a shadow. A dark rule runs across the whole card ruleAt
// (share of its height) below its top, as printed bands and the edge of a guilloche do.
// It returns the picture and the card's corners.
func ruledCardScene(rot, step, ruleAt float64, seed uint64) (*image.Gray, [4][2]float64) {
	const w, h = 1600, 1200
	const cw, ch = 800.0, 800.0 / AspectID1
	const cx, cy = 800.0, 620.0
	r := rand.New(rand.NewPCG(seed, 5))
	img := image.NewGray(image.Rect(0, 0, w, h))
	sin, cos := math.Sincos(rot * math.Pi / 180)
	for y := range h {
		for x := range w {
			dx, dy := float64(x)-cx, float64(y)-cy
			u := dx*cos + dy*sin + cw/2
			v := -dx*sin + dy*cos + ch/2
			luma := 196 + r.NormFloat64()*2
			switch {
			case u >= 0 && u < cw && v >= 0 && v < ch:
				luma += step
				if math.Abs(v-ruleAt*ch) < 3 {
					luma = 110
				}
				if v > 0.35*ch && v < 0.8*ch && u > 60 && u < 500 && int(v/30)%2 == 0 && int(u/9)%3 != 2 {
					luma = 60 // lines of text
				}
			case u >= 0 && v >= 0 && u < cw+16 && v < ch+16:
				d := max(u-cw, v-ch)
				luma -= 45 * (1 - d/16)
			}
			img.Pix[y*w+x] = uint8(max(0, min(255, luma)))
		}
	}
	var corners [4][2]float64
	for k, p := range [4][2]float64{{0, 0}, {cw, 0}, {cw, ch}, {0, ch}} {
		u, v := p[0]-cw/2, p[1]-ch/2
		corners[k] = [2]float64{cx + u*cos - v*sin, cy + u*sin + v*cos}
	}
	return img, corners
}

// TestCardWiderThanARule: a light card on a light table whose top side is faint and which
// prints a dark rule across its width near the top is framed by its own top side, not by the
// rule (which made a quadrilateral of 1.8, longer than a card, and cut the card's top rows
// out of what OCR read). A card without the faint top side keeps the rule.
func TestCardWiderThanARule(t *testing.T) {
	g := NewGate(DefaultThresholds())
	for i, rot := range []float64{0, 2, -3} {
		img, truth := ruledCardScene(rot, 14, 0.12, uint64(i))
		res := g.Assess(img, Document)
		if !res.Passed {
			t.Errorf("card turned %.0f°: %v, want framed", rot, res.Reasons)
			continue
		}
		if e := quadError(res.Document, truth) / 1600; e > 0.01 {
			t.Errorf("card turned %.0f°: found %s, truth %s: corner error %.3f of the frame", rot, fmtQuad(res.Document), fmtQuad(Quad(truth)), e)
		}
	}
}

// TestWidenToCard: widenToCard moves a long side found on an inner line out onto the card's
// faint edge, and leaves a card-shaped quadrilateral, or one with bare surface beyond its
// long sides, as it is.
func TestWidenToCard(t *testing.T) {
	// A 400 × 300 plane: a card from (40, 40) to (360, 241.8) (1.586), 12 levels over the
	// table, with a rule 20 px below its top.
	const w, h = 400, 300
	p := plane{w: w, h: h, pix: make([]float32, w*h)}
	for y := range h {
		for x := range w {
			v := float32(180)
			if x >= 40 && x < 360 && y >= 40 && y < 242 {
				v = 192
				if y >= 60 && y < 62 {
					v = 90
				}
			}
			p.pix[y*w+x] = v
		}
	}
	edges := []edgeMap{findEdges(p, faintGradient, faintWeight)}
	inner := [4][2]float64{{40, 61}, {360, 61}, {360, 242}, {40, 242}} // 320 / 181 = 1.77
	got, ok := widenToCard(inner, edges, w, h, h)
	if !ok || math.Abs(got[0][1]-40) > 1.5 || math.Abs(got[1][1]-40) > 1.5 || got[2] != inner[2] || got[3] != inner[3] {
		t.Errorf("rule taken for the top: widened %v to %v, want the top at y = 40", ok, got)
	}
	card := [4][2]float64{{40, 40}, {360, 40}, {360, 242}, {40, 242}}
	if got, ok := widenToCard(card, edges, w, h, h); ok {
		t.Errorf("card-shaped quadrilateral widened to %v", got)
	}
	bare := plane{w: w, h: h, pix: make([]float32, w*h)}
	for i := range bare.pix {
		bare.pix[i] = 180
	}
	for y := 61; y < 242; y++ {
		for x := 40; x < 360; x++ {
			bare.pix[y*w+x] = 192
		}
	}
	if got, ok := widenToCard(inner, []edgeMap{findEdges(bare, faintGradient, faintWeight)}, w, h, h); ok {
		t.Errorf("long quadrilateral on a bare table widened to %v", got)
	}
}
