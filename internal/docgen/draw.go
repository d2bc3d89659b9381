package docgen

import (
	"image"
	"image/color"
	"math"
	"strings"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// pt is a point in millimetres on the document.
type pt struct{ x, y float64 }

// canvas is one side of a document being drawn; coordinates are millimetres from the top
// left corner, converted with s pixels per millimetre.
type canvas struct {
	img   *image.RGBA
	s     float64
	faces faceCache
	z     vector.Rasterizer
	texts []textBox // every text drawn, for layout tests
	// poff is the personalisation layer's offset (mm): values and the portrait are printed
	// on the pre-printed card in a second pass, never exactly in register.
	poff pt
}

// textBox is where a text was drawn (mm): from x0 to x1, from the top of its capitals and
// accents to the bottom of its descenders.
type textBox struct {
	s              string
	x0, y0, x1, y1 float64
}

func newCanvas(wmm, hmm float64, widthPx int, faces faceCache) *canvas {
	s := float64(widthPx) / wmm
	h := int(math.Round(hmm * s))
	return &canvas{img: image.NewRGBA(image.Rect(0, 0, widthPx, h)), s: s, faces: faces}
}

func (c *canvas) px(mm float64) float64 { return mm * c.s }

// fill paints the closed polygons (millimetres) with col; polygons are normalised to one
// orientation, so overlapping ones add up rather than cancel (use holes for holes).
func (c *canvas) fill(col color.Color, polys ...[]pt) { c.fillHoles(col, polys, nil) }

// fillHoles paints polys minus holes.
func (c *canvas) fillHoles(col color.Color, polys, holes [][]pt) {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range polys {
		for _, q := range p {
			minX, minY = math.Min(minX, q.x*c.s), math.Min(minY, q.y*c.s)
			maxX, maxY = math.Max(maxX, q.x*c.s), math.Max(maxY, q.y*c.s)
		}
	}
	b := c.img.Bounds()
	r := image.Rect(int(math.Floor(minX)), int(math.Floor(minY)), int(math.Ceil(maxX))+1, int(math.Ceil(maxY))+1)
	r = r.Intersect(b)
	if r.Empty() {
		return
	}
	c.z.Reset(r.Dx(), r.Dy())
	add := func(p []pt, sign float64) {
		if len(p) < 3 {
			return
		}
		a := 0.0
		for i := range p {
			j := (i + 1) % len(p)
			a += p[i].x*p[j].y - p[j].x*p[i].y
		}
		rev := (a < 0) != (sign < 0)
		at := func(i int) (float32, float32) {
			if rev {
				i = len(p) - 1 - i
			}
			return float32(p[i].x*c.s - float64(r.Min.X)), float32(p[i].y*c.s - float64(r.Min.Y))
		}
		c.z.MoveTo(at(0))
		for i := 1; i < len(p); i++ {
			c.z.LineTo(at(i))
		}
		c.z.ClosePath()
	}
	for _, p := range polys {
		add(p, 1)
	}
	for _, p := range holes {
		add(p, -1)
	}
	c.z.DrawOp = draw.Over
	c.z.Draw(c.img, r, image.NewUniform(col), image.Point{})
}

func rectPoly(x, y, w, h float64) []pt { return []pt{{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}} }

func ellipsePoly(cx, cy, rx, ry float64) []pt {
	n := 72
	out := make([]pt, n)
	for i := range out {
		a := 2 * math.Pi * float64(i) / float64(n)
		out[i] = pt{cx + rx*math.Cos(a), cy + ry*math.Sin(a)}
	}
	return out
}

func roundRectPoly(x, y, w, h, rad float64) []pt {
	var out []pt
	corner := func(cx, cy, a0 float64) {
		for i := 0; i <= 8; i++ {
			a := a0 + math.Pi/2*float64(i)/8
			out = append(out, pt{cx + rad*math.Cos(a), cy + rad*math.Sin(a)})
		}
	}
	corner(x+w-rad, y+rad, -math.Pi/2)
	corner(x+w-rad, y+h-rad, 0)
	corner(x+rad, y+h-rad, math.Pi/2)
	corner(x+rad, y+rad, math.Pi)
	return out
}

func (c *canvas) rect(x, y, w, h float64, col color.Color) { c.fill(col, rectPoly(x, y, w, h)) }

// frame strokes a rectangle's outline with width wd.
func (c *canvas) frame(x, y, w, h, wd float64, col color.Color) {
	c.fillHoles(col, [][]pt{rectPoly(x, y, w, h)}, [][]pt{rectPoly(x+wd, y+wd, w-2*wd, h-2*wd)})
}

func (c *canvas) disc(cx, cy, r float64, col color.Color) { c.fill(col, ellipsePoly(cx, cy, r, r)) }

func (c *canvas) ring(cx, cy, r, wd float64, col color.Color) {
	c.fillHoles(col, [][]pt{ellipsePoly(cx, cy, r, r)}, [][]pt{ellipsePoly(cx, cy, r-wd, r-wd)})
}

// star is a five-pointed star polygon.
func star(cx, cy, r float64) []pt {
	var out []pt
	for i := 0; i < 10; i++ {
		rr := r
		if i%2 == 1 {
			rr = r * 0.38
		}
		a := -math.Pi/2 + math.Pi*float64(i)/5
		out = append(out, pt{cx + rr*math.Cos(a), cy + rr*math.Sin(a)})
	}
	return out
}

// stroke draws a polyline of width wd with round joins.
func (c *canvas) stroke(pts []pt, wd float64, col color.Color) {
	var polys [][]pt
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		dx, dy := b.x-a.x, b.y-a.y
		l := math.Hypot(dx, dy)
		if l == 0 {
			continue
		}
		nx, ny := -dy/l*wd/2, dx/l*wd/2
		polys = append(polys, []pt{{a.x + nx, a.y + ny}, {b.x + nx, b.y + ny}, {b.x - nx, b.y - ny}, {a.x - nx, a.y - ny}})
	}
	for i := 1; i+1 < len(pts); i++ {
		polys = append(polys, ellipsePoly(pts[i].x, pts[i].y, wd/2, wd/2))
	}
	if len(polys) > 0 {
		c.fill(col, polys...)
	}
}

// shade blends col into the area x, y, w, h (mm) with the opacity the function gives for
// each pixel (coordinates in mm).
func (c *canvas) shade(x, y, w, h float64, col color.RGBA, alpha func(x, y float64) float64) {
	r := image.Rect(int(c.px(x)), int(c.px(y)), int(math.Ceil(c.px(x+w))), int(math.Ceil(c.px(y+h)))).Intersect(c.img.Bounds())
	for py := r.Min.Y; py < r.Max.Y; py++ {
		my := (float64(py) + 0.5) / c.s
		i := c.img.PixOffset(r.Min.X, py)
		for px := r.Min.X; px < r.Max.X; px, i = px+1, i+4 {
			a := alpha((float64(px)+0.5)/c.s, my)
			if a <= 0 {
				continue
			}
			if a > 1 {
				a = 1
			}
			p := c.img.Pix[i : i+4 : i+4]
			p[0] = uint8(float64(p[0])*(1-a) + float64(col.R)*a + 0.5)
			p[1] = uint8(float64(p[1])*(1-a) + float64(col.G)*a + 0.5)
			p[2] = uint8(float64(p[2])*(1-a) + float64(col.B)*a + 0.5)
			p[3] = 255
		}
	}
}

// textStyle is how a piece of text is set: typeface, size (the em in millimetres), colour.
type textStyle struct {
	f        *opentype.Font
	size     float64
	col      color.Color
	personal bool // printed in the personalisation pass (see canvas.poff)
}

func (c *canvas) face(st textStyle) font.Face { return c.faces.face(st.f, c.px(st.size)) }

// width returns the advance of s in millimetres.
func (c *canvas) width(s string, st textStyle) float64 {
	return float64(font.MeasureString(c.face(st), s)) / 64 / c.s
}

// text draws s with its baseline at y, starting at x; it returns the width in mm.
func (c *canvas) text(x, y float64, s string, st textStyle) float64 {
	if st.personal {
		x, y = x+c.poff.x, y+c.poff.y
	}
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(st.col), Face: c.face(st),
		Dot: fixed.Point26_6{X: fixed.Int26_6(c.px(x) * 64), Y: fixed.Int26_6(c.px(y) * 64)}}
	d.DrawString(s)
	w := float64(d.Dot.X)/64/c.s - x
	if s != "" {
		c.texts = append(c.texts, textBox{s, x, y - 0.74*st.size, x + w, y + 0.2*st.size})
	}
	if st.personal {
		w += c.poff.x // the width from the caller's x, so what follows stays in its place
	}
	return w
}

// textCentered draws s centred on cx.
func (c *canvas) textCentered(cx, y float64, s string, st textStyle) {
	c.text(cx-c.width(s, st)/2, y, s, st)
}

// fitText shrinks st until s fits in w millimetres.
func (c *canvas) fitText(s string, st textStyle, w float64) textStyle {
	for st.size > 0.8 && c.width(s, st) > w {
		st.size *= 0.95
	}
	return st
}

// wrap breaks s at spaces into lines no wider than first (the first line) and rest (the
// others) millimetres; a word longer than a line stays whole. Joining the lines with single
// spaces gives back s with its spaces normalised.
func (c *canvas) wrap(s string, st textStyle, first, rest float64) []string {
	words := strings.Fields(s)
	var lines []string
	cur := ""
	limit := first
	for _, w := range words {
		try := w
		if cur != "" {
			try = cur + " " + w
		}
		if cur != "" && c.width(try, st) > limit {
			lines = append(lines, cur)
			cur = w
			limit = rest
			continue
		}
		cur = try
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// placeImage draws src into the box (mm), scaled to cover it and centre-cropped.
func (c *canvas) placeImage(src image.Image, x, y, w, h float64) {
	dr := image.Rect(int(c.px(x)), int(c.px(y)), int(c.px(x+w)), int(c.px(y+h)))
	sb := src.Bounds()
	if sb.Empty() || dr.Empty() {
		return
	}
	// crop src to dr's aspect
	want := float64(dr.Dx()) / float64(dr.Dy())
	have := float64(sb.Dx()) / float64(sb.Dy())
	sr := sb
	if have > want {
		nw := int(float64(sb.Dy()) * want)
		sr.Min.X += (sb.Dx() - nw) / 2
		sr.Max.X = sr.Min.X + nw
	} else {
		nh := int(float64(sb.Dx()) / want)
		// keep the top (faces sit in the upper part of portraits)
		sr.Min.Y += (sb.Dy() - nh) / 4
		sr.Max.Y = sr.Min.Y + nh
	}
	draw.CatmullRom.Scale(c.img, dr, src, sr, draw.Src, nil)
}

// rgb is a shorthand for opaque colours.
func rgb(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 255} }

// mix returns a + (b - a) t.
func mix(a, b color.RGBA, t float64) color.RGBA {
	l := func(x, y uint8) uint8 { return uint8(float64(x) + (float64(y)-float64(x))*t + 0.5) }
	return color.RGBA{l(a.R, b.R), l(a.G, b.G), l(a.B, b.B), 255}
}
