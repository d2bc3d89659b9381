// Package cardrender renders synthetic identity documents for tests: the front and back of the
// Vietnamese 12-digit chip citizen identity card ("CĂN CƯỚC CÔNG DÂN", with the TD1 machine
// readable zone on the back), of the 12-digit card without chip of 2016–2020 and of the 9-digit
// identity card ("GIẤY CHỨNG MINH NHÂN DÂN"; neither has a zone), a passport data page with a
// TD3 zone, and a vehicle registration card. Text is drawn with real fonts (DejaVu Sans for the visual zone, OCR-B for the MRZ)
// through golang.org/x/image/font/opentype, so OCR tests exercise real glyphs. Degrade turns a
// render into a photo-like picture (rotation, perspective, blur, noise, JPEG), deterministic
// from a seed. Every render returns its ground truth under the canonical field names the OCR
// produces. All data is synthetic (see SyntheticPerson); nothing here is a real person's.
//
// The templates have fixed geometry: a card is rendered at CardWidth × CardHeight, a passport
// page at PassportWidth × PassportHeight, and every value sits in a fixed box, which the OCR
// layouts in internal/docread mirror. A Renderer is safe for concurrent use.
package cardrender

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Geometry of the rendered templates, in pixels.
const (
	CardWidth      = 1200 // ID-1 card, 85.6 mm
	CardHeight     = 756  // 54 mm
	PassportWidth  = 1250 // TD3 data page, 125 mm
	PassportHeight = 880  // 88 mm
)

// Default font files of the Debian packages fonts-dejavu-core and fonts-ocr-b.
const (
	DefaultSansFont     = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
	DefaultSansBoldFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
	// OCRBS.otf rather than OCRB.otf: OCRB.otf's '<' uses a CFF operator (flex1) that
	// golang.org/x/image/font/sfnt cannot draw, so its fillers come out blank.
	DefaultOCRBFont = "/usr/share/fonts/opentype/ocr-b/OCRBS.otf"
)

// Renderer draws documents with its fonts. Create it with New.
type Renderer struct {
	sans, bold, ocrb *opentype.Font
}

type options struct {
	sans, bold, ocrb string
}

// Option configures New.
type Option func(*options)

// WithSansFont sets the regular font file of the visual zone (default DefaultSansFont).
func WithSansFont(path string) Option { return func(o *options) { o.sans = path } }

// WithSansBoldFont sets the bold font file of the visual zone (default DefaultSansBoldFont).
func WithSansBoldFont(path string) Option { return func(o *options) { o.bold = path } }

// WithOCRBFont sets the OCR-B font file used for machine readable zones (default
// DefaultOCRBFont).
func WithOCRBFont(path string) Option { return func(o *options) { o.ocrb = path } }

// New loads the fonts. The fonts must cover Vietnamese (precomposed Latin Extended Additional).
func New(opts ...Option) (*Renderer, error) {
	o := options{sans: DefaultSansFont, bold: DefaultSansBoldFont, ocrb: DefaultOCRBFont}
	for _, opt := range opts {
		opt(&o)
	}
	var r Renderer
	for _, f := range []struct {
		path string
		dst  **opentype.Font
	}{{o.sans, &r.sans}, {o.bold, &r.bold}, {o.ocrb, &r.ocrb}} {
		fnt, err := loadFont(f.path)
		if err != nil {
			return nil, err
		}
		*f.dst = fnt
	}
	return &r, nil
}

// loadFont reads and parses the font file at path. A missing file's error wraps
// fs.ErrNotExist.
func loadFont(path string) (*opentype.Font, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cardrender: read font: %w", err)
	}
	fnt, err := opentype.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("cardrender: parse font %s: %w", path, err)
	}
	return fnt, nil
}

// LoadFace returns the font file at path as a face of size points at 72 dpi (size pixels),
// for drawing text into test images. A missing file's error wraps fs.ErrNotExist. The face
// is not safe for concurrent use.
func LoadFace(path string, size float64) (font.Face, error) {
	fnt, err := loadFont(path)
	if err != nil {
		return nil, err
	}
	fc, err := opentype.NewFace(fnt, &opentype.FaceOptions{Size: size, DPI: 72})
	if err != nil {
		return nil, fmt.Errorf("cardrender: face of %s: %w", path, err)
	}
	return fc, nil
}

// canvas is one render in progress. Faces are per canvas: opentype faces are not safe for
// concurrent use.
type canvas struct {
	img   *image.RGBA
	r     *Renderer
	faces map[faceKey]font.Face
}

type faceKey struct {
	f    *opentype.Font
	size float64
}

func (r *Renderer) newCanvas(w, h int, bg color.RGBA) *canvas {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	return &canvas{img: img, r: r, faces: map[faceKey]font.Face{}}
}

func (c *canvas) face(f *opentype.Font, size float64) font.Face {
	k := faceKey{f, size}
	if fc, ok := c.faces[k]; ok {
		return fc
	}
	fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		// Only invalid options fail; ours are constant and valid.
		panic(fmt.Sprintf("cardrender: new face: %v", err))
	}
	c.faces[k] = fc
	return fc
}

var (
	ink      = color.RGBA{25, 25, 35, 255}
	labelInk = color.RGBA{55, 60, 75, 255}
	red      = color.RGBA{190, 30, 35, 255}
)

// text draws s with its baseline starting at (x, y).
func (c *canvas) text(f *opentype.Font, size float64, col color.Color, x, y int, s string) {
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: c.face(f, size), Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// width returns the advance of s in pixels.
func (c *canvas) width(f *opentype.Font, size float64, s string) int {
	return font.MeasureString(c.face(f, size), s).Ceil()
}

// centered draws s centred on cx.
func (c *canvas) centered(f *opentype.Font, size float64, col color.Color, cx, y int, s string) {
	c.text(f, size, col, cx-c.width(f, size, s)/2, y, s)
}

// fitted draws s at size, shrunk (down to 60 %) until it fits in maxWidth.
func (c *canvas) fitted(f *opentype.Font, size float64, col color.Color, x, y, maxWidth int, s string) {
	for sz := size; sz >= size*0.6; sz-- {
		if c.width(f, sz, s) <= maxWidth {
			c.text(f, sz, col, x, y, s)
			return
		}
	}
	c.text(f, size*0.6, col, x, y, s)
}

// fill paints r with col.
func (c *canvas) fill(r image.Rectangle, col color.Color) {
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Src)
}

// frame draws a rectangle outline of thickness t.
func (c *canvas) frame(r image.Rectangle, t int, col color.Color) {
	c.fill(image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), col)
	c.fill(image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y), col)
	c.fill(image.Rect(r.Min.X, r.Min.Y, r.Min.X+t, r.Max.Y), col)
	c.fill(image.Rect(r.Max.X-t, r.Min.Y, r.Max.X, r.Max.Y), col)
}

// disc paints a filled circle.
func (c *canvas) disc(cx, cy, rad int, col color.RGBA) {
	for y := cy - rad; y <= cy+rad; y++ {
		for x := cx - rad; x <= cx+rad; x++ {
			if (x-cx)*(x-cx)+(y-cy)*(y-cy) <= rad*rad {
				c.img.SetRGBA(x, y, col)
			}
		}
	}
}

// ring draws a circle outline of thickness t.
func (c *canvas) ring(cx, cy, rad, t int, col color.RGBA) {
	for y := cy - rad; y <= cy+rad; y++ {
		for x := cx - rad; x <= cx+rad; x++ {
			d := (x-cx)*(x-cx) + (y-cy)*(y-cy)
			if d <= rad*rad && d >= (rad-t)*(rad-t) {
				c.img.SetRGBA(x, y, col)
			}
		}
	}
}

// photo draws the portrait placeholder: a framed grey rectangle with a head-and-shoulders
// silhouette (not a face).
func (c *canvas) photo(r image.Rectangle) {
	c.fill(r, color.RGBA{200, 205, 212, 255})
	cx := (r.Min.X + r.Max.X) / 2
	w, h := r.Dx(), r.Dy()
	c.disc(cx, r.Min.Y+h*2/5, w/5, color.RGBA{150, 155, 165, 255})
	for y := r.Min.Y + h*3/5 + h/12; y < r.Max.Y; y++ {
		half := w/4 + (y-r.Min.Y-h*3/5)/2
		if half > w/2 {
			half = w / 2
		}
		c.fill(image.Rect(cx-half, y, cx+half, y+1), color.RGBA{150, 155, 165, 255})
	}
	c.frame(r, 2, labelInk)
}

// background paints a light security-print-like background: a vertical tint gradient and
// faint wave lines, light enough to stay behind the text.
func (c *canvas) background(top, bottom color.RGBA) {
	b := c.img.Bounds()
	for y := 0; y < b.Dy(); y++ {
		t := float64(y) / float64(b.Dy())
		col := color.RGBA{
			uint8(float64(top.R)*(1-t) + float64(bottom.R)*t),
			uint8(float64(top.G)*(1-t) + float64(bottom.G)*t),
			uint8(float64(top.B)*(1-t) + float64(bottom.B)*t), 255}
		c.fill(image.Rect(0, y, b.Dx(), y+1), col)
	}
	for k := 0; k < b.Dy(); k += 36 {
		for x := 0; x < b.Dx(); x++ {
			y := k + int(6*math.Sin(float64(x)/40))
			if y >= 0 && y < b.Dy() {
				p := c.img.RGBAAt(x, y)
				c.img.SetRGBA(x, y, color.RGBA{p.R - p.R/16, p.G - p.G/20, p.B - p.B/24, 255})
			}
		}
	}
}
