package imagequality

import "math"

// clutterOutside returns the share of side k of the quadrilateral c (corner k to corner
// k+1, its ends' twentieths left out) along which an edge of e lies in the band from 2 to
// depth pixels outside it; 1 when the band lies outside the frame.
func (e edgeMap) clutterOutside(c [4][2]float64, k int, depth float64) float64 {
	gx, gy := (c[0][0]+c[1][0]+c[2][0]+c[3][0])/4, (c[0][1]+c[1][1]+c[2][1]+c[3][1])/4
	a, b := c[k], c[(k+1)%4]
	dx, dy := b[0]-a[0], b[1]-a[1]
	n := math.Hypot(dx, dy)
	if n < 1 {
		return 0
	}
	nx, ny := dy/n, -dx/n
	mx, my := (a[0]+b[0])/2, (a[1]+b[1])/2
	if (gx-mx)*nx+(gy-my)*ny > 0 {
		nx, ny = -nx, -ny
	}
	in, hit := 0, 0
	for t := 0.05 * n; t <= 0.95*n; t++ {
		px, py := a[0]+dx*t/n, a[1]+dy*t/n
		seen, found := false, false
		for d := 2.0; d <= depth; d++ {
			x, y := int(math.Round(px+nx*d)), int(math.Round(py+ny*d))
			if x < 1 || y < 1 || x >= e.w-1 || y >= e.h-1 {
				continue
			}
			seen = true
			if e.dir[y*e.w+x] != 0 {
				found = true
				break
			}
		}
		if seen {
			in++
			if found {
				hit++
			}
		}
	}
	if in == 0 {
		return 1
	}
	return float64(hit) / float64(in)
}

// A document side can be missing from the detected lines: a light card on a light,
// low-contrast table shows the sides its shadow falls on and barely the others. When no
// whole quadrilateral is found, the search infers one missing side (inferQuad) from three
// seen ones: two parallel sides and the one across their ends; the fourth joins the two far
// ends where the parallel sides' edges stop.
const (
	// runGap is the longest gap (share of the search plane's shorter dimension) within one
	// run of edge hits along a line: a side's edge broken by noise, print touching it or a
	// bit of glare is one run, while a table line running on past the corner leaves it.
	runGap = 1.0 / 12
	// inferMargin is how far (share of the shorter dimension) an inferred corner must lie
	// inside the frame: a side that ends at the frame's border was cut, not seen to end.
	// docgen's good captures keep a margin of 3 % of the width (4 % of the height).
	inferMargin = 1.0 / 40
	// maxInferSkew is the largest angle in degrees between the inferred side and the seen
	// side opposite it: about the skew minOppositeRatio's 35° of tilt gives, with the
	// detector's error.
	maxInferSkew = 15
)

// sideRuns returns the runs (run) of every line that is not a border of the frame, which
// inferQuad and cornerQuad follow to a side's end: gaps under runGap, at least a tenth of
// minDim long.
func sideRuns(lines []line, minDim float64) [][]run {
	rs := make([][]run, len(lines))
	for i := range lines {
		if !lines[i].border {
			rs[i] = lines[i].runs(minDim*runGap, minDim/10)
		}
	}
	return rs
}

// run is a stretch of a line, positions lo..hi along it, on edges with gaps under runGap.
type run struct{ lo, hi float64 }

// runs returns l's runs of edge hits (of either polarity) at least minLen long.
func (l *line) runs(gap, minLen float64) []run {
	var out []run
	start, last := -1, -1
	for k := 0; k+1 < len(l.either); k++ {
		if l.either[k+1] == l.either[k] {
			continue
		}
		if start >= 0 && float64(k-last) > gap {
			if float64(last-start) >= minLen {
				out = append(out, run{l.t0 + float64(start), l.t0 + float64(last)})
			}
			start = -1
		}
		if start < 0 {
			start = k
		}
		last = k
	}
	if start >= 0 && float64(last-start) >= minLen {
		out = append(out, run{l.t0 + float64(start), l.t0 + float64(last)})
	}
	return out
}

// farEnd returns the position where the run of l through position t ends on the side away
// from t; false when no run passes within tol of t.
func farEnd(l *line, rs []run, t, tol float64) (end float64, ok bool) {
	for _, r := range rs {
		if t < r.lo-tol || t > r.hi+tol {
			continue
		}
		if t-r.lo > r.hi-t {
			return r.lo, true
		}
		return r.hi, true
	}
	return 0, false
}

// lineThrough returns the line through two points, marked inferred.
func lineThrough(x0, y0, x1, y1 float64) (line, bool) {
	dx, dy := x1-x0, y1-y0
	n := math.Hypot(dx, dy)
	if n < 1 {
		return line{}, false
	}
	c, s := dy/n, -dx/n // the normal
	rho := x0*c + y0*s
	if s < 0 || (s == 0 && c < 0) {
		c, s, rho = -c, -s, -rho
	}
	deg := int(math.Round(math.Atan2(s, c)*180/math.Pi)) % 180
	return line{deg: deg, c: c, s: s, rho: rho, inferred: true}, true
}

// inferQuad returns the best document quadrilateral wholly inside the q.w × q.h frame made
// of three seen lines and an inferred fourth side: for two parallel lines a and b and a
// line c across them, the runs of a and b through their corners with c are followed to
// their far ends, and the fourth side joins those ends. The quadrilateral must pass
// judgeQuad as a whole one (shape, the three seen sides supported with their ends, one
// polarity), the inferred side must be within maxInferSkew of c, and its corners at least
// inferMargin inside the frame. rs are the lines' runs (sideRuns). banded is the best that
// passes only with judgeQuad's shadow bands (a seen side on edges of either polarity), for
// a last resort. Each is nil when there is none.
func inferQuad(lines []line, rs [][]run, w, h int, minDim, frame float64) (best, banded *quadCand) {
	tol, margin := minDim/30, minDim*inferMargin
	fw, fh := float64(w-1), float64(h-1)
	cx, cy := fw/2, fh/2
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			a, b := &lines[i], &lines[j]
			if a.border || b.border || len(rs[i]) == 0 || len(rs[j]) == 0 ||
				angleDiff(a.deg, b.deg) > 20 || distanceAtCentre(*a, *b, cx, cy) < minDim/10 {
				continue
			}
			for k := range lines {
				c := &lines[k]
				if c.border || k == i || k == j || angleDiff(c.deg, meanAngle(a.deg, b.deg)) < 60 {
					continue
				}
				ax, ay, ok1 := intersect(a, c)
				bx, by, ok2 := intersect(b, c)
				if !ok1 || !ok2 {
					continue
				}
				ta, tb := a.param(ax, ay), b.param(bx, by)
				ea, ok1 := farEnd(a, rs[i], ta, tol)
				eb, ok2 := farEnd(b, rs[j], tb, tol)
				la, lb := math.Abs(ea-ta), math.Abs(eb-tb)
				if !ok1 || !ok2 || la < minDim/10 || lb < minDim/10 {
					continue
				}
				ex, ey := a.point(ea)
				fx, fy := b.point(eb)
				// Both ends on the same side of c.
				if (ex*c.c+ey*c.s-c.rho > 0) != (fx*c.c+fy*c.s-c.rho > 0) {
					continue
				}
				// The fourth side joins the two ends, or, when one run stops short (a faint
				// stretch of its edge), runs parallel to c through the farther end; judgeQuad
				// then checks that both parallel sides are on edges all the way.
				far := [2]float64{ex, ey}
				if lb > la {
					far = [2]float64{fx, fy}
				}
				var ds [2]line
				n := 0
				if d, ok := lineThrough(ex, ey, fx, fy); ok && angleDiff(d.deg, c.deg) <= maxInferSkew {
					ds[n], n = d, n+1
				}
				ds[n] = line{deg: c.deg, c: c.c, s: c.s, rho: far[0]*c.c + far[1]*c.s, inferred: true}
				n++
				for m := range n {
					if cand := inferredCandidate(a, c, b, &ds[m], w, h, margin, minDim, frame, false); cand != nil {
						if best == nil || cand.score > best.score {
							best = cand
						}
					} else if cand := inferredCandidate(a, c, b, &ds[m], w, h, margin, minDim, frame, true); cand != nil {
						if banded == nil || cand.score > banded.score {
							banded = cand
						}
					}
				}
			}
		}
	}
	return best, banded
}

// inferredCandidate judges the quadrilateral with sides a, c, b and the inferred d: nil
// unless convex, its corners at least margin inside the w × h frame and a whole document
// by judgeQuad (with its bands).
func inferredCandidate(a, c, b, d *line, w, h int, margin, minDim, frame float64, bands bool) *quadCand {
	fw, fh := float64(w-1), float64(h-1)
	sides := [4]*line{a, c, b, d}
	corners, ok := quadCorners(sides, w, h)
	if !ok {
		return nil
	}
	for _, p := range corners {
		if p[0] < margin || p[1] < margin || p[0] > fw-margin || p[1] > fh-margin {
			return nil
		}
	}
	cand, whole := judgeQuad(corners, sides, minDim, frame, fw, fh, bands)
	if cand == nil || !whole || !cand.inside {
		return nil
	}
	return cand
}

// farCornerSlack is how far (share of the search plane's shorter dimension) beyond the
// frame cornerQuad's inferred far corner may lie: a calibration capture of docgen (a chip
// card's back at 5° of rotation, its far corner 7 % of the width from the frame's edge) put
// the parallelogram's corner 5.4 % of the shorter dimension beyond the card's.
const farCornerSlack = 1.0 / 16

// maxAnchorSkew is the largest angle in degrees between a side of cornerQuad's anchor (a box
// printed on the document) and the document's side parallel to it: perspective turns a
// card's sides against each other, and the photo printed by its left side lay 5° off its
// seen right side on a light card photographed on pale stone (4 sent it back).
const maxAnchorSkew = 6

// Without a box printed on the document to anchor it (the back of a vehicle registration
// prints none), cornerQuad's inferred sides must have bare surface outside them: a card cut
// by the frame's edge, whose seen sides' edges break where print or the background's shading
// crosses them, puts an inferred side across its own print. clutterDepth is the depth of the
// band looked at outside each inferred side (share of the shorter dimension, 5 %), and
// maxOutsideClutter the largest share of the side along which an edge may lie in it. 0.4:
// on docgen's calibration captures and photographs of light cards on veined stone, the
// cards' inferred sides measured 0–0.24 (a vein crossing), the cut-off cards' 0.40–1.0 with
// the most cluttered of the two sides at 0.73 and more.
const (
	clutterDepth      = 1.0 / 20
	maxOutsideClutter = 0.4
)

// cornerQuad infers a document with two unseen sides from the two seen sides that meet at
// one of its corners: a light card on a light table of nearly its hue shows only the sides
// its shadow falls on. With an anchor (a box printed on the document, its photo or a frame
// on its back, found whole but too small to be the document), both seen lines must be
// parallel to sides of the anchor (maxAnchorSkew) and clear of it (minAnchorClearance), and
// the document must contain it (an inferred side a little short of it is moved out to it:
// reach); without one (nil), the surface outside both inferred sides must be bare
// (maxOutsideClutter). For two seen lines a and c across each other, the runs of both
// through their corner are followed to their far ends (where the line has no further run:
// it ended, not broke), or, when a run reaches the frame's edge and makes no document, to the
// end of its last dense stretch (denseEnd), and the document is the parallelogram they span.
// It must keep the seen sides' far ends
// inferMargin inside the frame (a side cut by the frame is not seen to end) and the far
// corner within farCornerSlack of it, and pass judgeQuad as a whole one (shape, the two
// seen sides supported to their ends, each of one polarity, or with bands set, of either:
// judgeQuad's shadow bands). e is the edge map the lines were found on, rs the
// lines' runs (sideRuns). nil when there is none.
func cornerQuad(e edgeMap, lines []line, rs [][]run, anchor *quadCand, w, h int, minDim, frame float64, bands bool) *quadCand {
	tol, margin := minDim/30, minDim*inferMargin
	var anchorSides []line
	for k := range 4 {
		if anchor == nil {
			break
		}
		p, q := anchor.corners[k], anchor.corners[(k+1)%4]
		l, ok := lineThrough(p[0], p[1], q[0], q[1])
		if !ok {
			return nil
		}
		anchorSides = append(anchorSides, l)
	}
	parallelToAnchor := func(deg int) bool {
		if anchor == nil {
			return true
		}
		for _, s := range anchorSides {
			if angleDiff(s.deg, deg) <= maxAnchorSkew {
				return true
			}
		}
		return false
	}
	var best *quadCand
	for i := range lines {
		for j := range lines {
			a, c := &lines[i], &lines[j]
			if i == j || len(rs[i]) == 0 || len(rs[j]) == 0 || angleDiff(a.deg, c.deg) < 60 ||
				!parallelToAnchor(a.deg) || !parallelToAnchor(c.deg) ||
				(anchor != nil && (!clearOf(a, anchor, minDim*minAnchorClearance) || !clearOf(c, anchor, minDim*minAnchorClearance))) {
				continue
			}
			px, py, ok := intersect(a, c)
			if !ok {
				continue
			}
			ta, tc := a.param(px, py), c.param(px, py)
			ea, ok1 := farEnd(a, rs[i], ta, tol)
			ec, ok2 := farEnd(c, rs[j], tc, tol)
			if !ok1 || !ok2 || runsBeyond(a, rs[i], ta, ea) || runsBeyond(c, rs[j], tc, ec) {
				continue
			}
			// The run's end first; then, when the run reaches the frame's edge, the end of
			// its last dense stretch (denseEnd): texture touching the line just past the
			// corner (a vein of the stone) carries the run on to the edge, beyond the card.
			endsA, endsC := []float64{ea}, []float64{ec}
			if d := a.denseEnd(ta, ea, minDim*minDenseStretch); d != ea && atFrameEdge(a, ea, w, h, margin) {
				endsA = append(endsA, d)
			}
			if d := c.denseEnd(tc, ec, minDim*minDenseStretch); d != ec && atFrameEdge(c, ec, w, h, margin) {
				endsC = append(endsC, d)
			}
		ends:
			for _, ea := range endsA {
				for _, ec := range endsC {
					if cand := cornerCandidate(e, a, c, ea, ec, anchor, w, h, minDim, frame, bands); cand != nil {
						if best == nil || cand.score > best.score {
							best = cand
						}
						break ends
					}
				}
			}
		}
	}
	return best
}

// cornerCandidate judges the document cornerQuad infers from the seen lines a and c, across
// each other, followed from their crossing to positions ea (along a) and ec (along c): nil
// unless both stretches are at least a tenth of minDim, the far corners inside the frame
// (the one opposite the crossing within farCornerSlack), the anchor (when given) inside it,
// it is a whole document by judgeQuad and, without an anchor, the surface outside its
// inferred sides is bare. bands is judgeQuad's.
func cornerCandidate(e edgeMap, a, c *line, ea, ec float64, anchor *quadCand, w, h int, minDim, frame float64, bands bool) *quadCand {
	margin := minDim * inferMargin
	fw, fh := float64(w-1), float64(h-1)
	px, py, _ := intersect(a, c)
	if math.Abs(ea-a.param(px, py)) < minDim/10 || math.Abs(ec-c.param(px, py)) < minDim/10 {
		return nil
	}
	ex, ey := a.point(ea)
	fx, fy := c.point(ec)
	// The side opposite c passes through a's far end, the one opposite a through c's, each
	// parallel to the seen side across from it.
	d1 := line{deg: c.deg, c: c.c, s: c.s, rho: ex*c.c + ey*c.s, inferred: true}
	d2 := line{deg: a.deg, c: a.c, s: a.s, rho: fx*a.c + fy*a.s, inferred: true}
	if anchor != nil && (!d1.reach(px, py, anchor, minDim*maxAnchorReach) || !d2.reach(px, py, anchor, minDim*maxAnchorReach)) {
		return nil
	}
	sides := [4]*line{a, &d1, &d2, c}
	corners, ok := quadCorners(sides, w, h)
	if !ok {
		return nil
	}
	// The seen sides' far ends must lie inside the frame; the corner opposite P, where two
	// inferred sides meet, is placed as a parallelogram's, which perspective (the far side
	// of a tilted card is the shorter) puts further out than the card's: it may lie up to
	// farCornerSlack beyond the frame.
	for k, p := range corners {
		m := margin
		if k == 2 {
			m = -farCornerSlack * minDim
		}
		if p[0] < m || p[1] < m || p[0] > fw-m || p[1] > fh-m {
			return nil
		}
	}
	if anchor != nil && !containsQuad(corners, anchor.corners) {
		return nil
	}
	cand, whole := judgeQuad(corners, sides, minDim, frame, fw, fh, bands)
	if cand == nil || !whole {
		return nil
	}
	if anchor == nil && max(e.clutterOutside(corners, 1, minDim*clutterDepth), e.clutterOutside(corners, 2, minDim*clutterDepth)) > maxOutsideClutter {
		return nil
	}
	cand.inside = true
	return cand
}

// minAnchorClearance is how far (share of the search plane's shorter dimension, 4 px of
// 240) every corner of cornerQuad's anchor must lie from each seen side: a box's own sides,
// extended along print, are not the document's.
const minAnchorClearance = 1.0 / 60

// clearOf reports whether anchor lies wholly on one side of l, every corner at least
// clearance from it: a seen side of a document is not a side of the box printed on it.
func clearOf(l *line, anchor *quadCand, clearance float64) bool {
	var near, far int
	for _, p := range anchor.corners {
		switch d := p[0]*l.c + p[1]*l.s - l.rho; {
		case d >= clearance:
			far++
		case d <= -clearance:
			near++
		}
	}
	return near == 4 || far == 4
}

// maxAnchorReach is how far (share of the search plane's shorter dimension, about 10 px of
// 240) reach may move an inferred side out to take in the anchor: a seen side's edge fades
// along the card's rounded corner, and a parallelogram's side, parallel to the seen one
// across, misses the perspective's few degrees, so the photo near a card's edge can poke
// out of the side inferred.
const maxAnchorReach = 1.0 / 24

// reach moves the inferred side l out just beyond every corner of anchor (by a pixel) when
// one lies outside it, the document lying on the side of (ix, iy), and reports whether that
// took at most limit.
func (l *line) reach(ix, iy float64, anchor *quadCand, limit float64) bool {
	inwards := math.Copysign(1, ix*l.c+iy*l.s-l.rho) // the document lies this way along the normal
	need := 0.0
	for _, p := range anchor.corners {
		if out := (l.rho - (p[0]*l.c + p[1]*l.s)) * inwards; out > need {
			need = out
		}
	}
	if need == 0 {
		return true
	}
	need++
	if need > limit {
		return false
	}
	l.rho -= inwards * need
	return true
}

// atFrameEdge reports whether position t of l lies within margin of the w × h frame's edge.
func atFrameEdge(l *line, t float64, w, h int, margin float64) bool {
	x, y := l.point(t)
	return x < margin || y < margin || x > float64(w-1)-margin || y > float64(h-1)-margin
}

// minDenseStretch is the shortest stretch of edge hits (share of the search plane's shorter
// dimension, about 12 px of 240) that denseEnd takes for a side's own edge; minDenseGap is
// the shortest gap, in samples, that parts two stretches.
const (
	minDenseStretch = 1.0 / 20
	minDenseGap     = 3
)

// denseEnd returns the far end of the last stretch of l's edge hits, between position t and
// the end of its run at end, that is at least minLen long (stretches parted by gaps of
// minDenseGap samples or more): the shorter stretches beyond it are texture touching the
// line. end when there is none.
func (l *line) denseEnd(t, end, minLen float64) float64 {
	hit := func(p float64) bool {
		k := int(math.Round(p - l.t0))
		return k >= 0 && k+1 < len(l.either) && l.either[k+1] != l.either[k]
	}
	step := 1.0
	if end < t {
		step = -1
	}
	// Walk from the end back towards t, stretch by stretch.
	for p := end; (p-t)*step > 0; {
		if !hit(p) {
			p -= step
			continue
		}
		far, gap := p, 0
		for ; (p-t)*step > 0 && gap < minDenseGap; p -= step {
			if hit(p) {
				gap = 0
			} else {
				gap++
			}
		}
		if near := p + step*float64(gap); math.Abs(far-near) >= minLen {
			return far
		}
	}
	return end
}

// runsBeyond reports whether l has another run past the far end at position end of the run
// through position t: a side that stops and goes on (broken by print, a band of another
// colour or a glare spot) has not ended there.
func runsBeyond(l *line, rs []run, t, end float64) bool {
	for _, r := range rs {
		if (end > t && r.lo > end) || (end < t && r.hi < end) {
			return true
		}
	}
	return false
}

// containsQuad reports whether every corner of inner lies inside the convex quadrilateral
// outer.
func containsQuad(outer, inner [4][2]float64) bool {
	for _, p := range inner {
		if !insideQuad(outer, p) {
			return false
		}
	}
	return true
}

// insideQuad reports whether point p lies inside the convex quadrilateral q (or on its
// sides).
func insideQuad(q [4][2]float64, p [2]float64) bool {
	sign := 0.0
	for k := range 4 {
		a, b := q[k], q[(k+1)%4]
		cross := (b[0]-a[0])*(p[1]-a[1]) - (b[1]-a[1])*(p[0]-a[0])
		if sign != 0 && cross*sign < 0 {
			return false
		}
		if cross != 0 {
			sign = cross
		}
	}
	return true
}

// encloses reports whether the document candidate outer is a quarter larger than inner, or
// more, and holds it (inner's corners taken 3 % of the way in towards its centre, for the few
// pixels by which two passes place the same side apart): inner is then a box printed on the
// document, not the document with its sides placed a little apart (on its shadow's far edge).
func encloses(outer, inner *quadCand) bool {
	if outer.area < 1.25*inner.area {
		return false
	}
	var cx, cy float64
	for _, p := range inner.corners {
		cx, cy = cx+p[0]/4, cy+p[1]/4
	}
	var in [4][2]float64
	for i, p := range inner.corners {
		in[i] = [2]float64{cx + 0.97*(p[0]-cx), cy + 0.97*(p[1]-cy)}
	}
	return containsQuad(outer.corners, in)
}
