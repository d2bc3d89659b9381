package imagequality

import "math"

// edgeMap holds the thinned edges of a plane. dir[i] is 0 where pixel i is no edge, else 1 +
// the orientation of its gradient in whole degrees 0..179 (the edge normal's angle modulo
// 180°, measured from the +x axis towards +y). weight[i] is the edge's strength: its
// gradient in luma levels per pixel, capped at full (maxEdgeWeight, or faintWeight in the
// faint pass). rising[i] is true when the gradient points along the normal at that angle
// (luma grows that way), false when against.
type edgeMap struct {
	w, h   int
	dir    []uint8
	weight []uint8
	rising []bool
	full   float32 // the weight that is one full vote in houghLines
}

// maxEdgeWeight caps an edge's weight: a document's outline against most surfaces is at
// least this steep, while wood grain, fabric and shadows mostly are not.
const maxEdgeWeight = 32

// at returns the orientation code of (x, y), 0 outside the map.
func (e edgeMap) at(x, y int) uint8 {
	if x < 0 || y < 0 || x >= e.w || y >= e.h {
		return 0
	}
	return e.dir[y*e.w+x]
}

// halve returns p area-averaged to half its width and height (each rounded down, at least 1).
func halve(p plane) plane {
	w, h := max(1, p.w/2), max(1, p.h/2)
	out := plane{w: w, h: h, pix: make([]float32, w*h)}
	if p.w < 2 || p.h < 2 {
		copy(out.pix, p.pix)
		return out
	}
	for y := range h {
		r0, r1 := p.pix[2*y*p.w:], p.pix[(2*y+1)*p.w:]
		for x := range w {
			out.pix[y*w+x] = (r0[2*x] + r0[2*x+1] + r1[2*x] + r1[2*x+1]) / 4
		}
	}
	return out
}

// smooth returns p filtered with the separable binomial kernel [1 2 1]/4 in both
// directions (edges replicated).
func smooth(p plane) plane {
	w, h := p.w, p.h
	tmp := make([]float32, w*h)
	for y := range h {
		row := p.pix[y*w : (y+1)*w]
		for x := range w {
			l, r := row[max(0, x-1)], row[min(w-1, x+1)]
			tmp[y*w+x] = (l + 2*row[x] + r) / 4
		}
	}
	out := plane{w: w, h: h, pix: make([]float32, w*h)}
	for y := range h {
		up, down := tmp[max(0, y-1)*w:], tmp[min(h-1, y+1)*w:]
		mid := tmp[y*w:]
		for x := range w {
			out.pix[y*w+x] = (up[x] + 2*mid[x] + down[x]) / 4
		}
	}
	return out
}

// findEdges returns the edges of p: pixels whose Sobel gradient (in luma levels per pixel)
// is at least minGrad and is a local maximum across the edge (non-maximum suppression along
// the gradient, quantised to four directions); an edge of strength full or more is one full
// vote in houghLines. The one-pixel border is never an edge.
func findEdges(p plane, minGrad, full float32) edgeMap {
	w, h := p.w, p.h
	e := edgeMap{w: w, h: h, full: full, dir: make([]uint8, w*h), weight: make([]uint8, w*h), rising: make([]bool, w*h)}
	if w < 3 || h < 3 {
		return e
	}
	s := smooth(p)
	mag := make([]float32, w*h)
	gxs := make([]float32, w*h)
	gys := make([]float32, w*h)
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			a, b, c := s.pix[i-w-1], s.pix[i-w], s.pix[i-w+1]
			d, f := s.pix[i-1], s.pix[i+1]
			g, k, l := s.pix[i+w-1], s.pix[i+w], s.pix[i+w+1]
			gx := (c + 2*f + l - a - 2*d - g) / 8
			gy := (g + 2*k + l - a - 2*b - c) / 8
			gxs[i], gys[i] = gx, gy
			mag[i] = float32(math.Sqrt(float64(gx*gx + gy*gy)))
		}
	}
	const tan22, tan67 = 0.41421356, 2.41421356
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			m := mag[i]
			if m < minGrad {
				continue
			}
			gx, gy := gxs[i], gys[i]
			ax, ay := abs32(gx), abs32(gy)
			var n1, n2 int // neighbours across the edge
			switch {
			case ay <= tan22*ax:
				n1, n2 = i-1, i+1
			case ay >= tan67*ax:
				n1, n2 = i-w, i+w
			case (gx > 0) == (gy > 0):
				n1, n2 = i-w-1, i+w+1
			default:
				n1, n2 = i-w+1, i+w-1
			}
			if m < mag[n1] || m < mag[n2] {
				continue
			}
			deg := math.Atan2(float64(gy), float64(gx)) * 180 / math.Pi
			o := int(math.Round(deg))
			e.rising[i] = o >= 0 && o < 180
			o = ((o % 180) + 180) % 180
			e.dir[i] = uint8(o + 1)
			e.weight[i] = uint8(min(m, full))
		}
	}
	return e
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}
