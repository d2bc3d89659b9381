package docgen

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
)

// Security-print backgrounds (the card's tint). Each split has its own set:
//
//	Calibration: "waves" (bundles of horizontal sine lines), "rosette" (a polar guilloche
//	rosette centred on the card).
//	HeldOut: "crosshatch" (two families of crossing wavy diagonals, a moiré net),
//	"ripples" (concentric modulated rings from an off-card centre with fine dots).
var tintPatterns = map[Split][]string{
	Calibration: {"waves", "rosette"},
	HeldOut:     {"crosshatch", "ripples"},
}

// lineAlpha is the coverage of a periodic line family at phase (in periods) for lines lw mm
// wide with period mm between them; aa is one pixel in mm.
func lineAlpha(phase, period, lw, aa float64) float64 {
	f := phase - math.Floor(phase)
	d := math.Min(f, 1-f) * period
	a := (lw/2 + aa/2 - d) / aa
	return math.Max(0, math.Min(1, a))
}

// tint paints the document's background: a gradient between base and base2 and the
// pattern's lines in ink, over x, y, w, h (mm).
func (c *canvas) tint(pattern string, x, y, w, h float64, base, base2, ink color.RGBA, r *rand.Rand) {
	c.rect(x, y, w, h, base)
	ang := r.Float64() * math.Pi
	ca, sa, diag := math.Cos(ang), fsin(ang), math.Hypot(w, h)
	c.shade(x, y, w, h, base2, func(px, py float64) float64 {
		u := ((px-x)*ca + (py-y)*sa) / diag
		return 0.5 + 0.5*fsin(u*math.Pi*1.3)
	})
	aa := 1 / c.s
	lw := math.Max(0.12, 0.9*aa)
	k1, k2, k3 := 1.5+r.Float64(), 2+r.Float64()*2, r.Float64()*6
	switch pattern {
	case "waves":
		period := 0.9 + r.Float64()*0.4
		c.shade(x, y, w, h, ink, func(px, py float64) float64 {
			ph := (py + 1.4*fsin(px/k1/3+k3) + 0.6*fsin(px/k2)) / period
			return 0.45 * lineAlpha(ph, period, lw, aa)
		})
	case "rosette":
		cx, cy := x+w*(0.4+0.2*r.Float64()), y+h*(0.4+0.2*r.Float64())
		n := float64(8 + r.IntN(8))
		period := 1.1 + r.Float64()*0.5
		c.shade(x, y, w, h, ink, func(px, py float64) float64 {
			dx, dy := px-cx, py-cy
			rr := math.Hypot(dx, dy)
			th := math.Atan2(dy, dx)
			a1 := lineAlpha((rr+1.8*fsin(n*th+rr/5))/period, period, lw, aa)
			a2 := lineAlpha((rr+1.8*fsin(n*th-rr/5+1))/period, period, lw, aa)
			return 0.4 * math.Max(a1, a2)
		})
	case "crosshatch":
		period := 1.0 + r.Float64()*0.6
		c.shade(x, y, w, h, ink, func(px, py float64) float64 {
			a1 := lineAlpha((px+py+0.8*fsin((px-py)/k2))/period/1.414, period, lw, aa)
			a2 := lineAlpha((px-py+0.8*fsin((px+py)/k1/2))/period/1.414, period, lw, aa)
			return 0.35 * math.Max(a1, a2)
		})
	case "ripples":
		cx, cy := x-w*0.2+r.Float64()*w*0.3, y+h*(1.1+0.3*r.Float64())
		period := 0.8 + r.Float64()*0.4
		c.shade(x, y, w, h, ink, func(px, py float64) float64 {
			rr := math.Hypot(px-cx, py-cy)
			th := math.Atan2(py-cy, px-cx)
			a := lineAlpha((rr+0.5*fsin(30*th))/period, period, lw, aa)
			// fine dot screen between the rings
			dot := 0.0
			if u, v := px/0.7, py/0.7; (u-math.Floor(u))*0.7 < aa && (v-math.Floor(v))*0.7 < aa {
				dot = 0.5
			}
			return 0.4 * math.Max(a, dot)
		})
	}
}

// emblem draws a simplified national emblem: a red disc, a gold star, a ring of rice ears
// and a cog at the bottom.
func (c *canvas) emblem(cx, cy, r float64) {
	gold := rgb(232, 185, 35)
	red := rgb(204, 30, 36)
	c.disc(cx, cy, r, gold)
	c.disc(cx, cy, r*0.86, red)
	c.fill(gold, star(cx, cy-r*0.08, r*0.5))
	for i := 0; i < 14; i++ {
		a := math.Pi*0.15 + math.Pi*1.7*float64(i)/13
		ex, ey := cx+r*0.93*math.Cos(a+math.Pi/2), cy+r*0.93*math.Sin(a+math.Pi/2)
		c.fill(gold, ellipsePoly(ex, ey, r*0.12, r*0.12))
	}
	c.disc(cx, cy+r*0.62, r*0.2, gold)
	c.disc(cx, cy+r*0.62, r*0.09, red)
}

// qr draws a QR-code-like square of n×n modules at x, y with side s.
func (c *canvas) qr(x, y, s float64, n int, r *rand.Rand) {
	c.rect(x-s*0.04, y-s*0.04, s*1.08, s*1.08, rgb(255, 255, 255))
	m := s / float64(n)
	dark := rgb(20, 20, 20)
	finder := func(fx, fy int) {
		c.rect(x+float64(fx)*m, y+float64(fy)*m, 7*m, 7*m, dark)
		c.rect(x+float64(fx+1)*m, y+float64(fy+1)*m, 5*m, 5*m, rgb(255, 255, 255))
		c.rect(x+float64(fx+2)*m, y+float64(fy+2)*m, 3*m, 3*m, dark)
	}
	var polys [][]pt
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			if (i < 8 && j < 8) || (i >= n-8 && j < 8) || (i < 8 && j >= n-8) {
				continue
			}
			if r.IntN(2) == 0 {
				polys = append(polys, rectPoly(x+float64(i)*m, y+float64(j)*m, m*1.02, m*1.02))
			}
		}
	}
	c.fill(dark, polys...)
	finder(0, 0)
	finder(n-7, 0)
	finder(0, n-7)
}

// chip draws an ISO 7816 contact pad.
func (c *canvas) chip(x, y, w, h float64) {
	c.fill(rgb(160, 125, 40), roundRectPoly(x, y, w, h, h*0.15))
	c.fill(rgb(222, 190, 100), roundRectPoly(x+0.25, y+0.25, w-0.5, h-0.5, h*0.13))
	c.shade(x, y, w, h, rgb(250, 232, 170), func(px, py float64) float64 { return 0.6 * (1 - (py-y)/h) * (1 - (px-x)/w) })
	line := rgb(150, 115, 40)
	lw := 0.22
	c.rect(x+w*0.33, y, lw, h, line)
	c.rect(x+w*0.67-lw, y, lw, h, line)
	for i := 1; i < 4; i++ {
		yy := y + h*float64(i)/4
		c.rect(x, yy, w*0.33, lw, line)
		c.rect(x+w*0.67, yy, w*0.33, lw, line)
	}
	c.fill(rgb(222, 190, 100), roundRectPoly(x+w*0.36, y+h*0.3, w*0.28, h*0.4, 0.5))
}

// fingerprint draws a box with a grey fingerprint and the label under or over it.
func (c *canvas) fingerprint(x, y, w, h float64, r *rand.Rand) {
	c.frame(x, y, w, h, 0.18, rgb(90, 90, 90))
	cx, cy := x+w/2+(r.Float64()-0.5)*w*0.1, y+h/2
	rx, ry := w*0.33, h*0.4
	freq := 6 + r.Float64()*1.5
	ph := r.Float64() * 6
	c.shade(x, y, w, h, rgb(70, 70, 80), func(px, py float64) float64 {
		dx, dy := (px-cx)/rx, (py-cy)/ry
		d := math.Hypot(dx, dy)
		if d > 1 {
			return 0
		}
		v := math.Sin(d*rx*freq*2+0.6*math.Sin(3*math.Atan2(dy, dx)+ph)) * (1 - d*d)
		return 0.75 * math.Max(0, v)
	})
}

// silhouette is the neutral portrait used when no face is supplied.
func (c *canvas) silhouette(x, y, w, h float64) {
	c.rect(x, y, w, h, rgb(214, 222, 232))
	aa := 1 / c.s
	in := func(px, py, cx, cy, rx, ry float64) float64 {
		d := (math.Hypot((px-cx)/rx, (py-cy)/ry) - 1) * math.Min(rx, ry)
		return math.Max(0, math.Min(1, 0.5-d/aa))
	}
	c.shade(x, y, w, h, rgb(120, 128, 140), func(px, py float64) float64 {
		return math.Max(in(px, py, x+w/2, y+h*0.38, w*0.22, h*0.19), in(px, py, x+w/2, y+h*1.02, w*0.48, h*0.36))
	})
}

// portrait fills the box with the face (or the silhouette) and a thin frame.
func (c *canvas) portrait(face image.Image, x, y, w, h float64) {
	x, y = x+c.poff.x, y+c.poff.y
	if face == nil {
		c.silhouette(x, y, w, h)
	} else {
		c.placeImage(face, x, y, w, h)
		c.printTone(x, y, w, h)
	}
	c.frame(x, y, w, h, 0.12, rgb(110, 110, 110))
}

// printTone makes the box look printed on the card rather than photographic: a little less
// saturation and contrast, and lifted blacks.
func (c *canvas) printTone(x, y, w, h float64) {
	r := image.Rect(int(c.px(x)), int(c.px(y)), int(c.px(x+w)), int(c.px(y+h))).Intersect(c.img.Bounds())
	for py := r.Min.Y; py < r.Max.Y; py++ {
		i := c.img.PixOffset(r.Min.X, py)
		for px := r.Min.X; px < r.Max.X; px, i = px+1, i+4 {
			p := c.img.Pix[i : i+3 : i+3]
			l := 0.299*float64(p[0]) + 0.587*float64(p[1]) + 0.114*float64(p[2])
			for k := range p {
				v := l + (float64(p[k])-l)*0.8 // 20 % less saturated
				p[k] = uint8(18 + v*0.88)      // lifted blacks, softer contrast
			}
		}
	}
}

// signature draws a handwritten-looking stroke in blue ink.
func (c *canvas) signature(x, y, w, h float64, r *rand.Rand) {
	var pts []pt
	n := 60
	a1, a2, f1, f2 := h*0.3, h*0.2, 2+r.Float64()*3, 5+r.Float64()*6
	for i := 0; i <= n; i++ {
		t := float64(i) / float64(n)
		pts = append(pts, pt{x + w*t + math.Sin(t*f2*2)*w*0.03, y + h/2 + a1*math.Sin(t*f1*2*math.Pi) + a2*math.Cos(t*f2*2*math.Pi)})
	}
	c.stroke(pts, 0.25, rgb(25, 40, 130))
	c.stroke([]pt{{x + w*0.1, y + h*0.8}, {x + w*0.9, y + h*0.65}}, 0.2, rgb(25, 40, 130))
}

// seal draws a translucent red round stamp.
func (c *canvas) seal(cx, cy, r float64) {
	red := color.NRGBA{200, 30, 40, 150}
	c.ring(cx, cy, r, r*0.08, red)
	c.ring(cx, cy, r*0.72, r*0.05, red)
	c.fill(red, star(cx, cy, r*0.45))
}

// mrzZone draws the machine readable zone lines with font st, each line lineW mm wide,
// baselines from y0 spaced dy; a white band under it when white.
func (c *canvas) mrzZone(lines []string, st textStyle, x, y0, dy, lineW float64) {
	// scale the monospace face so a line is lineW wide
	w1 := c.width(lines[0], st)
	if w1 > 0 {
		st.size *= lineW / w1
	}
	for i, l := range lines {
		c.text(x, y0+float64(i)*dy, l, st)
	}
}

// dmy formats a date with sep: 15/03/1999.
func dmy(t interface{ Format(string) string }, sep string) string {
	return t.Format(fmt.Sprintf("02%s01%s2006", sep, sep))
}

// fsin is a fast sine (error below 0.001) for procedural patterns.
func fsin(x float64) float64 {
	x *= 1 / (2 * math.Pi)
	x -= math.Floor(x + 0.5)
	y := 8*x - 16*x*math.Abs(x)
	return 0.225*(y*math.Abs(y)-y) + y
}
