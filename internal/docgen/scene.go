package docgen

import (
	"math"
	"math/rand/v2"
)

// valueNoise is a seeded 2-D value noise with smooth interpolation.
type valueNoise struct {
	perm [512]uint16
	val  [256]float64
}

func newNoise(r *rand.Rand) *valueNoise {
	n := &valueNoise{}
	p := r.Perm(256)
	for i := 0; i < 512; i++ {
		n.perm[i] = uint16(p[i&255])
	}
	for i := range n.val {
		n.val[i] = r.Float64()
	}
	return n
}

func (n *valueNoise) lattice(x, y int) float64 {
	return n.val[n.perm[int(n.perm[x&255])+(y&255)]]
}

// at returns noise in [0, 1] at (x, y) (lattice spacing 1).
func (n *valueNoise) at(x, y float64) float64 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	ix, iy := int(x0), int(y0)
	sx, sy := fx*fx*(3-2*fx), fy*fy*(3-2*fy)
	a := n.lattice(ix, iy) + (n.lattice(ix+1, iy)-n.lattice(ix, iy))*sx
	b := n.lattice(ix, iy+1) + (n.lattice(ix+1, iy+1)-n.lattice(ix, iy+1))*sx
	return a + (b-a)*sy
}

// fbm sums octaves of noise; the result is about [0, 1].
func (n *valueNoise) fbm(x, y float64, oct int) float64 {
	s, amp, tot := 0.0, 1.0, 0.0
	for i := 0; i < oct; i++ {
		s += n.at(x, y) * amp
		tot += amp
		x, y = x*2.03+17.1, y*2.03+3.7
		amp *= 0.5
	}
	return s / tot
}

// scene draws a table texture of the given name on a w×h frame. The texture is computed
// at a third of the resolution and scaled up (textures are soft), with per-pixel grain.
func scene(name string, w, h int, r *rand.Rand) *plane {
	const k = 3
	sw, sh := w/k+2, h/k+2
	n := newNoise(r)
	n2 := newNoise(r)
	small := newPlane(sw, sh)
	var col func(x, y float64) [3]float64
	sc := float64(w) / 1600 // texture scale relative to a 1600-px frame
	switch name {
	case "wood":
		base := [3]float64{150 + r.Float64()*60, 95 + r.Float64()*40, 50 + r.Float64()*30}
		ang := (r.Float64() - 0.5) * 0.6
		ca, sa := math.Cos(ang), math.Sin(ang)
		col = func(x, y float64) [3]float64 {
			u, v := (x*ca+y*sa)/sc, (-x*sa+y*ca)/sc
			warp := n.fbm(u/300, v/40, 3) * 12
			ring := 0.5 + 0.5*math.Sin((v/9+warp)*1.3)
			streak := n2.fbm(u/80, v/2.5, 2)
			t := 0.72 + 0.18*ring + 0.18*streak
			return [3]float64{base[0] * t, base[1] * t, base[2] * t}
		}
	case "desk":
		bases := [][3]float64{{60, 62, 66}, {200, 200, 196}, {120, 130, 140}, {40, 70, 60}, {170, 150, 120}, {25, 25, 28}}
		base := pick(r, bases)
		col = func(x, y float64) [3]float64 {
			t := 0.92 + 0.12*n.fbm(x/sc/200, y/sc/200, 3)
			return [3]float64{base[0] * t, base[1] * t, base[2] * t}
		}
	case "paper":
		base := [3]float64{225 + r.Float64()*20, 220 + r.Float64()*20, 205 + r.Float64()*25}
		col = func(x, y float64) [3]float64 {
			fib := n2.fbm(x/sc/3, y/sc/25, 2)
			t := 0.9 + 0.06*n.fbm(x/sc/150, y/sc/150, 3) + 0.05*fib
			return [3]float64{base[0] * t, base[1] * t, base[2] * t}
		}
	case "fabric":
		base := [3]float64{40 + r.Float64()*160, 40 + r.Float64()*120, 60 + r.Float64()*140}
		period := (3 + r.Float64()*3) * sc
		col = func(x, y float64) [3]float64 {
			wx := 0.5 + 0.5*math.Sin(2*math.Pi*x/period)
			wy := 0.5 + 0.5*math.Sin(2*math.Pi*y/period)
			over := math.Sin(math.Pi*x/period) * math.Sin(math.Pi*y/period)
			t := 0.78 + 0.1*wx*wy + 0.08*over + 0.1*n.fbm(x/sc/90, y/sc/90, 3)
			return [3]float64{base[0] * t, base[1] * t, base[2] * t}
		}
	case "marble":
		base := [3]float64{215 + r.Float64()*30, 212 + r.Float64()*30, 205 + r.Float64()*35}
		vein := [3]float64{90 + r.Float64()*60, 90 + r.Float64()*60, 100 + r.Float64()*60}
		if r.IntN(3) == 0 { // dark marble
			base, vein = [3]float64{45, 45, 50}, [3]float64{200, 200, 195}
		}
		ang := r.Float64() * math.Pi
		ca, sa := math.Cos(ang), math.Sin(ang)
		col = func(x, y float64) [3]float64 {
			u := (x*ca + y*sa) / sc
			t := n.fbm(x/sc/300, y/sc/300, 5)
			// thin main veins and fainter secondary ones, in clouded stone
			m := 0.8*math.Pow(1-math.Abs(math.Sin(u/110+t*7)), 40) +
				0.35*math.Pow(1-math.Abs(math.Sin(u/37+t*11+1)), 25)
			cloud := 0.94 + 0.08*n2.fbm(x/sc/200, y/sc/200, 3)
			var o [3]float64
			for c := range o {
				o[c] = (base[c]*(1-m) + vein[c]*m) * cloud
			}
			return o
		}
	default: // granite
		base := [3]float64{110 + r.Float64()*90, 105 + r.Float64()*80, 100 + r.Float64()*80}
		col = func(x, y float64) [3]float64 {
			s := n2.at(x/sc/1.3, y/sc/1.3)
			t := 0.85 + 0.1*n.fbm(x/sc/120, y/sc/120, 3)
			if s > 0.8 {
				t *= 0.55
			} else if s < 0.12 {
				t *= 1.25
			}
			return [3]float64{base[0] * t, base[1] * t, base[2] * t}
		}
	}
	for y := 0; y < sh; y++ {
		for x := 0; x < sw; x++ {
			c := col(float64(x*k), float64(y*k))
			i := 3 * (y*sw + x)
			small.p[i], small.p[i+1], small.p[i+2] = float32(c[0]), float32(c[1]), float32(c[2])
		}
	}
	out := newPlane(w, h)
	for y := 0; y < h; y++ {
		fy := float64(y) / k
		y0 := int(fy)
		ty := float32(fy - float64(y0))
		for x := 0; x < w; x++ {
			fx := float64(x) / k
			x0 := int(fx)
			tx := float32(fx - float64(x0))
			i00, i10 := 3*(y0*sw+x0), 3*(y0*sw+x0+1)
			i01, i11 := 3*((y0+1)*sw+x0), 3*((y0+1)*sw+x0+1)
			o := 3 * (y*w + x)
			for c := 0; c < 3; c++ {
				a := small.p[i00+c]*(1-tx) + small.p[i10+c]*tx
				b := small.p[i01+c]*(1-tx) + small.p[i11+c]*tx
				out.p[o+c] = a*(1-ty) + b*ty
			}
		}
	}
	return out
}
