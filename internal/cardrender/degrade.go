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

// Degradation describes how Degrade turns a clean render into a photo-like picture. Zero
// fields leave that step out.
type Degradation struct {
	Margin      float64 // background border around the document, as a fraction of its width
	RotationDeg float64 // in-plane rotation, degrees (positive: counter-clockwise)
	Skew        float64 // perspective: each corner moves up to Skew × width at random
	BlurSigma   float64 // Gaussian blur, pixels
	NoiseStdDev float64 // additive Gaussian noise on 0–255 values
	JPEGQuality int     // 1–100: encode and decode as JPEG at this quality
}

// MildDegradation returns a random photo-like degradation for seed: a dark background border,
// rotation within ±3°, perspective up to 1.5 % of the width, blur σ 0.6–1.2, noise σ 3–8 and
// JPEG quality 65–90.
func MildDegradation(seed uint64) Degradation {
	rng := rand.New(rand.NewPCG(seed, 0xde9ade))
	return Degradation{
		Margin:      0.06,
		RotationDeg: rng.Float64()*6 - 3,
		Skew:        0.015 * rng.Float64(),
		BlurSigma:   0.6 + 0.6*rng.Float64(),
		NoiseStdDev: 3 + 5*rng.Float64(),
		JPEGQuality: 65 + rng.IntN(26),
	}
}

// Degrade returns img as it might look in a photo: placed on a dark background, rotated and
// seen in perspective, blurred, noisy and JPEG-compressed, as d says. The same img, d and seed
// give the same picture.
func Degrade(img image.Image, d Degradation, seed uint64) (image.Image, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := warp(img, d, rng)
	if d.BlurSigma > 0 {
		out = gaussianBlur(out, d.BlurSigma)
	}
	if d.NoiseStdDev > 0 {
		for i := range out.Pix {
			if i%4 == 3 {
				continue
			}
			out.Pix[i] = clamp(float64(out.Pix[i]) + rng.NormFloat64()*d.NoiseStdDev)
		}
	}
	if d.JPEGQuality > 0 {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: d.JPEGQuality}); err != nil {
			return nil, fmt.Errorf("cardrender: jpeg encode: %w", err)
		}
		dec, err := jpeg.Decode(&buf)
		if err != nil {
			return nil, fmt.Errorf("cardrender: jpeg decode: %w", err)
		}
		return dec, nil
	}
	return out, nil
}

func clamp(v float64) uint8 {
	switch {
	case v < 0:
		return 0
	case v > 255:
		return 255
	}
	return uint8(v + 0.5)
}

// warp places img on a background canvas with the rotation and perspective of d, sampling
// bilinearly through the inverse homography.
func warp(img image.Image, d Degradation, rng *rand.Rand) *image.RGBA {
	src := toRGBA(img)
	w, h := float64(src.Rect.Dx()), float64(src.Rect.Dy())
	m := d.Margin * w
	cw, ch := int(w+2*m), int(h+2*m)
	cx, cy := float64(cw)/2, float64(ch)/2
	a := d.RotationDeg * math.Pi / 180
	corners := [4][2]float64{{0, 0}, {w, 0}, {w, h}, {0, h}}
	var dst [4][2]float64
	for i, p := range corners {
		x, y := p[0]-w/2, p[1]-h/2
		x, y = x*math.Cos(a)+y*math.Sin(a), -x*math.Sin(a)+y*math.Cos(a)
		dst[i] = [2]float64{cx + x + (rng.Float64()*2-1)*d.Skew*w, cy + y + (rng.Float64()*2-1)*d.Skew*w}
	}
	hm := homography.Solve(dst, corners) // canvas → source
	out := image.NewRGBA(image.Rect(0, 0, cw, ch))
	for y := 0; y < ch; y++ {
		for x := 0; x < cw; x++ {
			sx, sy := hm.Apply(float64(x)+0.5, float64(y)+0.5)
			sx, sy = sx-0.5, sy-0.5
			bg := 70 + 25*math.Sin(float64(x)/90) + 20*math.Cos(float64(y)/70)
			col := color.RGBA{clamp(bg), clamp(bg * 0.95), clamp(bg * 0.9), 255}
			if sx >= -0.5 && sy >= -0.5 && sx <= w-0.5 && sy <= h-0.5 {
				col = bilinear(src, sx, sy)
			}
			out.SetRGBA(x, y, col)
		}
	}
	return out
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok && r.Rect.Min == (image.Point{}) {
		return r
	}
	b := img.Bounds()
	r := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return r
}

func bilinear(src *image.RGBA, x, y float64) color.RGBA {
	w, h := src.Rect.Dx(), src.Rect.Dy()
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	fx, fy := x-float64(x0), y-float64(y0)
	at := func(x, y int) color.RGBA {
		x = min(max(x, 0), w-1)
		y = min(max(y, 0), h-1)
		return src.RGBAAt(x, y)
	}
	p00, p10, p01, p11 := at(x0, y0), at(x0+1, y0), at(x0, y0+1), at(x0+1, y0+1)
	mix := func(a, b, c, d uint8) uint8 {
		return clamp(float64(a)*(1-fx)*(1-fy) + float64(b)*fx*(1-fy) + float64(c)*(1-fx)*fy + float64(d)*fx*fy)
	}
	return color.RGBA{mix(p00.R, p10.R, p01.R, p11.R), mix(p00.G, p10.G, p01.G, p11.G), mix(p00.B, p10.B, p01.B, p11.B), 255}
}

// gaussianBlur blurs img with a separable Gaussian kernel of the given sigma.
func gaussianBlur(img *image.RGBA, sigma float64) *image.RGBA {
	rad := int(math.Ceil(3 * sigma))
	k := make([]float64, 2*rad+1)
	sum := 0.0
	for i := range k {
		d := float64(i - rad)
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	pass := func(in *image.RGBA, dx, dy int) *image.RGBA {
		out := image.NewRGBA(in.Rect)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				var r, g, b float64
				for i, kv := range k {
					xx := min(max(x+(i-rad)*dx, 0), w-1)
					yy := min(max(y+(i-rad)*dy, 0), h-1)
					o := yy*in.Stride + xx*4
					r += kv * float64(in.Pix[o])
					g += kv * float64(in.Pix[o+1])
					b += kv * float64(in.Pix[o+2])
				}
				o := y*out.Stride + x*4
				out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = clamp(r), clamp(g), clamp(b), 255
			}
		}
		return out
	}
	return pass(pass(img, 1, 0), 0, 1)
}
