package imagequality

// Tolerances of widenToCard.
const (
	// widenAbove is the long-over-short side ratio beyond which a whole document found is
	// searched for a long side further out. An ID-1 card is 1.59; a quadrilateral of more
	// than 1.70 (maxQuadAspect allows 1.80) is more often a light card on a light table whose
	// faint long side lost to a printed line or band inside it than a card tilted that far.
	widenAbove = 1.70
	// minWidenAspect is the shortest long-over-short ratio a widened card may have: 7 %
	// under the card's, where a passport page (1.42) begins.
	minWidenAspect = AspectID1 / 1.07
	// maxWidenShift is how far out (share of the short dimension) a long side is searched:
	// the inner line is at most a quarter of the card's height in.
	maxWidenShift = 0.25
	// minWidenGap is the least shift in plane pixels: nearer, a line is still the inner
	// line's own edge (profile looks a pixel around each sample).
	minWidenGap = 2.5
	// minWidenSupport is the least share of the new side, inside its corners, on edges of
	// its orientation and of one polarity in one of the planes searched.
	minWidenSupport = 0.65
)

// widenToCard returns the corners c of a whole document (plane coordinates, a w × h plane)
// with one long side moved outwards onto a parallel straight edge of edges, when c is longer
// for its height than a card (widenAbove) and such an edge brings it back to a card's
// proportions (minWidenAspect..widenAbove) with its corners inside the frame and at least
// minWidenSupport of it on edges; the best supported such edge is taken. Otherwise c is
// returned unchanged, with false.
func widenToCard(c [4][2]float64, edges []edgeMap, w, h int, minDim float64) ([4][2]float64, bool) {
	if quadAspect(c) <= widenAbove {
		return c, false
	}
	long := 0 // the first long side
	if sideLength(c, 1)+sideLength(c, 3) > sideLength(c, 0)+sideLength(c, 2) {
		long = 1
	}
	gx, gy := (c[0][0]+c[1][0]+c[2][0]+c[3][0])/4, (c[0][1]+c[1][1]+c[2][1]+c[3][1])/4
	gap := minDim * minBorderGap
	short := (sideLength(c, long+1) + sideLength(c, long+3)) / 2
	best, bestShare := c, minWidenSupport
	found := false
	for _, k := range []int{long, long + 2} {
		side, ok1 := lineThrough(c[k][0], c[k][1], c[(k+1)%4][0], c[(k+1)%4][1])
		prev, ok2 := lineThrough(c[(k+3)%4][0], c[(k+3)%4][1], c[k][0], c[k][1])
		next, ok3 := lineThrough(c[(k+1)%4][0], c[(k+1)%4][1], c[(k+2)%4][0], c[(k+2)%4][1])
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		out := -1.0 // rho decreases outwards when the inside lies along the normal
		if gx*side.c+gy*side.s-side.rho < 0 {
			out = 1
		}
		for d := minWidenGap; d <= maxWidenShift*short; d += 0.5 {
			l := line{deg: side.deg, c: side.c, s: side.s, rho: side.rho + out*d}
			x0, y0, okA := intersect(&prev, &l)
			x1, y1, okB := intersect(&l, &next)
			if !okA || !okB {
				break
			}
			if min(x0, x1) < gap || min(y0, y1) < gap || max(x0, x1) > float64(w-1)-gap || max(y0, y1) > float64(h-1)-gap {
				break // the frame's edge: nothing further out is the card
			}
			cand := c
			cand[k], cand[(k+1)%4] = [2]float64{x0, y0}, [2]float64{x1, y1}
			if r := quadAspect(cand); r > widenAbove || r < minWidenAspect {
				continue
			}
			ta, tb := l.param(x0, y0), l.param(x1, y1)
			if ta > tb {
				ta, tb = tb, ta
			}
			trim := 0.05 * (tb - ta)
			for _, e := range edges {
				l.profile(e, maxSideDeviation)
				in, rise, fall, _ := l.support(ta+trim, tb-trim)
				if float64(in) < 0.8*(tb-ta-2*trim) {
					continue
				}
				if share := float64(max(rise, fall)) / float64(in); share > bestShare {
					best, bestShare, found = cand, share, true
				}
			}
		}
	}
	return best, found
}
