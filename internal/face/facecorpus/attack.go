package facecorpus

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
)

// Attack is a kind of presentation attack rendered by Render.
type Attack string

// The attack renderings. Each is photographed again by a simulated phone camera: slight
// defocus, sensor noise and JPEG.
const (
	// Print: the photo printed on paper (CMY halftone rosette that beats with the camera's
	// pixel grid into moiré, ink spread, paper white and fibre texture, reduced gamut), held
	// in front of the camera with a slight tilt, perspective and bend, in a room.
	Print Attack = "print"
	// Screen: the photo shown on a phone or monitor (RGB sub-pixel stripes with dark gaps,
	// sampled by the camera into moiré; rolling-shutter refresh bands; raised black level,
	// cool white point, a reflection), inside a dark bezel, in a room.
	Screen Attack = "screen"
	// Cutout: a print of the photo cut along the face's outline with the eyes cut out, held
	// over the attacker's head: the attacker's (darker, sharper, unprinted) eyes show through
	// the holes, and the paper's cut edge casts a shadow on the background.
	Cutout Attack = "cutout"
	// Mask: a flat print of the face mapped onto a head shape (compressed and shaded towards
	// its sides as paper wrapped around a head) worn over the head, with a visible paper rim
	// and a shadow gap at its edge.
	Mask Attack = "mask"
)

// Attacks lists every kind, in a fixed order.
var Attacks = []Attack{Print, Screen, Cutout, Mask}

// Geometry locates the face in the image an attack is made from.
type Geometry struct {
	Box image.Rectangle // the face box (detector box)
	// Eyes are the eye centres, the one on the image's left first; zero: estimated from Box.
	Eyes [2]image.Point
}

// Render renders attack kind made from img, whose face is at g (in img's coordinates, as
// Record.Geometry), deterministically for seed. The result has img's size.
func Render(kind Attack, img image.Image, g Geometry, seed uint64) (image.Image, error) {
	src := newBuf(img)
	box := g.Box.Sub(img.Bounds().Min)
	eye := [2][2]float64{}
	if g.Eyes[0] == (image.Point{}) && g.Eyes[1] == (image.Point{}) {
		w, h := float64(box.Dx()), float64(box.Dy())
		eye[0] = [2]float64{float64(box.Min.X) + 0.33*w, float64(box.Min.Y) + 0.42*h}
		eye[1] = [2]float64{float64(box.Min.X) + 0.67*w, float64(box.Min.Y) + 0.42*h}
	} else {
		for i, p := range g.Eyes {
			p = p.Sub(img.Bounds().Min)
			eye[i] = [2]float64{float64(p.X), float64(p.Y)}
		}
	}
	if box.Empty() || !box.In(image.Rect(0, 0, src.w, src.h)) {
		return nil, fmt.Errorf("facecorpus: face box %v outside the %dx%d image", box, src.w, src.h)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(kind))*0x9e3779b97f4a7c15))
	var out *buf
	switch kind {
	case Print:
		out = renderPrint(src, rng)
	case Screen:
		out = renderScreen(src, rng)
	case Cutout:
		out = renderCutout(src, box, eye, rng)
	case Mask:
		out = renderMask(src, box, rng)
	default:
		return nil, fmt.Errorf("facecorpus: unknown attack %q", kind)
	}
	return capture(out, rng)
}

// buf is a float RGB image, 0..255.
type buf struct {
	w, h int
	pix  []float32
}

func newBuf(img image.Image) *buf {
	b := img.Bounds()
	out := &buf{w: b.Dx(), h: b.Dy(), pix: make([]float32, b.Dx()*b.Dy()*3)}
	i := 0
	switch src := img.(type) {
	case *image.RGBA: // opaque photos: no alpha to undo
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := src.Pix[src.PixOffset(b.Min.X, y):]
			for x := 0; x < b.Dx(); x++ {
				out.pix[i], out.pix[i+1], out.pix[i+2] = float32(row[4*x]), float32(row[4*x+1]), float32(row[4*x+2])
				i += 3
			}
		}
		return out
	case *image.YCbCr:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				yi, ci := src.YOffset(x, y), src.COffset(x, y)
				r, g, bl := color.YCbCrToRGB(src.Y[yi], src.Cb[ci], src.Cr[ci])
				out.pix[i], out.pix[i+1], out.pix[i+2] = float32(r), float32(g), float32(bl)
				i += 3
			}
		}
		return out
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			out.pix[i], out.pix[i+1], out.pix[i+2] = float32(r>>8), float32(g>>8), float32(bl>>8)
			i += 3
		}
	}
	return out
}

func blank(w, h int) *buf { return &buf{w: w, h: h, pix: make([]float32, w*h*3)} }

// at samples channel c bilinearly at (x, y), pixel centres at integers, border replicated.
func (b *buf) at(x, y float64, c int) float32 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := float32(x-x0), float32(y-y0)
	ix, iy := int(x0), int(y0)
	p := func(x, y int) float32 {
		x = min(max(x, 0), b.w-1)
		y = min(max(y, 0), b.h-1)
		return b.pix[(y*b.w+x)*3+c]
	}
	return (p(ix, iy)*(1-fx)+p(ix+1, iy)*fx)*(1-fy) + (p(ix, iy+1)*(1-fx)+p(ix+1, iy+1)*fx)*fy
}

func (b *buf) rgb(x, y float64) [3]float32 {
	return [3]float32{b.at(x, y, 0), b.at(x, y, 1), b.at(x, y, 2)}
}

func (b *buf) set(x, y int, c [3]float32) {
	i := (y*b.w + x) * 3
	b.pix[i], b.pix[i+1], b.pix[i+2] = c[0], c[1], c[2]
}

func (b *buf) get(x, y int) [3]float32 {
	i := (y*b.w + x) * 3
	return [3]float32{b.pix[i], b.pix[i+1], b.pix[i+2]}
}

// boxBlur blurs b in place with a separable box of radius r, n passes (≈ Gaussian).
func (b *buf) boxBlur(r, n int) {
	if r <= 0 {
		return
	}
	tmp := make([]float32, len(b.pix))
	for pass := 0; pass < n; pass++ {
		for y := 0; y < b.h; y++ {
			for c := 0; c < 3; c++ {
				var s float32
				for x := -r; x <= r; x++ {
					s += b.pix[(y*b.w+min(max(x, 0), b.w-1))*3+c]
				}
				for x := 0; x < b.w; x++ {
					tmp[(y*b.w+x)*3+c] = s / float32(2*r+1)
					s += b.pix[(y*b.w+min(x+r+1, b.w-1))*3+c] - b.pix[(y*b.w+max(x-r, 0))*3+c]
				}
			}
		}
		for x := 0; x < b.w; x++ {
			for c := 0; c < 3; c++ {
				var s float32
				for y := -r; y <= r; y++ {
					s += tmp[(min(max(y, 0), b.h-1)*b.w+x)*3+c]
				}
				for y := 0; y < b.h; y++ {
					b.pix[(y*b.w+x)*3+c] = s / float32(2*r+1)
					s += tmp[(min(y+r+1, b.h-1)*b.w+x)*3+c] - tmp[(max(y-r, 0)*b.w+x)*3+c]
				}
			}
		}
	}
}

// noise2 is smooth value noise in [0, 1) on a lattice of the given cell size, defined on
// 0 ≤ x, y < its size (clamped outside).
type noise2 struct {
	n    int
	cell float64
	v    []float32
}

func newNoise(rng *rand.Rand, w, h int, cell float64) *noise2 {
	n := int(math.Max(float64(w), float64(h))/cell) + 3
	v := make([]float32, n*n)
	for i := range v {
		v[i] = rng.Float32()
	}
	return &noise2{n: n, cell: cell, v: v}
}

func (z *noise2) at(x, y float64) float32 {
	gx, gy := x/z.cell, y/z.cell
	lim := float64(z.n - 2)
	gx, gy = math.Min(math.Max(gx, 0), lim), math.Min(math.Max(gy, 0), lim)
	ix, iy := int(gx), int(gy)
	fx, fy := float32(gx-float64(ix)), float32(gy-float64(iy))
	fx, fy = fx*fx*(3-2*fx), fy*fy*(3-2*fy)
	i := iy*z.n + ix
	a := z.v[i]*(1-fx) + z.v[i+1]*fx
	b := z.v[i+z.n]*(1-fx) + z.v[i+z.n+1]*fx
	return a*(1-fy) + b*fy
}

// room renders a plausible indoor background: a lit wall with a gradient, a door or shelf
// edge, a darker lower part, soft texture.
func room(rng *rand.Rand, w, h int) *buf {
	out := blank(w, h)
	base := [3]float32{150 + 70*rng.Float32(), 140 + 70*rng.Float32(), 120 + 80*rng.Float32()}
	accent := [3]float32{40 + 120*rng.Float32(), 40 + 120*rng.Float32(), 40 + 120*rng.Float32()}
	lx, ly := rng.Float64()*float64(w), -0.3*float64(h)
	edge := (0.15 + 0.7*rng.Float64()) * float64(w)
	floor := (0.65 + 0.3*rng.Float64()) * float64(h)
	tex := newNoise(rng, w, h, 9)
	big := newNoise(rng, w, h, 120)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			d := math.Hypot(float64(x)-lx, float64(y)-ly) / math.Hypot(float64(w), float64(h))
			light := float32(1.1 - 0.6*d)
			c := base
			if float64(x) > edge && float64(x) < edge+0.18*float64(w) {
				c = accent
			}
			if float64(y) > floor {
				c = [3]float32{c[0] * 0.55, c[1] * 0.5, c[2] * 0.45}
			}
			t := 0.92 + 0.08*tex.at(float64(x), float64(y)) + 0.15*(big.at(float64(x), float64(y))-0.5)
			out.set(x, y, [3]float32{c[0] * light * t, c[1] * light * t, c[2] * light * t})
		}
	}
	return out
}

// homography maps the unit square's corners (0,0), (1,0), (1,1), (0,1) onto q; apply returns
// the image of (u, v); invert gives the map back.
type homography [9]float64

func squareTo(q [4][2]float64) homography {
	// Heckbert's closed form for square-to-quad.
	x0, y0, x1, y1, x2, y2, x3, y3 := q[0][0], q[0][1], q[1][0], q[1][1], q[2][0], q[2][1], q[3][0], q[3][1]
	sx, sy := x0-x1+x2-x3, y0-y1+y2-y3
	var h homography
	if math.Abs(sx) < 1e-9 && math.Abs(sy) < 1e-9 {
		h = homography{x1 - x0, x2 - x1, x0, y1 - y0, y2 - y1, y0, 0, 0, 1}
		return h
	}
	dx1, dx2, dy1, dy2 := x1-x2, x3-x2, y1-y2, y3-y2
	den := dx1*dy2 - dx2*dy1
	g := (sx*dy2 - dx2*sy) / den
	hh := (dx1*sy - sx*dy1) / den
	return homography{x1 - x0 + g*x1, x3 - x0 + hh*x3, x0, y1 - y0 + g*y1, y3 - y0 + hh*y3, y0, g, hh, 1}
}

func (m homography) apply(u, v float64) (float64, float64) {
	w := m[6]*u + m[7]*v + m[8]
	return (m[0]*u + m[1]*v + m[2]) / w, (m[3]*u + m[4]*v + m[5]) / w
}

func (m homography) invert() homography {
	a, b, c, d, e, f, g, h, i := m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]
	A, B, C := e*i-f*h, -(d*i - f*g), d*h-e*g
	det := a*A + b*B + c*C
	return homography{A / det, -(b*i - c*h) / det, (b*f - c*e) / det,
		B / det, (a*i - c*g) / det, -(a*f - c*d) / det,
		C / det, -(a*h - b*g) / det, (a*e - b*d) / det}
}

// placement returns a homography from the unit square onto a tilted, rotated quad centred
// near the frame's centre, of height about scale × the frame's.
func placement(rng *rand.Rand, w, h int, aspect, scale float64) homography {
	ph := scale * float64(h)
	pw := ph * aspect
	cx := float64(w)/2 + (rng.Float64()-0.5)*0.06*float64(w)
	cy := float64(h)/2 + (rng.Float64()-0.5)*0.06*float64(h)
	rot := (rng.Float64() - 0.5) * 10 * math.Pi / 180
	sin, cos := math.Sincos(rot)
	var q [4][2]float64
	for i, c := range [4][2]float64{{-0.5, -0.5}, {0.5, -0.5}, {0.5, 0.5}, {-0.5, 0.5}} {
		// perspective: one side a little nearer than the other
		x, y := c[0]*pw, c[1]*ph
		x += (rng.Float64() - 0.5) * 0.05 * pw
		y += (rng.Float64() - 0.5) * 0.05 * ph
		q[i] = [2]float64{cx + cos*x - sin*y, cy + sin*x + cos*y}
	}
	return squareTo(q)
}

// printed renders src as a print on paper at about 2 canvas pixels per source pixel: the
// colours through a CMY halftone (rosette at 15°, 75°, 0°), ink spread, paper white, fibres,
// and a white margin of m source pixels. Returns the print canvas.
func printed(src *buf, rng *rand.Rand, margin int) *buf {
	const k = 2
	w, h := (src.w+2*margin)*k, (src.h+2*margin)*k
	out := blank(w, h)
	period := 3.2 + 1.6*rng.Float64()
	angles := [3]float64{15, 75, 0}
	paper := [3]float32{244 - 8*rng.Float32(), 240 - 8*rng.Float32(), 228 - 10*rng.Float32()}
	fibre := newNoise(rng, w, h, 3)
	cloud := newNoise(rng, w, h, 60)
	var rot [3][2]float64
	for c := range rot {
		rot[c][0], rot[c][1] = math.Sincos(angles[c] * math.Pi / 180)
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			sx, sy := float64(x)/k-float64(margin)-0.5, float64(y)/k-float64(margin)-0.5
			t := 0.97 + 0.05*fibre.at(float64(x), float64(y)) + 0.04*(cloud.at(float64(x), float64(y))-0.5)
			p := [3]float32{paper[0] * t, paper[1] * t, paper[2] * t}
			if sx >= -0.5 && sy >= -0.5 && sx <= float64(src.w)-0.5 && sy <= float64(src.h)-0.5 {
				s := src.rgb(sx, sy)
				lum := 0.299*s[0] + 0.587*s[1] + 0.114*s[2]
				for c := 0; c < 3; c++ {
					v := lum + 0.8*(s[c]-lum) // inks: less saturation
					ink := 1 - float64(v)/255 // cyan/magenta/yellow coverage of channel c
					sin, cos := rot[c][0], rot[c][1]
					u := (cos*float64(x) + sin*float64(y)) / period
					vv := (-sin*float64(x) + cos*float64(y)) / period
					// distance to the nearest dot centre of the screen, 0..0.707
					du, dv := u-math.Floor(u+0.5), vv-math.Floor(vv+0.5)
					d := math.Sqrt(du*du + dv*dv)
					// a dot of area ink covers the cell: radius sqrt(ink/π)
					r := math.Sqrt(math.Min(ink, 1) / math.Pi)
					cov := math.Min(math.Max((r-d)*8+0.5, 0), 1) // soft edge (ink spread)
					floor := float32(0.16)                       // ink never absorbs everything
					p[c] *= 1 - (1-floor)*float32(cov)
				}
			}
			out.set(x, y, p)
		}
	}
	out.boxBlur(1, 1)
	return out
}

// composite draws tex through homography m (unit square ↔ tex) onto dst, with per-pixel
// shading shade(u, v) (u, v in 0..1) and area sampling of about sub×sub points per pixel.
func composite(dst, tex *buf, m homography, shade func(u, v float64) float32, inside func(u, v float64) bool) {
	inv := m.invert()
	const sub = 2
	for y := 0; y < dst.h; y++ {
		for x := 0; x < dst.w; x++ {
			var acc [3]float32
			n := 0
			for j := 0; j < sub; j++ {
				for i := 0; i < sub; i++ {
					u, v := inv.apply(float64(x)+(float64(i)+0.5)/sub-0.5, float64(y)+(float64(j)+0.5)/sub-0.5)
					if u < 0 || v < 0 || u > 1 || v > 1 || (inside != nil && !inside(u, v)) {
						continue
					}
					c := tex.rgb(u*float64(tex.w)-0.5, v*float64(tex.h)-0.5)
					s := shade(u, v)
					acc[0] += c[0] * s
					acc[1] += c[1] * s
					acc[2] += c[2] * s
					n++
				}
			}
			if n == 0 {
				continue
			}
			a := float32(n) / sub / sub
			bg := dst.get(x, y)
			for c := 0; c < 3; c++ {
				dst.pix[(y*dst.w+x)*3+c] = bg[c]*(1-a) + acc[c]/float32(n)*a
			}
		}
	}
}

func renderPrint(src *buf, rng *rand.Rand) *buf {
	margin := int(float64(min(src.w, src.h)) * (0.03 + 0.05*rng.Float64()))
	p := printed(src, rng, margin)
	out := room(rng, src.w, src.h)
	scale := 0.82 + 0.2*rng.Float64()
	m := placement(rng, src.w, src.h, float64(p.w)/float64(p.h), scale)
	// light falls across the sheet; the sheet bends a little (brighter ridge)
	gx, gy := rng.Float64()-0.5, rng.Float64()-0.5
	ridge := 0.3 + 0.4*rng.Float64()
	shade := func(u, v float64) float32 {
		return float32(0.93 + 0.2*(gx*(u-0.5)+gy*(v-0.5)) + 0.06*math.Exp(-sq((u-ridge)/0.12)))
	}
	// shadow of the sheet on the background
	shadow(out, m, 0.03, 0.6)
	composite(out, p, m, shade, nil)
	return out
}

// shadow darkens dst under the quad m, offset by off of the frame's height.
func shadow(dst *buf, m homography, off float64, strength float32) {
	inv := m.invert()
	d := off * float64(dst.h)
	for y := 0; y < dst.h; y++ {
		for x := 0; x < dst.w; x++ {
			u, v := inv.apply(float64(x)-d, float64(y)-d)
			if u < -0.02 || v < -0.02 || u > 1.02 || v > 1.02 {
				continue
			}
			edge := math.Min(math.Min(u+0.02, 1.02-u), math.Min(v+0.02, 1.02-v)) / 0.04
			k := 1 - strength*float32(math.Min(edge, 1))
			i := (y*dst.w + x) * 3
			dst.pix[i] *= k
			dst.pix[i+1] *= k
			dst.pix[i+2] *= k
		}
	}
}

func renderScreen(src *buf, rng *rand.Rand) *buf {
	out := room(rng, src.w, src.h)
	// the display: pitch (camera pixels per screen pixel) 1.4..2.6, so the stripe grid and
	// the camera's pixel grid beat into moiré
	pitch := 1.4 + 1.2*rng.Float64()
	scale := 0.78 + 0.18*rng.Float64()
	bezel := 0.05 + 0.04*rng.Float64()
	aspect := float64(src.w) / float64(src.h)
	mDev := placement(rng, src.w, src.h, aspect, scale*(1+2*bezel))
	// the device body
	body := blank(8, 8)
	grey := float32(12 + 25*rng.Float32())
	for i := range body.pix {
		body.pix[i] = grey
	}
	shadow(out, mDev, 0.02, 0.5)
	composite(out, body, mDev, func(u, v float64) float32 { return 1 + 0.8*float32(math.Exp(-sq((u+v-0.7)/0.08))) }, nil)
	// the screen area inside the bezel, in device coordinates
	b := bezel / (1 + 2*bezel)
	inv := mDev.invert()
	gamma := 0.85 + 0.2*rng.Float64()
	black := float32(14 + 12*rng.Float32())
	tint := [3]float32{0.9 + 0.05*rng.Float32(), 0.97, 1.05 + 0.05*rng.Float32()}
	bandPeriod := 30 + 90*rng.Float64()
	bandPhase := rng.Float64() * 2 * math.Pi
	bandAmp := 0.05 + 0.06*rng.Float64()
	glareX, glareW := rng.Float64(), 0.1+0.15*rng.Float64()
	// screen resolution: one screen pixel ≈ pitch camera pixels
	sw, sh := int(float64(src.w)*scale/pitch), int(float64(src.h)*scale/pitch)
	bright := float32(1.0 + 0.15*rng.Float64())
	grid := float32(0.35 + 0.5*rng.Float64()) // how sharply the lens resolves the sub-pixels
	const sub = 3
	for y := 0; y < out.h; y++ {
		for x := 0; x < out.w; x++ {
			var acc [3]float32
			n := 0
			for j := 0; j < sub; j++ {
				for i := 0; i < sub; i++ {
					u, v := inv.apply(float64(x)+(float64(i)+0.5)/sub-0.5, float64(y)+(float64(j)+0.5)/sub-0.5)
					su, sv := (u-b)/(1-2*b), (v-b)/(1-2*b)
					if su < 0 || sv < 0 || su >= 1 || sv >= 1 {
						n = -1
						break
					}
					// screen pixel and position inside it
					px, py := su*float64(sw), sv*float64(sh)
					ix, iy := math.Floor(px), math.Floor(py)
					fx, fy := px-ix, py-iy
					c := src.rgb((ix+0.5)/float64(sw)*float64(src.w)-0.5, (iy+0.5)/float64(sh)*float64(src.h)-0.5)
					// sub-pixel stripe: R, G, B thirds with dark gaps; a dark row gap
					ch := int(fx * 3)
					lit := float32(0)
					if math.Mod(fx*3, 1) < 0.8 && fy < 0.85 {
						lit = bright / (0.8 * 0.85 / 3) // the lit area's mean is the pixel's value
					}
					for cc := 0; cc < 3; cc++ {
						v := float32(math.Pow(float64(c[cc])/255, gamma)) * 255
						flat := (black + v*(1-black/255)) * tint[cc]
						striped := black * 0.3
						if cc == ch {
							striped = flat * lit
						}
						acc[cc] += grid*striped + (1-grid)*flat*bright
					}
					n++
				}
				if n < 0 {
					break
				}
			}
			if n <= 0 {
				continue
			}
			band := float32(1 + bandAmp*math.Sin(2*math.Pi*float64(y)/bandPeriod+bandPhase))
			u, _ := inv.apply(float64(x), float64(y))
			gl := float32(45 * math.Exp(-sq((u-glareX)/glareW)))
			for cc := 0; cc < 3; cc++ {
				out.pix[(y*out.w+x)*3+cc] = acc[cc]/float32(n)*band*0.95 + gl
			}
		}
	}
	return out
}

// faceEllipse returns the centre and radii of the outline of the face in box.
func faceEllipse(box image.Rectangle) (cx, cy, rx, ry float64) {
	return float64(box.Min.X+box.Max.X) / 2, float64(box.Min.Y) + 0.55*float64(box.Dy()), 0.52 * float64(box.Dx()), 0.68 * float64(box.Dy())
}

func renderCutout(src *buf, box image.Rectangle, eye [2][2]float64, rng *rand.Rand) *buf {
	p := printed(src, rng, 0)
	cx, cy, rx, ry := faceEllipse(box)
	rx *= 1.08
	ry *= 1.05
	le, re := eye[0], eye[1]
	rad := 0.22 * math.Hypot(re[0]-le[0], re[1]-le[1])
	wob := newNoise(rng, 64, 64, 4)
	inside := func(u, v float64) bool {
		x, y := u*float64(src.w), v*float64(src.h)
		a := math.Atan2(y-cy, x-cx)
		k := 1 + 0.03*float64(wob.at(10*math.Cos(a)+20, 10*math.Sin(a)+20)-0.5) // scissor-cut edge
		if sq((x-cx)/rx)+sq((y-cy)/ry) > k*k {
			return false
		}
		for _, e := range [2][2]float64{le, re} {
			if sq((x-e[0])/(1.4*rad))+sq((y-e[1])/rad) < 1 {
				return false
			}
		}
		return true
	}
	// the attacker behind the sheet: a live head and its room, in another capture (shifted,
	// slightly smaller, other white balance); its eyes show through the holes
	out := blank(src.w, src.h)
	shift := [2]float64{(rng.Float64() - 0.5) * 0.04 * float64(box.Dx()), (rng.Float64() - 0.5) * 0.04 * float64(box.Dy())}
	z := 0.93 + 0.05*rng.Float64()
	wb := [3]float32{0.9 + 0.15*rng.Float32(), 0.95, 0.9 + 0.15*rng.Float32()}
	for y := 0; y < src.h; y++ {
		for x := 0; x < src.w; x++ {
			sx := cx + (float64(x)-cx)/z + shift[0]
			sy := cy + (float64(y)-cy)/z + shift[1]
			c := src.rgb(sx, sy)
			out.set(x, y, [3]float32{c[0] * wb[0] * 0.8, c[1] * wb[1] * 0.8, c[2] * wb[2] * 0.8})
		}
	}
	s := 0.95 + 0.1*rng.Float64()
	m := squareTo([4][2]float64{
		{float64(src.w) * (0.5 - 0.5*s), float64(src.h) * (0.5 - 0.5*s)},
		{float64(src.w) * (0.5 + 0.5*s), float64(src.h)*(0.5-0.5*s) + (rng.Float64()-0.5)*0.04*float64(src.h)},
		{float64(src.w) * (0.5 + 0.5*s), float64(src.h) * (0.5 + 0.5*s)},
		{float64(src.w) * (0.5 - 0.5*s), float64(src.h)*(0.5+0.5*s) + (rng.Float64()-0.5)*0.04*float64(src.h)},
	})
	// the sheet's shadow: the cut shape, offset down-right, on what is behind
	inv := m.invert()
	d := 0.012 * float64(src.h)
	for y := 0; y < src.h; y++ {
		for x := 0; x < src.w; x++ {
			u, v := inv.apply(float64(x)-d, float64(y)-d)
			if u >= 0 && v >= 0 && u <= 1 && v <= 1 && inside(u, v) {
				i := (y*src.w + x) * 3
				out.pix[i] *= 0.55
				out.pix[i+1] *= 0.55
				out.pix[i+2] *= 0.55
			}
		}
	}
	g := rng.Float64() - 0.5
	composite(out, p, m, func(u, v float64) float32 { return float32(0.95 + 0.15*g*(u-0.5)) }, inside)
	return out
}

func renderMask(src *buf, box image.Rectangle, rng *rand.Rand) *buf {
	out := &buf{w: src.w, h: src.h, pix: append([]float32(nil), src.pix...)}
	p := printed(src, rng, 0)
	cx, cy, rx, ry := faceEllipse(box)
	rx *= 1.1
	ry *= 1.08
	side := (rng.Float64() - 0.5) * 0.8 // light from one side
	rim := 0.035 + 0.02*rng.Float64()
	// the mask is worn a little larger than the face and slightly off-centre
	k := 1.04 + 0.06*rng.Float64()
	dx, dy := (rng.Float64()-0.5)*0.08*rx, (rng.Float64()-0.5)*0.06*ry
	for y := 0; y < src.h; y++ {
		for x := 0; x < src.w; x++ {
			nx, ny := (float64(x)-cx-dx)/rx, (float64(y)-cy-dy)/ry
			r2 := nx*nx + ny*ny
			switch {
			case r2 < 1:
				// paper wrapped on a cylinder: the flat print's x = sin(θ), the head's x = θ·2/π
				theta := nx * math.Pi / 2
				fx := math.Sin(theta)*0.92 + 0.08*nx
				sx := cx + fx*rx/k
				sy := cy + ny*ry/k
				c := p.rgb(sx*2-0.5, sy*2-0.5)
				light := float32(0.72 + 0.3*math.Cos(theta-side) - 0.12*ny*ny)
				if r2 > (1-rim)*(1-rim) { // the paper's cut edge catches the light
					light = 1.18
				}
				out.set(x, y, [3]float32{c[0] * light, c[1] * light, c[2] * light})
			case r2 < (1+2*rim)*(1+2*rim):
				// the gap between the mask's edge and the head: shadow
				t := float32((math.Sqrt(r2) - 1) / (2 * rim))
				c := out.get(x, y)
				f := 0.35 + 0.65*t
				out.set(x, y, [3]float32{c[0] * f, c[1] * f, c[2] * f})
			}
		}
	}
	return out
}

// capture photographs b again with a phone camera: slight defocus, vignetting, sensor noise,
// JPEG at quality 80..92.
func capture(b *buf, rng *rand.Rand) (image.Image, error) {
	b.boxBlur(1, 1+rng.IntN(2))
	sigma := 1.5 + 2.5*rng.Float64()
	cx, cy := float64(b.w)/2, float64(b.h)/2
	rmax := math.Hypot(cx, cy)
	img := image.NewRGBA(image.Rect(0, 0, b.w, b.h))
	for y := 0; y < b.h; y++ {
		for x := 0; x < b.w; x++ {
			vig := float32(1 - 0.18*sq(math.Hypot(float64(x)-cx, float64(y)-cy)/rmax))
			c := b.get(x, y)
			n := float32(rng.NormFloat64() * sigma)
			img.SetRGBA(x, y, color.RGBA{clamp8(c[0]*vig + n), clamp8(c[1]*vig + n*1.2), clamp8(c[2]*vig + n*1.4), 255})
		}
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: 80 + rng.IntN(13)}); err != nil {
		return nil, err
	}
	return jpeg.Decode(&out)
}

func clamp8(v float32) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return uint8(v + 0.5)
}

func sq(v float64) float64 { return v * v }
