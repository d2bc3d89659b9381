package face

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"
)

// TestYCbCrToRaster: a decoded photo (every chroma subsampling, a sub-image whose bounds do
// not start at a multiple of the subsampling) converts to the RGB that color.YCbCrToRGB
// gives pixel by pixel, saturated colours included.
func TestYCbCrToRaster(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	ratios := []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410}
	for _, ratio := range ratios {
		full := image.NewYCbCr(image.Rect(0, 0, 61, 47), ratio)
		for _, p := range [][]uint8{full.Y, full.Cb, full.Cr} {
			for i := range p {
				p[i] = uint8(rng.IntN(256))
			}
		}
		for _, img := range []*image.YCbCr{full, full.SubImage(image.Rect(3, 5, 58, 46)).(*image.YCbCr)} {
			r, err := toRaster(img, limits{minSide: 1, maxSide: 1000, maxPixels: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			b := img.Bounds()
			if r.w != b.Dx() || r.h != b.Dy() {
				t.Fatalf("%v: raster %d×%d of %v", ratio, r.w, r.h, b)
			}
			for y := 0; y < r.h; y++ {
				for x := 0; x < r.w; x++ {
					c := img.YCbCrAt(b.Min.X+x, b.Min.Y+y)
					R, G, B := color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
					o := (y*r.w + x) * 3
					if r.pix[o] != R || r.pix[o+1] != G || r.pix[o+2] != B {
						t.Fatalf("%v %v: pixel (%d, %d) = %v, want %v", ratio, b, x, y, r.pix[o:o+3], []uint8{R, G, B})
					}
				}
			}
		}
	}
}
