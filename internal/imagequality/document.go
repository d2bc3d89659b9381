package imagequality

import (
	"cmp"
	"image"
	"math"
)

// Document shapes: width over height of an ID-1 card (85.60 × 53.98 mm) and of a TD3
// passport data page (125 × 88 mm).
const (
	AspectID1      = 85.60 / 53.98
	AspectPassport = 125.0 / 88
)

// Tolerances of the document search.
const (
	// minQuadAspect and maxQuadAspect bound the long-over-short side ratio of a document
	// quadrilateral (mean of opposite sides): the passport's 1.42 and the card's 1.59, widened
	// by about 12 % for perspective and for the detector's corner error.
	minQuadAspect = 1.25
	maxQuadAspect = 1.80
	// cropTolerance is how far (relative) a picture's own aspect may be from a document's for
	// the picture to be taken as already cropped to the document.
	cropTolerance = 0.04
	// minOppositeRatio is the shortest over the longest of two opposite sides: perspective
	// up to about 35° of tilt.
	minOppositeRatio = 0.6
	// minSideSupport is the share of a visible side that must lie on image edges of its
	// orientation; maxSideDeviation is that orientation tolerance in degrees.
	minSideSupport   = 0.7
	maxSideDeviation = 12
	// minEndSupport is the share of each end of a side (the fifth of it next to a corner,
	// inside the frame) that must lie on edges: the document's corners are seen.
	minEndSupport = 0.5
	// minBorderGap is how far (share of the search plane's shorter dimension, about 1 %) a
	// whole document's corners must lie inside the frame to be inside it: a card cut by the
	// frame's edge can show a printed line just inside that edge as its fourth side
	// (TestDocumentFramingAccuracy's cut/*/edge2 cases put corners 0.5–1.3 px from it),
	// while a framed capture keeps a margin (docgen's 3 % of the width, the framing set's 4 %).
	minBorderGap = 1.0 / 90
	// minCroppedInnerArea is the least share of a picture of a document's own shape that a
	// quadrilateral found inside it must cover to be the document: the largest box printed
	// on a card, its photo, covers 0.09–0.11 of a picture cropped to the card
	// (TestCroppedDocumentPasses), so a smaller find there is the card's print and the
	// picture is the cropped document. 0.2 was MinDocumentArea before it was lowered.
	minCroppedInnerArea = 0.2
	// searchWidth is the largest width the search runs at: the working plane is halved until
	// it is no wider.
	searchWidth = 400
	// strongGradient and minGradient are the smallest luma steps per pixel (at search width)
	// that are edges in the search's first and second pass.
	strongGradient = 24
	minGradient    = 6
	// faintGradient is the smallest luma step per pixel that is an edge in the third pass,
	// and faintWeight the edge strength that is one full vote there (32 in the first two):
	// a light card on a light table (docgen's calibration tables) steps 10–15 levels at its
	// unshadowed sides, which the second pass's lines, voted by weight over 32, did not
	// reach. The third pass runs only when the first two found no framed document.
	faintGradient = 4
	faintWeight   = 8
	// maxLines is how many of the strongest straight lines are combined into quadrilaterals;
	// combinedLines how many of each plane's when the three planes are searched together.
	maxLines      = 48
	combinedLines = 16
)

// Quad is a quadrilateral in image pixels, its corners in order around it.
type Quad [4][2]float64

// docVerdict is what the document search concluded.
type docVerdict int

const (
	docNone    docVerdict = iota // no document-shaped quadrilateral, whole or cut off
	docFramed                    // a whole document inside the frame, large enough
	docCropped                   // the picture's own shape is a document's: already cropped to it
	docCutOff                    // a document crossing the frame's edge
	docTooFar                    // a whole document inside the frame, too small
)

// docFinding is the result of the document search.
type docFinding struct {
	verdict docVerdict
	quad    Quad    // in image pixels; the whole frame when cropped; zero when none
	area    float64 // the quad's share of the frame, 0..1
}

// quadCand is a quadrilateral made of two pairs of lines.
type quadCand struct {
	corners [4][2]float64 // plane coordinates
	area    float64       // share of the frame
	score   float64
	inside  bool // every corner within the frame
}

// locateDocument searches the luma plane p of a w × h image for a document: a convex
// quadrilateral of document shape (see minQuadAspect) whose four sides lie on straight
// image edges; img (the image p was taken from; nil for none) adds its chroma planes' edges
// when it is in colour. The verdict is:
//   - docCropped when the picture's own aspect is a document's (within cropTolerance, either
//     orientation) and no large enough document lies inside it: the capture was cropped to
//     the document (as SDKs do), whose sides are then the frame's;
//   - docFramed when a document lies wholly inside the frame (minBorderGap) and covers at
//     least minArea of it (minCroppedInnerArea in a picture of a document's shape), its four
//     sides seen (in any pass), or else one of them inferred from the other three
//     (inferQuad), or, outside a picture of a document's shape, two inferred from the corner
//     of the other two and a box printed on the document or the bare surface outside them
//     (cornerQuad), or, as a last resort when no pass finds one so and none cut off, on
//     looser terms (quadFinds.lastResort);
//   - docCutOff when a document quadrilateral has a corner outside the frame, or when two or
//     three straight sides of a document-sized region meet the frame's border;
//   - docTooFar when the only whole document covers less than minArea;
//   - docNone otherwise.
func locateDocument(p plane, img image.Image, w, h int, minArea float64) docFinding {
	q := p
	for q.w > searchWidth {
		q = halve(q)
	}
	sx, sy := float64(w)/float64(q.w), float64(h)/float64(q.h)
	toImage := func(c [4][2]float64) Quad {
		var out Quad
		for i, pt := range c {
			out[i] = [2]float64{(pt[0] + 0.5) * sx, (pt[1] + 0.5) * sy}
		}
		return out
	}

	// A picture of a document's own shape is taken as cropped to it unless a large enough
	// document lies inside it; boxes and bands printed on the document make corners there,
	// so no document is inferred from one (cornerQuad).
	cropped := isDocumentAspect(float64(w) / float64(h))
	if cropped {
		minArea = max(minArea, minCroppedInnerArea)
	}
	// Three passes on luma: strong edges first, so that a striped or busy surface cannot
	// crowd the document's sides out of the strongest lines; then every edge, for a document
	// on a surface of nearly its own brightness; then faint edges voting in full
	// (faintGradient). Then, when img is given in colour, the last two on each chroma plane
	// (chromaPlanes), for a card of the table's brightness but not its hue. In each, a whole
	// quadrilateral of four seen sides first, then one with a side inferred from three seen
	// ones (inferQuad). The first framed document with four sides seen is the answer, else
	// the first with sides inferred, else the first last resort.
	type pass struct {
		plane       func() plane
		grad, votes float32
		corner      bool // whether a document may be inferred from one corner (cornerQuad)
	}
	luma := func() plane { return q }
	var cb, cr plane
	colour := func(second bool) func() plane {
		return func() plane {
			if cb.pix == nil {
				cb, cr = chromaPlanes(img, q.w, q.h)
			}
			if second {
				return cr
			}
			return cb
		}
	}
	_, grey := img.(*image.Gray)
	inColour := img != nil && !grey
	passes := []pass{{luma, strongGradient, maxEdgeWeight, !cropped}, {luma, minGradient, maxEdgeWeight, !cropped}, {luma, faintGradient, faintWeight, !cropped}}
	if inColour {
		// No corner inference on chroma: a card's white MRZ band is of a grey table's hue,
		// so the band's edge and one side of a cut-off card make a corner there.
		passes = append(passes,
			pass{colour(false), minGradient, maxEdgeWeight, false}, pass{colour(true), minGradient, maxEdgeWeight, false},
			pass{colour(false), faintGradient, faintWeight, false}, pass{colour(true), faintGradient, faintWeight, false})
	}
	// framed is the finding of a framed document with corners c, a long side moved out
	// onto the card's own faint edge when c is longer than a card (widenToCard), found on
	// the faint edges of luma and, in colour, of chroma.
	framed := func(c [4][2]float64, area float64) docFinding {
		if r := quadAspect(c); r > widenAbove {
			edges := []edgeMap{findEdges(q, faintGradient, faintWeight)}
			if inColour {
				edges = append(edges, findEdges(colour(false)(), faintGradient, faintWeight), findEdges(colour(true)(), faintGradient, faintWeight))
			}
			if wide, ok := widenToCard(c, edges, q.w, q.h, float64(min(q.w, q.h))); ok {
				c, area = wide, shoelace(wide)/float64(q.w*q.h)
			}
		}
		return docFinding{verdict: docFramed, quad: toImage(c), area: area}
	}
	var full, partial, inferred, lastResort, framedInferred *quadCand
	// The faint passes' strongest lines (combinedLines of each plane's), and luma's faint
	// edges, for the search of the three planes together.
	var faintEdges edgeMap
	var faintLines []line
	for _, ps := range passes {
		e, lines := planeLines(ps.plane(), ps.grad, ps.votes)
		if ps.grad == faintGradient {
			if faintEdges.dir == nil {
				faintEdges = e // luma's faint pass comes first
			}
			faintLines = append(faintLines, lines[:min(len(lines), combinedLines)]...)
		}
		found := quadsOf(e, lines, q.w, q.h, minArea, ps.corner, false)
		f, inf := found.full, found.inferred
		if f != nil && f.inside && f.area >= minArea {
			return framed(f.corners, f.area)
		}
		// A document with sides inferred is the answer only when no later pass sees all
		// four: a page whose side fades out along the way (a light passport page on pale
		// stone) made a side inferred from where it faded across the page, 12° off, while
		// the faint pass saw the whole page. Nor when a later pass infers one around it:
		// the edge of a card's photo, extended, with the card's far side made a box inside
		// a light card on pale stone, whose own left side only the faint pass saw.
		if inf != nil && inf.area >= minArea && (framedInferred == nil || encloses(inf, framedInferred)) {
			framedInferred = inf
		}
		if inferred == nil {
			inferred = inf
		}
		if full == nil || (f != nil && f.inside && !full.inside) {
			full = f
		}
		if partial == nil {
			partial = found.partial
		}
		if lastResort == nil {
			lastResort = found.lastResort
		}
	}
	if framedInferred != nil {
		return framed(framedInferred.corners, framedInferred.area)
	}
	// A light card on pale stone can show each side in one plane only, its shadowed sides in
	// luma and its tinted top in chroma: last, in colour, the faint passes' lines of the
	// three planes are searched together (combinedLines of each, profiled on their own plane).
	if lastResort == nil && !cropped && inColour {
		found := quadsOf(faintEdges, faintLines, q.w, q.h, minArea, true, true)
		for _, c := range []*quadCand{found.full, found.inferred, found.lastResort} {
			if c != nil && c.inside && c.area >= minArea {
				lastResort = c
				break
			}
		}
	}
	// A last resort only where no pass saw a cut-off document: the shadowed edge of a card
	// cut by the frame's edge, seen from the table's side, is a band too, and closes a
	// quadrilateral of the table's grain (docgen's cut-off card on wood).
	if lastResort != nil && partial == nil && (full == nil || full.inside) {
		return framed(lastResort.corners, lastResort.area)
	}
	if cropped {
		whole := Quad{{0, 0}, {float64(w), 0}, {float64(w), float64(h)}, {0, float64(h)}}
		return docFinding{verdict: docCropped, quad: whole, area: 1}
	}
	switch {
	case full != nil && !full.inside:
		return docFinding{verdict: docCutOff, quad: toImage(full.corners), area: full.area}
	case partial != nil:
		return docFinding{verdict: docCutOff, quad: toImage(partial.corners), area: partial.area}
	case full != nil:
		return docFinding{verdict: docTooFar, quad: toImage(full.corners), area: full.area}
	case inferred != nil:
		return docFinding{verdict: docTooFar, quad: toImage(inferred.corners), area: inferred.area}
	}
	return docFinding{verdict: docNone}
}

// isDocumentAspect reports whether a width-over-height ratio, in either orientation, is
// within cropTolerance of a card's or a passport page's.
func isDocumentAspect(r float64) bool {
	if r < 1 {
		r = 1 / r
	}
	for _, a := range []float64{AspectID1, AspectPassport} {
		if math.Abs(r-a) <= cropTolerance*a {
			return true
		}
	}
	return false
}

// quadFinds are what quadsOf found; each is nil when there is none.
type quadFinds struct {
	// full is the best whole document quadrilateral (all four sides seen; preferring one
	// wholly inside the frame, then the largest and best supported).
	full *quadCand
	// partial is the best cut-off one (one or two sides on the frame's border).
	partial *quadCand
	// inferred is, when no whole one inside the frame is large enough, the best with unseen
	// sides inferred: one side from three seen ones (inferQuad), or two sides from the two
	// seen at one corner (cornerQuad), anchored by a whole one found too small (a box
	// printed on the document), or, when there is none at all, with bare surface outside
	// them.
	inferred *quadCand
	// lastResort is, when there is no large enough inferred one either, a large enough
	// document inferred on looser terms: its seen sides allowed to be shadow bands
	// (judgeQuad's bands), by cornerQuad anchored by a box found whole or with a side
	// inferred (or by none), or else by inferQuad. It is the answer only when no pass finds
	// a document otherwise: cornerQuad's parallelogram places the far corner less well than
	// the other finds (on docgen's calibration captures, taken first, it moved the corners
	// of five framed documents by 3–6 % of the width), and bands let a cut-off card's edge
	// close a quadrilateral of the table's grain.
	lastResort *quadCand
}

// planeLines returns q's edges of at least minGrad (fullWeight one vote) and their straight
// lines (at most maxLines, strongest first), each profiled on those edges.
func planeLines(q plane, minGrad, fullWeight float32) (edgeMap, []line) {
	e := findEdges(q, minGrad, fullWeight)
	lines := houghLines(e, max(8, min(q.w, q.h)/24), maxLines)
	for i := range lines {
		lines[i].profile(e, maxSideDeviation)
	}
	return e, lines
}

// quadsOf returns the quadrilaterals of document shape that straight lines (planeLines, each
// profiled on its own plane's edges) make in a w × h frame (quadFinds): inferred ones only
// when no whole one inside the frame is large enough (minArea), the ones inferred from a
// corner (cornerQuad) only when corner is set. e is the edge map cornerQuad looks for bare
// surface on. With bands set, a whole quadrilateral's sides are judged as shadow bands too
// (judgeQuad): lines of several planes.
func quadsOf(e edgeMap, lines []line, w, h int, minArea float64, corner, bands bool) quadFinds {
	minDim := float64(min(w, h))
	fw, fh := float64(w-1), float64(h-1)
	lines = append(lines,
		line{deg: 0, c: 1, rho: 0, border: true}, line{deg: 0, c: 1, rho: fw, border: true},
		line{deg: 90, s: 1, rho: 0, border: true}, line{deg: 90, s: 1, rho: fh, border: true})

	type pair struct {
		a, b *line
		deg  int // mean orientation
	}
	minSep := minDim / 10
	cx, cy := fw/2, fh/2
	var pairs []pair
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			a, b := &lines[i], &lines[j]
			if angleDiff(a.deg, b.deg) > 20 || distanceAtCentre(*a, *b, cx, cy) < minSep {
				continue
			}
			pairs = append(pairs, pair{a, b, meanAngle(a.deg, b.deg)})
		}
	}
	frame := float64(w * h)
	var found quadFinds
	var bestInside, bestOutside, partial, inferred *quadCand
	for i := range pairs {
		for j := i + 1; j < len(pairs); j++ {
			pa, pb := pairs[i], pairs[j]
			if angleDiff(pa.deg, pb.deg) < 60 {
				continue
			}
			sides := [4]*line{pa.a, pb.b, pa.b, pb.a} // side k runs from corner k to corner k+1
			c, ok := quadCorners(sides, w, h)
			if !ok {
				continue
			}
			cand, whole := judgeQuad(c, sides, minDim, frame, fw, fh, bands)
			if cand == nil {
				continue
			}
			switch {
			case !whole:
				if partial == nil || cand.score > partial.score {
					partial = cand
				}
			case cand.inside:
				if bestInside == nil || cand.score > bestInside.score {
					bestInside = cand
				}
			default:
				if bestOutside == nil || cand.score > bestOutside.score {
					bestOutside = cand
				}
			}
		}
	}
	if bestInside == nil || bestInside.area < minArea {
		rs := sideRuns(lines, minDim)
		var banded *quadCand
		inferred, banded = inferQuad(lines, rs, w, h, minDim, frame)
		// The last resort's anchor is a box found whole, or else one found with a side
		// inferred (a passport's photo whose fourth side is lost in its own background), or
		// else none (bare surface outside the inferred sides).
		box := cmp.Or(bestInside, inferred)
		// With a box found whole, or nothing at all: a small box found with a side inferred
		// is no anchor here, nor is the surface around it bare.
		if corner && (bestInside != nil || inferred == nil) && (inferred == nil || inferred.area < minArea) {
			if c := cornerQuad(e, lines, rs, bestInside, w, h, minDim, frame, false); c != nil {
				inferred = c
			}
		}
		if corner && (box == nil || box.area < minArea) && (inferred == nil || inferred.area < minArea) {
			if c := cornerQuad(e, lines, rs, box, w, h, minDim, frame, true); c != nil && c.area >= minArea {
				found.lastResort = c
			}
		}
		if corner && found.lastResort == nil && banded != nil && banded.area >= minArea {
			found.lastResort = banded
		}
	}
	found.partial, found.inferred = partial, inferred
	found.full = cmp.Or(bestInside, bestOutside)
	return found
}

// quadCorners returns the corners of the quadrilateral whose side k lies on sides[k]
// (corner k = sides[k-1] ∩ sides[k]), false when two adjacent sides are parallel, a corner
// lies far outside the frame (beyond half its size) or the quadrilateral is not convex.
func quadCorners(sides [4]*line, w, h int) ([4][2]float64, bool) {
	var c [4][2]float64
	for k := range 4 {
		x, y, ok := intersect(sides[(k+3)%4], sides[k])
		if !ok || x < -0.5*float64(w) || x > 1.5*float64(w) || y < -0.5*float64(h) || y > 1.5*float64(h) {
			return c, false
		}
		c[k] = [2]float64{x, y}
	}
	sign := 0.0
	for k := range 4 {
		a, b, d := c[k], c[(k+1)%4], c[(k+2)%4]
		cross := (b[0]-a[0])*(d[1]-b[1]) - (b[1]-a[1])*(d[0]-b[0])
		if cross == 0 || (sign != 0 && (cross > 0) != (sign > 0)) {
			return c, false
		}
		sign = cross
	}
	return c, true
}

// judgeQuad checks the quadrilateral c with sides on sides (frame width fw, height fh, both
// as the last pixel's coordinate) and returns it scored, with whole true when no side lies
// on the frame's border, or nil when it is not a document:
//   - every side at least a tenth of the frame's shorter dimension, opposite sides within
//     minOppositeRatio of each other;
//   - a whole quadrilateral: long over short side within [minQuadAspect, maxQuadAspect];
//     each side at least 30 % inside the frame with minSideSupport of that part on edges;
//   - the ends of every seen side (next to the corners) at least minEndSupport on edges;
//   - every seen side's supporting edges of one polarity, the same all round: the inside
//     brighter than the outside on every side (a card on a darker surface), or darker on
//     every side (text lines and the card's own frames mostly fail this); with a side
//     inferred, of one polarity per side; when bands is set, of either (see below);
//   - a cut-off one (one or two border sides): a corner seen (two adjacent sides not on the
//     border), its seen sides 60 % inside and 70 % supported, at least 8 % of the frame, and
//     where both sides of a pair are seen, the other dimension at most maxQuadAspect times
//     their distance.
//
// The score is the share of the frame covered times the mean support.
func judgeQuad(c [4][2]float64, sides [4]*line, minDim, frame, fw, fh float64, bands bool) (*quadCand, bool) {
	var length [4]float64
	borders := 0
	for k := range 4 {
		length[k] = sideLength(c, k)
		if length[k] < minDim/10 {
			return nil, false
		}
		if sides[k].border {
			borders++
		}
	}
	if borders == 4 || borders > 2 {
		return nil, false
	}
	if math.Min(length[0], length[2])/math.Max(length[0], length[2]) < minOppositeRatio ||
		math.Min(length[1], length[3])/math.Max(length[1], length[3]) < minOppositeRatio {
		return nil, false
	}
	da, db := (length[0]+length[2])/2, (length[1]+length[3])/2 // along pair a, along pair b
	whole := borders == 0
	area := shoelace(c) / frame
	if whole {
		if r := quadAspect(c); r < minQuadAspect || r > maxQuadAspect {
			return nil, false
		}
	} else {
		if area < 0.08 {
			return nil, false
		}
		// A corner of the document must be seen: two adjacent sides that are not borders
		// (two parallel lines across the frame are as often a table's or a floor's).
		corner := false
		for k := range 4 {
			corner = corner || (!sides[k].border && !sides[(k+1)%4].border)
		}
		if !corner {
			return nil, false
		}
		// Sides 0 and 2 are one pair (their distance is db), sides 1 and 3 the other.
		if !sides[0].border && !sides[2].border && da > maxQuadAspect*db {
			return nil, false
		}
		if !sides[1].border && !sides[3].border && db > maxQuadAspect*da {
			return nil, false
		}
	}
	minIn, minSup := 0.3, minSideSupport
	if !whole {
		minIn, minSup = 0.6, 0.7
	}
	// The document is brighter (or darker) than its surroundings all round: on every seen
	// side, the edges' luma must change the same way across it, inwards.
	gx, gy := (c[0][0]+c[1][0]+c[2][0]+c[3][0])/4, (c[0][1]+c[1][1]+c[2][1]+c[3][1])/4
	type sideHits struct{ in, brighter, darker, either int }
	// Per side: the whole side, and its two ends (a quarter of the side at each corner).
	var hs [4][3]sideHits
	var totBright, totDark int
	for k, l := range sides {
		if l.border || l.inferred {
			continue
		}
		a, b := c[k], c[(k+1)%4]
		ta, tb := l.param(a[0], a[1]), l.param(b[0], b[1])
		trim := 0.05 * (tb - ta)          // rounded corners
		inward := gx*l.c+gy*l.s-l.rho > 0 // the inside lies along the normal
		for j, span := range [3][2]float64{{ta + trim, tb - trim}, {ta + trim, ta + 5*trim}, {tb - 5*trim, tb - trim}} {
			in, rise, fall, either := l.support(span[0], span[1])
			if inward {
				hs[k][j] = sideHits{in, rise, fall, either}
			} else {
				hs[k][j] = sideHits{in, fall, rise, either}
			}
		}
		if total := math.Abs(tb-ta) * 0.9; hs[k][0].in == 0 || float64(hs[k][0].in) < minIn*total {
			return nil, false
		}
		totBright += hs[k][0].brighter
		totDark += hs[k][0].darker
	}
	// A quadrilateral with an inferred side is one whose fourth side was too faint to see:
	// a light card on a light table, where the sides the card's shadow falls on show the
	// shadow's outer edge (darker inwards) and the others the card (brighter inwards). Each
	// of its seen sides must be on edges of one polarity, its own. A shadowed side is a band,
	// though, the card's edge (brighter inwards) a few pixels inside the shadow's outer edge
	// (darker inwards), and the line found along it can run from the one to the other as
	// the shadow widens (light cards on pale stone: a right side on the one for its first
	// half and the other for its second). With bands set, each seen side must be on edges of
	// either polarity: only for a last resort (quadFinds.lastResort), since a card's shadowed
	// edge seen from the table's side is the same band, and a cut-off card's edge closes a
	// quadrilateral of the table's grain just as well; and for sides seen in different planes
	// (luma's and chroma's polarities say nothing of each other).
	inferred := sides[0].inferred || sides[1].inferred || sides[2].inferred || sides[3].inferred
	share := func(h sideHits) float64 {
		if bands {
			return float64(h.either) / float64(h.in)
		}
		if inferred {
			return float64(max(h.brighter, h.darker)) / float64(h.in)
		}
		if totDark > totBright {
			return float64(h.darker) / float64(h.in)
		}
		return float64(h.brighter) / float64(h.in)
	}
	var supSum float64
	seen := 0
	for k, l := range sides {
		if l.border || l.inferred {
			continue
		}
		sup := share(hs[k][0])
		if sup < minSup {
			return nil, false
		}
		// Each end seen in the frame must be on the edge too: a side stretched past the
		// document's corner along some other line has a bare end.
		for _, end := range hs[k][1:] {
			if end.in > 0 && share(end) < minEndSupport {
				return nil, false
			}
		}
		supSum += sup
		seen++
	}
	inside := true
	gap := minDim * minBorderGap
	for _, p := range c {
		if p[0] < gap || p[1] < gap || p[0] > fw-gap || p[1] > fh-gap {
			inside = false
		}
	}
	return &quadCand{corners: c, area: area, score: area * supSum / float64(seen), inside: inside}, whole
}

// meanAngle returns the mean of two orientations (degrees modulo 180) that differ by at
// most 90°.
func meanAngle(a, b int) int {
	if a-b > 90 {
		b += 180
	} else if b-a > 90 {
		a += 180
	}
	return ((a + b) / 2) % 180
}

// quadAspect returns the long-over-short side ratio of the quadrilateral c, each dimension
// the mean of two opposite sides.
func quadAspect(c [4][2]float64) float64 {
	da, db := sideLength(c, 0)+sideLength(c, 2), sideLength(c, 1)+sideLength(c, 3)
	return max(da, db) / min(da, db)
}

// sideLength returns the length of side k of c (corner k to corner k+1, modulo 4).
func sideLength(c [4][2]float64, k int) float64 {
	a, b := c[k%4], c[(k+1)%4]
	return math.Hypot(b[0]-a[0], b[1]-a[1])
}

// shoelace returns the area of the polygon c.
func shoelace(c [4][2]float64) float64 {
	s := 0.0
	for k := range 4 {
		a, b := c[k], c[(k+1)%4]
		s += a[0]*b[1] - b[0]*a[1]
	}
	return math.Abs(s) / 2
}
