package docgen

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"slices"

	"golang.org/x/image/draw"
)

// Reasons of BadCapture: the public API's quality-gate reasons a capture is made to fail.
const (
	ReasonBlurry     = "blurry"
	ReasonGlare      = "glare"
	ReasonNotFramed  = "not_framed"
	ReasonNoDocument = "no_document"
	ReasonTooDark    = "too_dark"
)

// BadReasons lists the reasons BadCapture accepts.
func BadReasons() []string {
	return []string{ReasonBlurry, ReasonGlare, ReasonNotFramed, ReasonNoDocument, ReasonTooDark}
}

// Table textures of the photographs. Each split has its own set:
//
//	Calibration: "wood" (wood grain), "desk" (a plain desk colour with fine grain),
//	"paper" (a light paper or blotter with fibres).
//	HeldOut: "fabric" (a woven cloth), "marble" (veined stone), "granite" (speckled
//	laminate).
var sceneTextures = map[Split][]string{
	Calibration: {"wood", "desk", "paper"},
	HeldOut:     {"fabric", "marble", "granite"},
}

// ScenesOf returns the table textures a split's photographs use.
func ScenesOf(s Split) []string { return slices.Clone(sceneTextures[s]) }

// Capture is a simulated phone photograph of a document.
type Capture struct {
	// JPEG is the encoded photograph, as a phone would upload it.
	JPEG []byte `json:"-"`
	// Image is JPEG decoded (what a reader sees).
	Image image.Image `json:"-"`
	// Quality is the JPEG quality (70–95).
	Quality int `json:"jpeg_quality"`
	// Corners are the document's corners in the frame (top left, top right, bottom right,
	// bottom left of the document), possibly outside the frame for not_framed; all zero
	// for no_document.
	Corners [4]image.Point `json:"corners"`
	// Scene is the table texture (see ScenesOf).
	Scene string `json:"scene"`
	// Reason is "" for a good capture, else the BadCapture reason it was made to fail for.
	Reason string `json:"reason,omitempty"`
	// Degradations names what was applied (e.g. "motion_blur", "low_light"), for analysis.
	Degradations []string `json:"degradations,omitempty"`
}

// Photograph turns a flat rendered document side into a good phone capture: a frame of
// 1280×960 to 2000×1500 pixels showing a table texture of split's set, the document filling
// 35–80 % of the frame's width, wholly inside the frame with a margin, in-plane rotation up
// to ±8° and a mild perspective, a soft shadow, a lighting gradient, sometimes mild motion or
// focus blur (at most about a pixel), sometimes lower light (never too dark to read), mild
// sensor noise, JPEG at quality 70–95 (sometimes after a first compression at 88–97, as when
// an app re-compresses the camera's JPEG). A person would accept it: sharp, lit, fully
// framed. The same img, split and r state give the same capture.
func Photograph(img image.Image, split Split, r *rand.Rand) Capture {
	return shoot(img, split, r, "", 0)
}

// BadCapture makes a capture that a quality gate must send back for reason (one of
// BadReasons): "blurry" (strong focus or motion blur), "glare" (a specular highlight on the
// document: a saturated core with a bright smooth halo hiding the print, as light reflected
// by a laminated card), "not_framed" (20–45 % of the document outside the frame), "no_document"
// (the table only), "too_dark" (exposure at 5–15 %). img may be nil for no_document. An
// unknown reason is an error.
func BadCapture(img image.Image, reason string, split Split, r *rand.Rand) (Capture, error) {
	if !slices.Contains(BadReasons(), reason) {
		return Capture{}, fmt.Errorf("docgen: unknown bad-capture reason %q (have %v)", reason, BadReasons())
	}
	if img == nil && reason != ReasonNoDocument {
		return Capture{}, fmt.Errorf("docgen: a %s capture needs a document image", reason)
	}
	return shoot(img, split, r, reason, 0), nil
}

// plane is a float RGB image, 0–255 per channel.
type plane struct {
	w, h int
	p    []float32
}

func newPlane(w, h int) *plane { return &plane{w, h, make([]float32, w*h*3)} }

// shoot makes a capture; width, when non-zero, replaces the random frame width (tests).
func shoot(doc image.Image, split Split, r *rand.Rand, reason string, width int) Capture {
	W := 1280 + r.IntN(721)
	if width > 0 {
		W = width
	}
	H := W * 3 / 4
	cp := Capture{Reason: reason}
	cp.Scene = pick(r, sceneTextures[split])
	fr := scene(cp.Scene, W, H, r)

	if reason != ReasonNoDocument {
		cp.Corners = place(doc.Bounds(), W, H, r, reason == ReasonNotFramed)
		composite(fr, doc, cp.Corners, r)
	}
	// lighting: gradient and vignette
	// Exposure as a phone's auto-exposure sets it: white paper lands at about 215–245, never
	// clipped (a clipped white area would be glare); lower in low light.
	exposure := 0.86 + r.Float64()*0.1
	noise := 1.2 + r.Float64()*2.3
	if reason == "" && r.IntN(5) == 0 {
		exposure = 0.58 + r.Float64()*0.14
		noise += 2
		cp.Degradations = append(cp.Degradations, "low_light")
	}
	if reason == ReasonTooDark {
		exposure = 0.05 + r.Float64()*0.1
		noise = 2 + r.Float64()*2
	}
	light(fr, exposure, 0.06+r.Float64()*0.16, r)
	if reason != ReasonNoDocument && reason != ReasonTooDark && r.IntN(2) == 0 {
		sheen(fr, cp.Corners, r)
		cp.Degradations = append(cp.Degradations, "sheen")
	}
	switch {
	case reason == ReasonBlurry:
		if r.IntN(2) == 0 {
			gaussBlur(fr, float64(W)*(0.006+r.Float64()*0.006))
			cp.Degradations = append(cp.Degradations, "focus_blur")
		} else {
			motionBlur(fr, float64(W)*(0.025+r.Float64()*0.025), r.Float64()*math.Pi)
			cp.Degradations = append(cp.Degradations, "motion_blur")
		}
	case r.IntN(4) == 0:
		if r.IntN(2) == 0 {
			gaussBlur(fr, 0.5+r.Float64()*0.5)
			cp.Degradations = append(cp.Degradations, "mild_focus_blur")
		} else {
			motionBlur(fr, 1.5+r.Float64()*1.5, r.Float64()*math.Pi)
			cp.Degradations = append(cp.Degradations, "mild_motion_blur")
		}
	}
	addNoise(fr, noise, r)
	if reason == ReasonGlare {
		glare(fr, cp.Corners, r)
	}
	cp.Quality = 70 + r.IntN(26)
	out := fr.rgba()
	if r.IntN(10) < 3 {
		// the camera's own JPEG, re-compressed by the app before upload
		out = toRGBA(jpegRoundTrip(out, 88+r.IntN(10)))
		cp.Degradations = append(cp.Degradations, "recompressed")
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: cp.Quality}); err != nil {
		// encoding an in-memory RGBA image into a buffer cannot fail
		panic(err)
	}
	cp.JPEG = buf.Bytes()
	dec, err := jpeg.Decode(bytes.NewReader(cp.JPEG))
	if err != nil {
		panic(err)
	}
	cp.Image = dec
	return cp
}

// jpegRoundTrip encodes img at quality q and decodes it.
func jpegRoundTrip(img image.Image, q int) image.Image {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		panic(err) // an in-memory image into a buffer cannot fail
	}
	dec, err := jpeg.Decode(&buf)
	if err != nil {
		panic(err)
	}
	return dec
}

// place chooses where the document's corners land in a W×H frame: 35–80 % of the width,
// rotation up to ±8°, a mild keystone; wholly inside with a margin, or, when cut, with
// 20–45 % of the document beyond one frame edge.
func place(b image.Rectangle, W, H int, r *rand.Rand, cut bool) [4]image.Point {
	aspect := float64(b.Dy()) / float64(b.Dx())
	for try := 0; ; try++ {
		// 35–80 % of the width, more often large (people fill the guide frame)
		frac := 0.35 + 0.45*math.Sqrt(r.Float64())
		if cut {
			frac = 0.5 + r.Float64()*0.3
		}
		if try > 20 {
			frac = 0.45
		}
		cw := frac * float64(W)
		ch := cw * aspect
		ang := (r.Float64()*2 - 1) * 8 * math.Pi / 180
		k := (r.Float64()*2 - 1) * 0.04 // keystone: top edge relative width change
		s := (r.Float64()*2 - 1) * 0.03 // side keystone
		local := [4][2]float64{
			{-cw / 2 * (1 - k), -ch / 2 * (1 - s)}, {cw / 2 * (1 - k), -ch / 2 * (1 + s)},
			{cw / 2 * (1 + k), ch / 2 * (1 + s)}, {-cw / 2 * (1 + k), ch / 2 * (1 - s)},
		}
		var pts [4][2]float64
		minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for i, l := range local {
			x := l[0]*math.Cos(ang) - l[1]*math.Sin(ang)
			y := l[0]*math.Sin(ang) + l[1]*math.Cos(ang)
			pts[i] = [2]float64{x, y}
			minX, maxX = math.Min(minX, x), math.Max(maxX, x)
			minY, maxY = math.Min(minY, y), math.Max(maxY, y)
		}
		margin := 0.03 * float64(W)
		bw, bh := maxX-minX, maxY-minY
		if bw+2*margin > float64(W) || bh+2*margin > float64(H) {
			continue
		}
		cx := margin - minX + r.Float64()*(float64(W)-2*margin-bw)
		cy := margin - minY + r.Float64()*(float64(H)-2*margin-bh)
		if cut {
			out := (0.2 + r.Float64()*0.25)
			switch r.IntN(4) {
			case 0:
				cx = -minX - out*bw
			case 1:
				cx = float64(W) - maxX + out*bw
			case 2:
				cy = -minY - out*bh
			default:
				cy = float64(H) - maxY + out*bh
			}
		}
		var c [4]image.Point
		for i, p := range pts {
			c[i] = image.Pt(int(math.Round(cx+p[0])), int(math.Round(cy+p[1])))
		}
		return c
	}
}

// homography maps the unit square's corners (0,0),(1,0),(1,1),(0,1) to q; it returns the
// inverse mapping frame → unit square as a 3×3 matrix.
func inverseHomography(q [4]image.Point) [9]float64 {
	// square → quad (Heckbert)
	x0, y0 := float64(q[0].X), float64(q[0].Y)
	x1, y1 := float64(q[1].X), float64(q[1].Y)
	x2, y2 := float64(q[2].X), float64(q[2].Y)
	x3, y3 := float64(q[3].X), float64(q[3].Y)
	dx1, dx2, dx3 := x1-x2, x3-x2, x0-x1+x2-x3
	dy1, dy2, dy3 := y1-y2, y3-y2, y0-y1+y2-y3
	var g, h float64
	if dx3 != 0 || dy3 != 0 {
		den := dx1*dy2 - dx2*dy1
		g = (dx3*dy2 - dx2*dy3) / den
		h = (dx1*dy3 - dx3*dy1) / den
	}
	a, b, c := x1-x0+g*x1, x3-x0+h*x3, x0
	d, e, f := y1-y0+g*y1, y3-y0+h*y3, y0
	m := [9]float64{a, b, c, d, e, f, g, h, 1}
	// inverse (adjugate)
	A, B, C := m[0], m[1], m[2]
	D, E, F := m[3], m[4], m[5]
	G, Hh, I := m[6], m[7], m[8]
	return [9]float64{
		E*I - F*Hh, C*Hh - B*I, B*F - C*E,
		F*G - D*I, A*I - C*G, C*D - A*F,
		D*Hh - E*G, B*G - A*Hh, A*E - B*D,
	}
}

// composite draws doc into the frame at the quad q with a soft shadow and rounded corners.
func composite(fr *plane, doc image.Image, q [4]image.Point, r *rand.Rand) {
	inv := inverseHomography(q)
	src := toRGBA(doc)
	sw, sh := src.Bounds().Dx(), src.Bounds().Dy()
	minX, minY, maxX, maxY := fr.w, fr.h, 0, 0
	for _, p := range q {
		minX, minY = min(minX, p.X), min(minY, p.Y)
		maxX, maxY = max(maxX, p.X), max(maxY, p.Y)
	}
	// scale: document pixels per frame pixel (for antialiased edges)
	edge := math.Hypot(float64(q[1].X-q[0].X), float64(q[1].Y-q[0].Y))
	scale := float64(sw) / math.Max(edge, 1)
	// shadow: darken an offset, blurred copy of the quad
	off := image.Pt(int(float64(fr.w)*0.004)+1, int(float64(fr.w)*0.006)+1)
	shadow := make([]float32, fr.w*fr.h)
	pad := fr.w / 60
	for y := max(0, minY-pad); y < min(fr.h, maxY+pad+off.Y); y++ {
		for x := max(0, minX-pad); x < min(fr.w, maxX+pad+off.X); x++ {
			u, v := project(inv, float64(x-off.X)+0.5, float64(y-off.Y)+0.5)
			if u >= 0 && u <= 1 && v >= 0 && v <= 1 {
				shadow[y*fr.w+x] = 1
			}
		}
	}
	boxBlurChannel(shadow, fr.w, fr.h, max(2, fr.w/200), 1)
	depth := float32(0.25 + r.Float64()*0.2)
	for i, s := range shadow {
		if s > 0 {
			k := 1 - depth*s
			fr.p[3*i] *= k
			fr.p[3*i+1] *= k
			fr.p[3*i+2] *= k
		}
	}
	rad := float64(sw) * 3.18 / 85.6 // ID-1 corner radius, scaled to the side's width
	for y := max(0, minY-1); y < min(fr.h, maxY+2); y++ {
		for x := max(0, minX-1); x < min(fr.w, maxX+2); x++ {
			u, v := project(inv, float64(x)+0.5, float64(y)+0.5)
			sx, sy := u*float64(sw), v*float64(sh)
			// distance inside the document's edge, in document pixels
			d := math.Min(math.Min(sx, float64(sw)-sx), math.Min(sy, float64(sh)-sy))
			cx, cy := math.Max(rad-sx, sx-(float64(sw)-rad)), math.Max(rad-sy, sy-(float64(sh)-rad))
			if cx > 0 && cy > 0 {
				d = rad - math.Hypot(cx, cy)
			}
			a := d/scale + 0.5
			if a <= 0 {
				continue
			}
			if a > 1 {
				a = 1
			}
			cr, cg, cb := bilinear(src, sx-0.5, sy-0.5)
			i := 3 * (y*fr.w + x)
			af := float32(a)
			fr.p[i] = fr.p[i]*(1-af) + cr*af
			fr.p[i+1] = fr.p[i+1]*(1-af) + cg*af
			fr.p[i+2] = fr.p[i+2]*(1-af) + cb*af
		}
	}
}

func project(m [9]float64, x, y float64) (float64, float64) {
	w := m[6]*x + m[7]*y + m[8]
	return (m[0]*x + m[1]*y + m[2]) / w, (m[3]*x + m[4]*y + m[5]) / w
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok && r.Bounds().Min == (image.Point{}) {
		return r
	}
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
	return out
}

func bilinear(img *image.RGBA, x, y float64) (float32, float32, float32) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	x = math.Max(0, math.Min(x, float64(w-1)))
	y = math.Max(0, math.Min(y, float64(h-1)))
	x0, y0 := int(x), int(y)
	x1, y1 := min(x0+1, w-1), min(y0+1, h-1)
	fx, fy := float32(x-float64(x0)), float32(y-float64(y0))
	p := img.Pix
	at := func(xx, yy, c int) float32 { return float32(p[yy*img.Stride+xx*4+c]) }
	var out [3]float32
	for c := 0; c < 3; c++ {
		top := at(x0, y0, c)*(1-fx) + at(x1, y0, c)*fx
		bot := at(x0, y1, c)*(1-fx) + at(x1, y1, c)*fx
		out[c] = top*(1-fy) + bot*fy
	}
	return out[0], out[1], out[2]
}

// light multiplies the frame by the exposure, a linear gradient of strength g in a random
// direction and a mild vignette.
func light(fr *plane, exposure, g float64, r *rand.Rand) {
	ang := r.Float64() * 2 * math.Pi
	ca, sa := math.Cos(ang), math.Sin(ang)
	cx, cy := float64(fr.w)/2, float64(fr.h)/2
	diag := math.Hypot(cx, cy)
	vig := 0.1 + r.Float64()*0.15
	warm := [3]float64{1 + r.Float64()*0.05, 1, 1 - r.Float64()*0.05}
	// the brightest point gets at most the exposure (the gradient redistributes light)
	exposure /= (1 + g*0.75) * warm[0]
	for y := 0; y < fr.h; y++ {
		for x := 0; x < fr.w; x++ {
			dx, dy := (float64(x)-cx)/diag, (float64(y)-cy)/diag
			k := exposure * (1 + g*(dx*ca+dy*sa)) * (1 - vig*(dx*dx+dy*dy))
			i := 3 * (y*fr.w + x)
			for c := 0; c < 3; c++ {
				fr.p[i+c] *= float32(k * warm[c])
			}
		}
	}
}

// addNoise adds Gaussian sensor noise of sd (0–255 scale), a little stronger in the dark.
func addNoise(fr *plane, sd float64, r *rand.Rand) {
	for i := 0; i < len(fr.p); i += 3 {
		l := float32(r.NormFloat64() * sd)                                   // luminance noise
		ch := float32(sd*0.4) * (float32(r.Uint32()>>8)/(1<<24)*2 - 1) * 1.7 // chroma noise
		fr.p[i] += l + ch
		fr.p[i+1] += l
		fr.p[i+2] += l - ch
	}
}

// glare adds a specular highlight on the document: an elliptical saturated core (4–8 % of
// the document's width) and a smooth halo about three times larger that washes the print out.
func glare(fr *plane, q [4]image.Point, r *rand.Rand) {
	// a point inside the document, away from its edges
	u, v := 0.25+r.Float64()*0.5, 0.25+r.Float64()*0.5
	top := [2]float64{float64(q[0].X)*(1-u) + float64(q[1].X)*u, float64(q[0].Y)*(1-u) + float64(q[1].Y)*u}
	bot := [2]float64{float64(q[3].X)*(1-u) + float64(q[2].X)*u, float64(q[3].Y)*(1-u) + float64(q[2].Y)*u}
	cx, cy := top[0]*(1-v)+bot[0]*v, top[1]*(1-v)+bot[1]*v
	width := math.Hypot(float64(q[1].X-q[0].X), float64(q[1].Y-q[0].Y))
	rc := width * (0.05 + r.Float64()*0.04)
	rh := rc * (2.8 + r.Float64()*1.2)
	elong := 1 + r.Float64()*0.8
	ang := r.Float64() * math.Pi
	ca, sa := math.Cos(ang), math.Sin(ang)
	tintB := float32(r.Float64() * 10) // slightly cool light
	ext := int(rh*elong*2.2) + 2
	inv := inverseHomography(q)
	edge := math.Max(width, 1)
	for y := max(0, int(cy)-ext); y < min(fr.h, int(cy)+ext); y++ {
		for x := max(0, int(cx)-ext); x < min(fr.w, int(cx)+ext); x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			a := (dx*ca + dy*sa) / elong
			b := -dx*sa + dy*ca
			d := math.Hypot(a, b)
			var k float64
			if d < rc {
				k = 1
			} else {
				halo := math.Exp(-((d - rc) / rh) * ((d - rc) / rh) * 2.2)
				k = 0.92 * halo
				// the core's rim blends into the halo over a few pixels
				if d < rc+3 {
					k = math.Max(k, 1-(d-rc)/3)
				}
			}
			if k <= 0.003 {
				continue
			}
			// specular light is reflected by the laminate only: fade out past the edge
			pu, pv := project(inv, float64(x)+0.5, float64(y)+0.5)
			in := math.Min(math.Min(pu, 1-pu), math.Min(pv, 1-pv)) * edge / 2
			if in <= 0 {
				continue
			}
			k *= math.Min(1, in)
			i := 3 * (y*fr.w + x)
			kf := float32(k)
			fr.p[i] += (258 - tintB - fr.p[i]) * kf
			fr.p[i+1] += (258 - tintB/2 - fr.p[i+1]) * kf
			fr.p[i+2] += (262 - fr.p[i+2]) * kf
		}
	}
}

// sheen adds the broad, soft reflection a laminated card shows under room light: a large
// smooth rise towards (but never reaching) white, at most 8–18 %, with no saturated core.
// It is not glare: print stays readable under it.
func sheen(fr *plane, q [4]image.Point, r *rand.Rand) {
	inv := inverseHomography(q)
	u0, v0 := r.Float64(), r.Float64()
	rad := 0.35 + r.Float64()*0.35 // in document widths
	peak := float32(0.08 + r.Float64()*0.1)
	minX, minY, maxX, maxY := fr.w, fr.h, 0, 0
	for _, p := range q {
		minX, minY = min(minX, p.X), min(minY, p.Y)
		maxX, maxY = max(maxX, p.X), max(maxY, p.Y)
	}
	for y := max(0, minY); y < min(fr.h, maxY+1); y++ {
		for x := max(0, minX); x < min(fr.w, maxX+1); x++ {
			u, v := project(inv, float64(x)+0.5, float64(y)+0.5)
			if u < 0 || u > 1 || v < 0 || v > 1 {
				continue
			}
			du, dv := u-u0, (v-v0)*0.63
			k := peak * float32(math.Exp(-(du*du+dv*dv)/(rad*rad)))
			i := 3 * (y*fr.w + x)
			for c := 0; c < 3; c++ {
				fr.p[i+c] += (240 - fr.p[i+c]) * k
			}
		}
	}
}

// rgba converts the plane to 8 bits, clamping.
func (fr *plane) rgba() *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, fr.w, fr.h))
	for i, j := 0, 0; i < len(fr.p); i, j = i+3, j+4 {
		for c := 0; c < 3; c++ {
			v := fr.p[i+c] + 0.5
			if v < 0 {
				v = 0
			} else if v > 255 {
				v = 255
			}
			out.Pix[j+c] = uint8(v)
		}
		out.Pix[j+3] = 255
	}
	return out
}

// boxBlurChannel blurs a single-channel image in place with passes box blurs of radius rad.
func boxBlurChannel(p []float32, w, h, rad, passes int) {
	tmp := make([]float32, max(w, h))
	for ; passes > 0; passes-- {
		for y := 0; y < h; y++ {
			boxLine(p[y*w:(y+1)*w], 1, w, rad, tmp)
		}
		col := make([]float32, h)
		for x := 0; x < w; x++ {
			for y := 0; y < h; y++ {
				col[y] = p[y*w+x]
			}
			boxLine(col, 1, h, rad, tmp)
			for y := 0; y < h; y++ {
				p[y*w+x] = col[y]
			}
		}
	}
}

// boxLine blurs n values of s (stride apart) with a box of radius rad, clamping at the ends.
func boxLine(s []float32, stride, n, rad int, tmp []float32) {
	for i := 0; i < n; i++ {
		tmp[i] = s[i*stride]
	}
	var acc float32
	for k := -rad; k <= rad; k++ {
		acc += tmp[min(max(k, 0), n-1)]
	}
	inv := 1 / float32(2*rad+1)
	for i := 0; i < n; i++ {
		s[i*stride] = acc * inv
		acc += tmp[min(i+rad+1, n-1)] - tmp[max(i-rad, 0)]
	}
}

// gaussBlur approximates a Gaussian blur of standard deviation sigma (pixels) with three
// box blurs per channel.
func gaussBlur(fr *plane, sigma float64) {
	if sigma < 0.3 {
		return
	}
	rad := int(math.Round(math.Sqrt(12*sigma*sigma/3+1)-1) / 2)
	if rad < 1 {
		// a small kernel: blend with the 4-neighbourhood
		k := float32(math.Min(0.2, sigma*sigma/4))
		smallBlur(fr, k)
		return
	}
	ch := make([]float32, fr.w*fr.h)
	for c := 0; c < 3; c++ {
		for i := range ch {
			ch[i] = fr.p[3*i+c]
		}
		boxBlurChannel(ch, fr.w, fr.h, rad, 3)
		for i := range ch {
			fr.p[3*i+c] = ch[i]
		}
	}
}

func smallBlur(fr *plane, k float32) {
	src := slices.Clone(fr.p)
	w, h := fr.w, fr.h
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := 3 * (y*w + x)
			for c := 0; c < 3; c++ {
				n := src[i+c-3] + src[i+c+3] + src[i+c-3*w] + src[i+c+3*w]
				fr.p[i+c] = src[i+c]*(1-4*k) + n*k
			}
		}
	}
}

// motionBlur averages along a line of length n pixels at angle ang.
func motionBlur(fr *plane, n float64, ang float64) {
	taps := int(math.Ceil(n))
	if taps < 2 {
		return
	}
	src := slices.Clone(fr.p)
	dx, dy := math.Cos(ang), math.Sin(ang)
	offs := make([][2]int, taps)
	for t := range offs {
		s := (float64(t)/float64(taps-1) - 0.5) * n
		offs[t] = [2]int{int(math.Round(s * dx)), int(math.Round(s * dy))}
	}
	inv := 1 / float32(taps)
	w, h := fr.w, fr.h
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var a, b, c float32
			for _, o := range offs {
				xx, yy := min(max(x+o[0], 0), w-1), min(max(y+o[1], 0), h-1)
				j := 3 * (yy*w + xx)
				a += src[j]
				b += src[j+1]
				c += src[j+2]
			}
			i := 3 * (y*w + x)
			fr.p[i], fr.p[i+1], fr.p[i+2] = a*inv, b*inv, c*inv
		}
	}
}
