package imagequality

import (
	"image"
	"math"
)

// Glare is measured as specular highlights, not as white area.
//
// Light reflected by a laminated card (or by skin) adds a smooth bump of light to the
// picture: where the bump is strong the picture clips to white and the print under it is
// gone (a solid saturated core, no ink visible inside); around the core the bump falls off
// smoothly over a distance that grows with the spot (the halo), so the paper level just
// outside the core is still brighter than the paper farther out. A white area (an MRZ zone,
// a light card, white paper, a white wall) is different on both counts: its print stays
// visible inside it, and where it ends the luma steps down within a pixel or two (to print,
// to the card's edge) or does not fall at all (to a slightly less white surface).
//
// specularGlare finds the components of saturated paper (the luma's 5×5 local maximum at or
// above satLevel, so thin print inside does not split them) and the largest disc of truly
// saturated luma inside each (the part where print is hidden, found with a chamfer distance
// transform), and casts glareRays rays from that disc's centre over the paper level. Along
// each ray, from where the paper level drops below satLevel, it looks at the next
// 12–24 px (the core's radius, clamped): the ray sees a halo when the level falls there by
// at least HaloMinFall and less than HaloStepShare of that fall happens within HaloSharpPx
// pixels of the edge. A component is a specular highlight when its hidden core is at least
// MinSpotRadius pixels in radius and at least MinHaloRays of its rays see a halo. The glare
// score is the share of the frame in the saturated cores of the highlights.
//
// Limits (see TestGlareSet): a highlight on a card whose paper is itself clipped white (a
// white card, over-exposed) has no paper left to show a halo on and merges with the card;
// a highlight that lands on a white MRZ zone merges with the zone. Both are mostly missed.
// Specular (in Thresholds) defines the measure; the pass limits are Thresholds.MaxGlare and
// Thresholds.MaxFaceGlare.

const (
	satLevel = 250 // luma at or above which the working plane is saturated
	// envRadius is the radius of the local-maximum window that gives the paper level: at
	// the working width, print strokes are 1–3 px wide, so a 5×5 maximum sees the paper
	// beside them.
	envRadius = 2
	glareRays = 16 // rays cast from a core's centre
	// maxReach is the farthest a ray looks past a core's edge, px: a ray looks twice the
	// core's radius (at least 12 px) past it, for the halo of a large highlight falls over
	// a distance that grows with it (a spot of radius 33 px fell 5 levels in its first 24
	// px and 9 in 64).
	maxReach = 64
)

// Specular says what the glare measure counts as a specular highlight; it is part of
// Thresholds, and DefaultSpecular documents each figure.
type Specular struct {
	// MinSpotRadius is the smallest hidden-core radius, in working pixels, of a highlight
	// worth judging: 3 px at the working width is a quarter of a field's text height on a
	// card filling three quarters of the frame; smaller highlights (TestGlareSet's glints)
	// hide a stroke, not a letter.
	MinSpotRadius float64
	// MinHaloRays is how many of the 16 rays must see a halo: a highlight near a card's edge
	// or over the MRZ loses the rays that cross them (4–7 left on TestGlareSet), while the
	// white areas of its good captures showed at most 2.
	MinHaloRays int
	// HaloSharpPx: a step (print, a card's edge) falls 90 % of the way within 3 px at the
	// working width even through the blur the gate still accepts (Gaussian σ ≤ 1 px: the
	// 10–90 % width of a blurred step is 2.6σ); a halo takes longer.
	HaloSharpPx int
	// HaloMinFall is the least fall of the paper level, in luma, for a ray to say anything
	// (6: a halo onto a light card's 240-level paper falls only 9–15; the local maximum's
	// noise is 1–2 levels).
	HaloMinFall float64
	// HaloStepShare: a step does more than 90 % of its fall within HaloSharpPx; a ray whose
	// level has done less than 60 % there is still falling, as a halo does.
	HaloStepShare float64
}

// DefaultSpecular returns the definition of a specular highlight documented on Specular.
func DefaultSpecular() Specular {
	return Specular{MinSpotRadius: 3, MinHaloRays: 4, HaloSharpPx: 3, HaloMinFall: 6, HaloStepShare: 0.6}
}

// spotStats describes one saturated component.
type spotStats struct {
	area      int     // pixels of the component (of the paper-level mask)
	core      int     // truly saturated pixels in it
	radius    float64 // radius of the largest wholly saturated disc (the hidden core)
	cx, cy    int     // that disc's centre
	halo      int     // rays that see a halo
	specular  bool
	touchEdge bool
}

// specularGlare returns the fraction of the plane covered by specular highlights (the
// saturated cores of components judged specular), and the components it judged (for tests).
func (p plane) specularGlare(sp Specular) (float64, []spotStats) {
	n := len(p.pix)
	if n == 0 || p.w < 2*envRadius+3 || p.h < 2*envRadius+3 {
		return 0, nil
	}
	// Fast exit: not one saturated pixel, no glare.
	sat := 0
	box := image.Rectangle{Min: image.Pt(p.w, p.h)}
	for y := range p.h {
		for x, v := range p.pix[y*p.w : (y+1)*p.w] {
			if v >= satLevel {
				sat++
				box.Min.X, box.Max.X = min(box.Min.X, x), max(box.Max.X, x+1)
				box.Min.Y, box.Max.Y = min(box.Min.Y, y), max(box.Max.Y, y+1)
			}
		}
	}
	if float64(sat) < math.Pi*sp.MinSpotRadius*sp.MinSpotRadius {
		return 0, nil
	}
	// Everything the measure reads lies within the saturated pixels' bounding box grown by
	// the local maximum's radius and a ray's reach past the edge.
	roi := box.Inset(-(envRadius + maxReach + 2)).Intersect(image.Rect(0, 0, p.w, p.h))
	env := p.localMax(envRadius, roi)
	dist := p.saturatedDistance(roi)

	seen := make([]bool, n)
	var stack []int
	var spots []spotStats
	covered := 0
	for start := range n {
		if seen[start] || env.pix[start] < satLevel {
			continue
		}
		seen[start] = true
		stack = append(stack[:0], start)
		s := spotStats{}
		best := uint16(0)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			s.area++
			if p.pix[i] >= satLevel {
				s.core++
			}
			if dist[i] > best {
				best, s.cx, s.cy = dist[i], i%p.w, i/p.w
			}
			x, y := i%p.w, i/p.w
			if x == 0 || y == 0 || x == p.w-1 || y == p.h-1 {
				s.touchEdge = true
			}
			if x > 0 && !seen[i-1] && env.pix[i-1] >= satLevel {
				seen[i-1] = true
				stack = append(stack, i-1)
			}
			if x < p.w-1 && !seen[i+1] && env.pix[i+1] >= satLevel {
				seen[i+1] = true
				stack = append(stack, i+1)
			}
			if y > 0 && !seen[i-p.w] && env.pix[i-p.w] >= satLevel {
				seen[i-p.w] = true
				stack = append(stack, i-p.w)
			}
			if y < p.h-1 && !seen[i+p.w] && env.pix[i+p.w] >= satLevel {
				seen[i+p.w] = true
				stack = append(stack, i+p.w)
			}
		}
		// dist is a 3-4 chamfer distance to the nearest unsaturated pixel: /3 is pixels.
		s.radius = float64(best) / 3
		if s.radius >= sp.MinSpotRadius {
			s.halo = env.haloRays(s.cx, s.cy, s.radius, sp)
			s.specular = s.halo >= sp.MinHaloRays
		}
		if s.specular {
			covered += s.core
		}
		spots = append(spots, s)
	}
	return float64(covered) / float64(n), spots
}

// haloRays casts glareRays rays from (cx, cy) over the paper-level plane e and returns how
// many see a halo: the level drops below satLevel at some distance t0, and over the next
// max(8, radius) pixels it falls by at least HaloMinFall, less than HaloStepShare of that fall
// within the first HaloSharpPx pixels (a step to print or to a card's edge does nearly all
// of its fall there). A ray that leaves the frame, or finds no edge within maxWalk, says
// nothing.
func (e plane) haloRays(cx, cy int, radius float64, sp Specular) int {
	reach := int(min(maxReach, max(12, 2*radius)))
	maxWalk := float64(e.w + e.h)
	halo := 0
	for k := range glareRays {
		sin, cos := math.Sincos(2 * math.Pi * float64(k) / glareRays)
		at := func(t float64) (float32, bool) {
			x, y := int(math.Round(float64(cx)+t*cos)), int(math.Round(float64(cy)+t*sin))
			if x < 0 || y < 0 || x >= e.w || y >= e.h {
				return 0, false
			}
			return e.pix[y*e.w+x], true
		}
		t0 := -1.0
		for t := 0.0; t <= maxWalk; t++ {
			v, ok := at(t)
			if !ok {
				break
			}
			if v < satLevel {
				t0 = t
				break
			}
		}
		if t0 < 0 {
			continue
		}
		// lows[d] is the lowest level over the first d+1 samples past the edge; the
		// steepest fall is the most it drops over HaloSharpPx pixels anywhere along the ray
		// (from satLevel at the edge): a step to print, to a photo or to the card's edge,
		// met at the edge or further out, does nearly all of its fall there.
		lows := make([]float32, 0, reach+1)
		low, steepest := float32(satLevel), float32(0)
		inside := true
		for d := 0; d <= reach; d++ {
			v, ok := at(t0 + float64(d))
			if !ok {
				inside = false
				break
			}
			low = min(low, v)
			lows = append(lows, low)
			before := float32(satLevel)
			if d > sp.HaloSharpPx {
				before = lows[d-sp.HaloSharpPx-1]
			}
			steepest = max(steepest, before-low)
		}
		fall := satLevel - low
		if !inside || float64(fall) < sp.HaloMinFall {
			continue
		}
		if float64(steepest) < sp.HaloStepShare*float64(fall) {
			halo++
		}
	}
	return halo
}

// localMax returns the plane's maximum over (2r+1)×(2r+1) windows (separable; clipped at
// the borders), inside roi only (0 elsewhere). Comparisons are written out: the max builtin's NaN handling makes it several
// times slower on float32.
func (p plane) localMax(r int, roi image.Rectangle) plane {
	tmp := make([]float32, len(p.pix))
	for y := max(0, roi.Min.Y-r); y < min(p.h, roi.Max.Y+r); y++ {
		row := p.pix[y*p.w : (y+1)*p.w]
		out := tmp[y*p.w : (y+1)*p.w]
		for x := roi.Min.X; x < roi.Max.X; x++ {
			lo, hi := max(0, x-r), min(p.w-1, x+r)
			win := row[lo : hi+1]
			m := win[0]
			for _, v := range win[1:] {
				if v > m {
					m = v
				}
			}
			out[x] = m
		}
	}
	res := plane{w: p.w, h: p.h, pix: make([]float32, len(p.pix))}
	for y := roi.Min.Y; y < roi.Max.Y; y++ {
		y0, y1 := max(0, y-r), min(p.h-1, y+r)
		out := res.pix[y*p.w+roi.Min.X : y*p.w+roi.Max.X]
		copy(out, tmp[y0*p.w+roi.Min.X:y0*p.w+roi.Max.X])
		for yy := y0 + 1; yy <= y1; yy++ {
			in := tmp[yy*p.w+roi.Min.X : yy*p.w+roi.Max.X]
			for x, v := range in {
				if v > out[x] {
					out[x] = v
				}
			}
		}
	}
	return res
}

// saturatedDistance returns, for every pixel, the 3-4 chamfer distance (3 per step, 4 per
// diagonal step) to the nearest pixel below satLevel or outside the plane; 0 for unsaturated
// pixels. Only roi is computed; it must hold every saturated pixel.
func (p plane) saturatedDistance(roi image.Rectangle) []uint16 {
	const inf = math.MaxUint16 - 4 // above any distance in a plane up to 16 000 px across
	w, h := p.w, p.h
	d := make([]uint16, len(p.pix))
	for y := roi.Min.Y; y < roi.Max.Y; y++ {
		for x := roi.Min.X; x < roi.Max.X; x++ {
			if p.pix[y*w+x] >= satLevel {
				d[y*w+x] = inf
			}
		}
	}
	// Outside the plane counts as unsaturated: the border pixels are at most 3.
	for x := range w {
		d[x] = min(d[x], 3)
		d[(h-1)*w+x] = min(d[(h-1)*w+x], 3)
	}
	for y := range h {
		d[y*w] = min(d[y*w], 3)
		d[y*w+w-1] = min(d[y*w+w-1], 3)
	}
	x0, x1 := max(1, roi.Min.X), min(w-1, roi.Max.X)
	for y := max(1, roi.Min.Y); y < min(h-1, roi.Max.Y); y++ {
		for x := x0; x < x1; x++ {
			i := y*w + x
			if d[i] == 0 {
				continue
			}
			d[i] = min(d[i], d[i-1]+3, d[i-w]+3, d[i-w-1]+4, d[i-w+1]+4)
		}
	}
	for y := min(h-2, roi.Max.Y-1); y >= max(1, roi.Min.Y); y-- {
		for x := x1 - 1; x >= x0; x-- {
			i := y*w + x
			if d[i] == 0 {
				continue
			}
			d[i] = min(d[i], d[i+1]+3, d[i+w]+3, d[i+w+1]+4, d[i+w-1]+4)
		}
	}
	return d
}
