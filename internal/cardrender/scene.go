package cardrender

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"

	"github.com/idstream/idstream/internal/homography"
)

// Background is the surface a document lies on in a Scene.
type Background int

// Backgrounds.
const (
	DarkSmooth Background = iota // dark grey-brown with slow waves (Degrade's background)
	LightTable                   // a light grey table, a gentle gradient: low contrast with the card
	Wood                         // brown planks: grain stripes and straight plank joints
	Fabric                       // mid-grey blotchy texture with fine noise
	DeskEdge                     // a dark desk whose straight edge crosses the frame over a light floor
)

// Scene is a document photographed on a surface: the frame size, where the document lies and
// how it is seen, and the photo-like degradations applied to the whole frame.
type Scene struct {
	Width, Height int        // frame size in pixels
	Background    Background // the surface
	// CenterX, CenterY place the document's centre, as fractions of the frame's width and
	// height (0.5, 0.5 is the middle; values near or beyond 0 and 1 cut the document off).
	CenterX, CenterY float64
	Scale            float64 // the document's width as a fraction of the frame's width
	RotationDeg      float64 // in-plane rotation, degrees (positive: counter-clockwise)
	Skew             float64 // perspective: each corner moves up to Skew × document width
	BlurSigma        float64 // Gaussian blur, pixels
	NoiseStdDev      float64 // additive Gaussian noise on 0–255 values
	JPEGQuality      int     // 1–100: encode and decode as JPEG at this quality; 0: no JPEG
}

// Place photographs doc as s says and returns the picture and the document's corners in it
// (top-left, top-right, bottom-right, bottom-left of the document, which may lie outside the
// frame). A nil doc gives the bare surface, with zero corners. The same doc, s and seed give
// the same picture.
func Place(doc image.Image, s Scene, seed uint64) (image.Image, [4][2]float64, error) {
	var corners [4][2]float64
	if s.Width <= 0 || s.Height <= 0 {
		return nil, corners, fmt.Errorf("cardrender: scene size %d×%d", s.Width, s.Height)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5ce4e))
	surface := newSurface(s.Background, s.Width, s.Height, rng)
	out := image.NewRGBA(image.Rect(0, 0, s.Width, s.Height))
	var hm homography.Matrix
	var src *image.RGBA
	if doc != nil {
		src = toRGBA(doc)
		w, h := float64(src.Rect.Dx()), float64(src.Rect.Dy())
		dw := s.Scale * float64(s.Width)
		dh := dw * h / w
		cx, cy := s.CenterX*float64(s.Width), s.CenterY*float64(s.Height)
		a := s.RotationDeg * math.Pi / 180
		for i, p := range [4][2]float64{{-dw / 2, -dh / 2}, {dw / 2, -dh / 2}, {dw / 2, dh / 2}, {-dw / 2, dh / 2}} {
			x, y := p[0]*math.Cos(a)+p[1]*math.Sin(a), -p[0]*math.Sin(a)+p[1]*math.Cos(a)
			corners[i] = [2]float64{cx + x + (rng.Float64()*2-1)*s.Skew*dw, cy + y + (rng.Float64()*2-1)*s.Skew*dw}
		}
		hm = homography.Solve(corners, [4][2]float64{{0, 0}, {w, 0}, {w, h}, {0, h}})
	}
	for y := range s.Height {
		for x := range s.Width {
			col := surface(x, y)
			if src != nil {
				sx, sy := hm.Apply(float64(x)+0.5, float64(y)+0.5)
				sx, sy = sx-0.5, sy-0.5
				if sx >= -0.5 && sy >= -0.5 && sx <= float64(src.Rect.Dx())-0.5 && sy <= float64(src.Rect.Dy())-0.5 {
					col = bilinear(src, sx, sy)
				}
			}
			out.SetRGBA(x, y, col)
		}
	}
	if s.BlurSigma > 0 {
		out = gaussianBlur(out, s.BlurSigma)
	}
	if s.NoiseStdDev > 0 {
		for i := range out.Pix {
			if i%4 != 3 {
				out.Pix[i] = clamp(float64(out.Pix[i]) + rng.NormFloat64()*s.NoiseStdDev)
			}
		}
	}
	if s.JPEGQuality <= 0 {
		return out, corners, nil
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: s.JPEGQuality}); err != nil {
		return nil, corners, fmt.Errorf("cardrender: scene jpeg encode: %w", err)
	}
	img, err := jpeg.Decode(&buf)
	if err != nil {
		return nil, corners, fmt.Errorf("cardrender: scene jpeg decode: %w", err)
	}
	return img, corners, nil
}

// newSurface returns the colour of background b at each pixel of a w × h frame, its details
// drawn from rng.
func newSurface(b Background, w, h int, rng *rand.Rand) func(x, y int) color.RGBA {
	grey := func(v, r, g, bl float64) color.RGBA {
		return color.RGBA{clamp(v * r), clamp(v * g), clamp(v * bl), 255}
	}
	switch b {
	case LightTable:
		base := 180 + 15*rng.Float64()
		return func(x, y int) color.RGBA {
			return grey(base+0.01*float64(x)-0.008*float64(y), 1, 1, 0.97)
		}
	case Wood:
		plank := 120 + rng.IntN(80)
		phase := rng.Float64() * 10
		return func(x, y int) color.RGBA {
			v := 95 + 18*math.Sin(float64(y)/7+3*math.Sin(float64(x)/150+phase)) + 10*math.Sin(float64(y)/2.3)
			if y%plank < 3 { // the joint between two planks
				v = 45
			}
			return grey(v, 1.25, 0.95, 0.7)
		}
	case Fabric:
		// Blotches: a coarse random grid, bilinearly interpolated, plus a fine weave.
		const cell = 24
		coarse := make([]float64, 256*256)
		for i := range coarse {
			coarse[i] = 90 + 60*rng.Float64()
		}
		at := func(i, j int) float64 { return coarse[(j&255)*256+(i&255)] }
		return func(x, y int) color.RGBA {
			i, j := x/cell, y/cell
			fx, fy := float64(x%cell)/cell, float64(y%cell)/cell
			v := at(i, j)*(1-fx)*(1-fy) + at(i+1, j)*fx*(1-fy) + at(i, j+1)*(1-fx)*fy + at(i+1, j+1)*fx*fy
			if (x+y)%4 < 2 {
				v += 8
			}
			return grey(v, 0.9, 0.95, 1.1)
		}
	case DeskEdge:
		// The desk's straight edge crosses the frame at a random slope near the bottom.
		slope := rng.Float64()*0.3 - 0.15
		off := (0.8 + 0.1*rng.Float64()) * float64(h)
		return func(x, y int) color.RGBA {
			if float64(y) < off+slope*(float64(x)-float64(w)/2) {
				return grey(60+6*math.Sin(float64(x)/40), 1.1, 1, 0.9)
			}
			return grey(165, 1, 1, 1)
		}
	default: // DarkSmooth
		return func(x, y int) color.RGBA {
			v := 70 + 25*math.Sin(float64(x)/90) + 20*math.Cos(float64(y)/70)
			return grey(v, 1, 0.95, 0.9)
		}
	}
}
