package face

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// ErrBadImage reports an image the engine refuses: nil, empty, smaller than the minimum side,
// or larger than the configured limits. Test with errors.Is.
var ErrBadImage = errors.New("face: unusable image")

// raster is an 8-bit RGB image held in Go memory, row-major, 3 bytes per pixel. All pixel
// work (crop, resize, warp, colour statistics, FFT) happens on rasters in Go; OpenCV only sees
// the fixed-size float blobs the networks take, so a malformed input cannot reach C++.
type raster struct {
	w, h int
	pix  []uint8
}

// toRaster converts img to RGB after checking its dimensions against the limits. Alpha is
// composited onto white (a transparent PNG background reads as paper, not as black).
func toRaster(img image.Image, lim limits) (*raster, error) {
	if img == nil {
		return nil, fmt.Errorf("%w: nil image", ErrBadImage)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	switch {
	case w <= 0 || h <= 0:
		return nil, fmt.Errorf("%w: empty image", ErrBadImage)
	case w < lim.minSide || h < lim.minSide:
		return nil, fmt.Errorf("%w: %dx%d is smaller than %d pixels a side", ErrBadImage, w, h, lim.minSide)
	case w > lim.maxSide || h > lim.maxSide || w*h > lim.maxPixels:
		return nil, fmt.Errorf("%w: %dx%d exceeds %d pixels a side or %d pixels", ErrBadImage, w, h, lim.maxSide, lim.maxPixels)
	}
	r := &raster{w: w, h: h, pix: make([]uint8, w*h*3)}
	switch src := img.(type) {
	case *image.YCbCr:
		ycbcrToRGB(r.pix, src)
	case *image.Gray:
		for y := 0; y < h; y++ {
			row := src.Pix[y*src.Stride : y*src.Stride+w]
			o := y * w * 3
			for _, v := range row {
				r.pix[o], r.pix[o+1], r.pix[o+2] = v, v, v
				o += 3
			}
		}
	case *image.RGBA:
		for y := 0; y < h; y++ {
			row := src.Pix[y*src.Stride : y*src.Stride+w*4]
			o := y * w * 3
			for x := 0; x < w; x++ {
				a := uint32(row[x*4+3])
				// premultiplied: composite onto white
				r.pix[o] = uint8(uint32(row[x*4]) + 255 - a)
				r.pix[o+1] = uint8(uint32(row[x*4+1]) + 255 - a)
				r.pix[o+2] = uint8(uint32(row[x*4+2]) + 255 - a)
				o += 3
			}
		}
	default:
		o := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				cr, cg, cb, ca := img.At(x, y).RGBA() // premultiplied, 16 bit
				white := 0xffff - ca
				r.pix[o] = uint8((cr + white) >> 8)
				r.pix[o+1] = uint8((cg + white) >> 8)
				r.pix[o+2] = uint8((cb + white) >> 8)
				o += 3
			}
		}
	}
	return r, nil
}

// ycbcrToRGB writes src's pixels to dst (RGB, 3 bytes a pixel, rows of src's width) with
// color.YCbCrToRGB's arithmetic, without its call and the offsets' per pixel: a chroma sample's
// offset is a row's part plus a column's (image.YCbCr.COffset, any subsampling), the column's
// computed once per image. A decoded photo is converted whole once per model call, so this
// loop was a third of a face detection.
func ycbcrToRGB(dst []uint8, src *image.YCbCr) {
	b := src.Rect
	w := b.Dx()
	base := src.COffset(b.Min.X, b.Min.Y)
	col := make([]int, w)
	for x := range col {
		col[x] = src.COffset(b.Min.X+x, b.Min.Y) - base
	}
	clamp := func(v int32) uint8 {
		if uint32(v)&0xff000000 == 0 {
			return uint8(v >> 16)
		}
		return uint8(^(v >> 31))
	}
	o := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		yrow := src.Y[src.YOffset(b.Min.X, y):]
		yrow = yrow[:w]
		crow := src.COffset(b.Min.X, y)
		for x, yv := range yrow {
			ci := crow + col[x]
			yy1 := int32(yv) * 0x10101
			cb1 := int32(src.Cb[ci]) - 128
			cr1 := int32(src.Cr[ci]) - 128
			dst[o] = clamp(yy1 + 91881*cr1)
			dst[o+1] = clamp(yy1 - 22554*cb1 - 46802*cr1)
			dst[o+2] = clamp(yy1 + 116130*cb1)
			o += 3
		}
	}
}

// at returns channel c of the pixel nearest (x, y), clamping to the border.
func (r *raster) at(x, y, c int) float32 {
	if x < 0 {
		x = 0
	} else if x >= r.w {
		x = r.w - 1
	}
	if y < 0 {
		y = 0
	} else if y >= r.h {
		y = r.h - 1
	}
	return float32(r.pix[(y*r.w+x)*3+c])
}

// bilinear samples channel c at the real position (x, y) (pixel centres at integers),
// replicating the border.
func (r *raster) bilinear(x, y float64, c int) float32 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := float32(x-x0), float32(y-y0)
	ix, iy := int(x0), int(y0)
	a := r.at(ix, iy, c)*(1-fx) + r.at(ix+1, iy, c)*fx
	b := r.at(ix, iy+1, c)*(1-fx) + r.at(ix+1, iy+1, c)*fx
	return a*(1-fy) + b*fy
}

// sample returns the pixel averaged over the source footprint of one destination pixel
// centred at (x, y) with size (sx, sy) source pixels: bilinear when the footprint is at most
// one pixel (upscaling), else the mean of up to 4×4 pixels spread over the footprint, so that
// downscaling does not alias fine texture (which the replay signal looks at).
func (r *raster) sample(x, y, sx, sy float64) [3]float32 {
	nx, ny := int(math.Ceil(sx)), int(math.Ceil(sy))
	if nx <= 1 && ny <= 1 {
		return [3]float32{r.bilinear(x, y, 0), r.bilinear(x, y, 1), r.bilinear(x, y, 2)}
	}
	nx, ny = min(max(nx, 1), 4), min(max(ny, 1), 4)
	var s [3]float32
	for j := 0; j < ny; j++ {
		py := int(math.Round(y - sy/2 + sy*(float64(j)+0.5)/float64(ny)))
		py = min(max(py, 0), r.h-1)
		for i := 0; i < nx; i++ {
			px := int(math.Round(x - sx/2 + sx*(float64(i)+0.5)/float64(nx)))
			px = min(max(px, 0), r.w-1)
			o := (py*r.w + px) * 3
			s[0] += float32(r.pix[o])
			s[1] += float32(r.pix[o+1])
			s[2] += float32(r.pix[o+2])
		}
	}
	n := float32(nx * ny)
	return [3]float32{s[0] / n, s[1] / n, s[2] / n}
}

// resizeRect maps the source rectangle (x0, y0, x1, y1) (real coordinates, may extend past the
// image: the border is replicated) onto a new w×h raster.
func (r *raster) resizeRect(x0, y0, x1, y1 float64, w, h int) *raster {
	out := &raster{w: w, h: h, pix: make([]uint8, w*h*3)}
	sx, sy := (x1-x0)/float64(w), (y1-y0)/float64(h)
	o := 0
	for j := 0; j < h; j++ {
		py := y0 + (float64(j)+0.5)*sy - 0.5
		for i := 0; i < w; i++ {
			px := x0 + (float64(i)+0.5)*sx - 0.5
			v := r.sample(px, py, sx, sy)
			out.pix[o], out.pix[o+1], out.pix[o+2] = clamp8(v[0]), clamp8(v[1]), clamp8(v[2])
			o += 3
		}
	}
	return out
}

// warp builds a w×h raster whose pixel (u, v) samples the source at inv·(u, v, 1), where inv
// is a 2×3 affine map from destination to source coordinates. Outside the source is black,
// as in the ArcFace alignment the embedder was trained with.
func (r *raster) warp(inv [6]float64, w, h int) *raster {
	out := &raster{w: w, h: h, pix: make([]uint8, w*h*3)}
	o := 0
	for v := 0; v < h; v++ {
		for u := 0; u < w; u++ {
			x := inv[0]*float64(u) + inv[1]*float64(v) + inv[2]
			y := inv[3]*float64(u) + inv[4]*float64(v) + inv[5]
			if x >= -0.5 && y >= -0.5 && x <= float64(r.w)-0.5 && y <= float64(r.h)-0.5 {
				for c := 0; c < 3; c++ {
					out.pix[o+c] = clamp8(r.bilinear(x, y, c))
				}
			}
			o += 3
		}
	}
	return out
}

// blobCHW returns the raster as a planar float blob 1×3×h×w with value (p - mean) * scale,
// channels in order (R, G, B), or (B, G, R) when bgr is set.
func (r *raster) blobCHW(mean, scale float32, bgr bool) []float32 {
	n := r.w * r.h
	out := make([]float32, 3*n)
	for i := 0; i < n; i++ {
		for c := 0; c < 3; c++ {
			dc := c
			if bgr {
				dc = 2 - c
			}
			out[dc*n+i] = (float32(r.pix[i*3+c]) - mean) * scale
		}
	}
	return out
}

// gray returns the luma plane (BT.601) as floats in [0, 255].
func (r *raster) gray() []float32 {
	out := make([]float32, r.w*r.h)
	for i := range out {
		out[i] = 0.299*float32(r.pix[i*3]) + 0.587*float32(r.pix[i*3+1]) + 0.114*float32(r.pix[i*3+2])
	}
	return out
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
