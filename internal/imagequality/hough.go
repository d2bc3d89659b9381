package imagequality

import (
	"cmp"
	"math"
	"slices"
)

// line is the straight line x·cos θ + y·sin θ = rho in plane coordinates, θ in [0°, 180°).
// A border line is one of the frame's four borders: it stands for a document side that lies
// on or beyond the edge of the picture, and has no edge profile.
type line struct {
	deg    int     // θ in whole degrees
	c, s   float64 // cos θ, sin θ
	rho    float64
	votes  float32
	border bool
	// inferred marks a side that was not seen: placed where two parallel seen sides end
	// (see inferQuad); it has no edge profile and is not judged for support.
	inferred bool
	// rise and fall are prefix sums of edge hits along the line, sampled every pixel from
	// t0: rise[k] counts the samples t0, …, t0+k-1 near an edge whose luma grows along the
	// normal (cos θ, sin θ), fall those near one whose luma falls, either those near an edge
	// of either kind; t is the position along the direction (−sin θ, cos θ) from the foot of
	// the perpendicular from the origin.
	t0                 float64
	rise, fall, either []int32
}

// point returns the point of l at position t.
func (l *line) point(t float64) (float64, float64) {
	return l.rho*l.c - t*l.s, l.rho*l.s + t*l.c
}

// param returns the position along l of the projection of (x, y).
func (l *line) param(x, y float64) float64 { return -x*l.s + y*l.c }

// support returns, for the segment of l between positions ta and tb, the number of samples
// inside the frame and how many of them lie on an edge of the line's orientation whose luma
// rises, and falls, along the line's normal, and on an edge of either kind (a sample near
// both counts once).
func (l *line) support(ta, tb float64) (inside, rise, fall, either int) {
	if ta > tb {
		ta, tb = tb, ta
	}
	lo := int(math.Ceil(ta - l.t0))
	hi := int(math.Floor(tb-l.t0)) + 1
	lo, hi = max(lo, 0), min(hi, len(l.rise)-1)
	if hi <= lo {
		return 0, 0, 0, 0
	}
	// Samples outside the frame are not in the profile: count only those inside.
	return hi - lo, int(l.rise[hi] - l.rise[lo]), int(l.fall[hi] - l.fall[lo]), int(l.either[hi] - l.either[lo])
}

// newLine returns the line of angle deg at distance rho from the origin.
func newLine(deg int, rho float64) line {
	a := float64(deg) * math.Pi / 180
	return line{deg: deg, c: math.Cos(a), s: math.Sin(a), rho: rho}
}

// profile fills l's edge-hit profiles from e: a sample hits when an edge pixel whose
// orientation is within tolerance degrees of the line's lies in its 3×3 neighbourhood, a
// rising or a falling hit as that pixel's luma grows or falls along the line's normal.
// Only samples at least one pixel inside the frame are kept.
func (l *line) profile(e edgeMap, tolerance int) {
	// The positions where the line is inside the frame [1, w-2] × [1, h-2].
	tmin, tmax := math.Inf(-1), math.Inf(1)
	clip := func(p0, dp, lo, hi float64) {
		if math.Abs(dp) < 1e-9 {
			if p0 < lo || p0 > hi {
				tmin, tmax = 1, 0
			}
			return
		}
		a, b := (lo-p0)/dp, (hi-p0)/dp
		if a > b {
			a, b = b, a
		}
		tmin, tmax = math.Max(tmin, a), math.Min(tmax, b)
	}
	x0, y0 := l.rho*l.c, l.rho*l.s
	clip(x0, -l.s, 1, float64(e.w-2))
	clip(y0, l.c, 1, float64(e.h-2))
	if tmax < tmin {
		l.rise, l.fall, l.either = []int32{0}, []int32{0}, []int32{0}
		return
	}
	l.t0 = math.Ceil(tmin)
	n := int(math.Floor(tmax)-l.t0) + 1
	l.rise, l.fall, l.either = make([]int32, n+1), make([]int32, n+1), make([]int32, n+1)
	for k := range n {
		x, y := l.point(l.t0 + float64(k))
		xi, yi := int(math.Round(x)), int(math.Round(y))
		var rise, fall int32
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				d := e.at(xi+dx, yi+dy)
				if d == 0 || angleDiff(int(d)-1, l.deg) > tolerance {
					continue
				}
				// The pixel's normal points the line's way unless the two angles sit on
				// either side of the 0°/180° wrap.
				same := abs(int(d)-1-l.deg) <= 90
				if e.rising[(yi+dy)*e.w+xi+dx] == same {
					rise = 1
				} else {
					fall = 1
				}
			}
		}
		l.rise[k+1], l.fall[k+1], l.either[k+1] = l.rise[k]+rise, l.fall[k]+fall, l.either[k]+max(rise, fall)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// angleDiff returns the difference of two orientations in degrees, modulo 180, in 0..90.
func angleDiff(a, b int) int {
	d := ((a-b)%180 + 180) % 180
	return min(d, 180-d)
}

// houghLines returns up to maxLines straight lines of e with at least minVotes votes,
// strongest first. Each edge pixel votes its weight over e.full (a full-strength edge
// pixel is one vote), and only for the orientations within ±2° of its own gradient's, so
// faint texture and text add little clutter; a line's votes are those of a band 3 px wide. Near-duplicates (within 2° and 2 px at
// the frame's centre) are dropped.
func houghLines(e edgeMap, minVotes, maxLines int) []line {
	diag := int(math.Ceil(math.Hypot(float64(e.w), float64(e.h))))
	nRho := 2*diag + 1
	var cosT, sinT [180]float64
	for t := range 180 {
		a := float64(t) * math.Pi / 180
		cosT[t], sinT[t] = math.Cos(a), math.Sin(a)
	}
	acc := make([]float32, 180*nRho)
	for y := range e.h {
		for x := range e.w {
			d := e.dir[y*e.w+x]
			if d == 0 {
				continue
			}
			o := int(d) - 1
			vote := float32(e.weight[y*e.w+x]) / e.full
			for k := -2; k <= 2; k++ {
				t := (o + k + 180) % 180
				r := int(math.Round(float64(x)*cosT[t]+float64(y)*sinT[t])) + diag
				acc[t*nRho+r] += vote
			}
		}
	}
	// A thinned edge zigzags between neighbouring rows: count each line's votes over a band
	// three rho bins wide.
	band := make([]float32, len(acc))
	for t := range 180 {
		row, out := acc[t*nRho:(t+1)*nRho], band[t*nRho:(t+1)*nRho]
		for r := range nRho {
			v := row[r]
			if r > 0 {
				v += row[r-1]
			}
			if r < nRho-1 {
				v += row[r+1]
			}
			out[r] = v
		}
	}
	acc = band
	// Local maxima over θ ± 2°, rho ± 2 px (θ wraps around with rho negated).
	var peaks []line
	for t := range 180 {
		for r := range nRho {
			v := acc[t*nRho+r]
			if v < float32(minVotes) {
				continue
			}
			isMax := true
		scan:
			for dt := -2; dt <= 2; dt++ {
				tt, rr := t+dt, r
				if tt < 0 || tt >= 180 {
					tt, rr = (tt+180)%180, 2*diag-r
				}
				for dr := -2; dr <= 2; dr++ {
					q := rr + dr
					if (dt == 0 && dr == 0) || q < 0 || q >= nRho {
						continue
					}
					n := acc[tt*nRho+q]
					// Ties go to the cell scanned first.
					if n > v || (n == v && (tt*nRho+q) < t*nRho+r) {
						isMax = false
						break scan
					}
				}
			}
			if isMax {
				l := newLine(t, float64(r-diag))
				l.votes = v
				peaks = append(peaks, l)
			}
		}
	}
	slices.SortStableFunc(peaks, func(a, b line) int { return cmp.Compare(b.votes, a.votes) })
	cx, cy := float64(e.w)/2, float64(e.h)/2
	var out []line
	var perBucket [18]int
	for _, p := range peaks {
		if perBucket[p.deg/10] == maxPerBucket {
			continue
		}
		dup := false
		for _, q := range out {
			if angleDiff(p.deg, q.deg) <= 2 && distanceAtCentre(p, q, cx, cy) <= 2 {
				dup = true
				break
			}
		}
		if !dup {
			perBucket[p.deg/10]++
			out = append(out, p)
			if len(out) == maxLines {
				break
			}
		}
	}
	return out
}

// maxPerBucket is the most lines houghLines keeps within one 10° range of orientation.
const maxPerBucket = 10

// distanceAtCentre returns the distance from the point of b nearest (cx, cy) to line a.
func distanceAtCentre(a, b line, cx, cy float64) float64 {
	d := cx*b.c + cy*b.s - b.rho
	px, py := cx-d*b.c, cy-d*b.s
	return math.Abs(px*a.c + py*a.s - a.rho)
}

// intersect returns the crossing point of two lines, false when they are (near) parallel.
func intersect(a, b *line) (float64, float64, bool) {
	det := a.c*b.s - a.s*b.c
	if math.Abs(det) < 1e-6 {
		return 0, 0, false
	}
	return (a.rho*b.s - a.s*b.rho) / det, (a.c*b.rho - a.rho*b.c) / det, true
}
