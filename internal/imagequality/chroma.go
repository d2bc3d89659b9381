package imagequality

import (
	"image"
	"image/color"
)

// chromaGain scales the chroma planes' differences from neutral before the edge search: a
// card and a table of nearly one brightness differ in hue by 8–15 levels of Cb or Cr (a
// bluish card on a beige table), which doubled is an edge of the minGradient or the
// faintGradient pass over a side's two pixels of blur.
const chromaGain = 2

// chromaPlanes returns img's blue-difference and red-difference chroma (Cb, Cr of
// YCbCr, neutral at 128, differences scaled by chromaGain) area-averaged to dw × dh. A JPEG's
// own chroma samples are averaged as they are (no conversion); other images are converted
// from RGB on a grid of about two samples per destination pixel each way.
func chromaPlanes(img image.Image, dw, dh int) (cb, cr plane) {
	cb = plane{w: dw, h: dh, pix: make([]float32, dw*dh)}
	cr = plane{w: dw, h: dh, pix: make([]float32, dw*dh)}
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy()
	if sw == 0 || sh == 0 || dw == 0 || dh == 0 {
		return cb, cr
	}
	n := make([]float32, dw*dh)
	add := func(x, y int, u, v uint8) { // x, y relative to b.Min
		i := (y*dh/sh)*dw + x*dw/sw
		cb.pix[i] += float32(u)
		cr.pix[i] += float32(v)
		n[i]++
	}
	if m, ok := img.(*image.YCbCr); ok {
		// Walk the chroma samples; each stands for the pixel at its subsampled position.
		sx, sy := 1, 1
		switch m.SubsampleRatio {
		case image.YCbCrSubsampleRatio422:
			sx = 2
		case image.YCbCrSubsampleRatio420:
			sx, sy = 2, 2
		case image.YCbCrSubsampleRatio440:
			sy = 2
		case image.YCbCrSubsampleRatio411:
			sx = 4
		case image.YCbCrSubsampleRatio410:
			sx, sy = 4, 2
		}
		for y := 0; y < sh; y += sy {
			for x := 0; x < sw; x += sx {
				i := m.COffset(b.Min.X+x, b.Min.Y+y)
				add(x, y, m.Cb[i], m.Cr[i])
			}
		}
	} else {
		step := max(1, min(sw/(2*dw), sh/(2*dh)))
		for y := 0; y < sh; y += step {
			for x := 0; x < sw; x += step {
				r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
				_, u, v := color.RGBToYCbCr(uint8(r>>8), uint8(g>>8), uint8(bl>>8))
				add(x, y, u, v)
			}
		}
	}
	for i := range n {
		if n[i] == 0 {
			cb.pix[i], cr.pix[i] = 128, 128
			continue
		}
		cb.pix[i] = 128 + chromaGain*(cb.pix[i]/n[i]-128)
		cr.pix[i] = 128 + chromaGain*(cr.pix[i]/n[i]-128)
	}
	return cb, cr
}
