package imagequality

import (
	"image"
	"image/color"
	"math"
)

// plane is a luma plane, row-major, values 0..255.
type plane struct {
	w, h int
	pix  []float32
}

// downscaleLuma returns the luma of img area-averaged to maxW pixels wide (aspect ratio
// kept), or at full size when img is not wider than maxW. It reads every source pixel once
// and allocates only the destination and one source row.
func downscaleLuma(img image.Image, maxW int) plane {
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dw, dh := sw, sh
	if sw > maxW {
		dw = maxW
		dh = max(1, int(math.Round(float64(sh)*float64(maxW)/float64(sw))))
	}
	colBin := make([]int, sw)
	colCount := make([]uint32, dw)
	for x := range sw {
		c := x * dw / sw
		colBin[x] = c
		colCount[c]++
	}
	rowCount := make([]uint32, dh)
	for y := range sh {
		rowCount[y*dh/sh]++
	}
	sums := make([]uint32, dw*dh)
	row := make([]uint8, sw)
	read := rowReader(img)
	for y := range sh {
		read(b.Min.Y+y, row)
		base := (y * dh / sh) * dw
		for x, v := range row {
			sums[base+colBin[x]] += uint32(v)
		}
	}
	p := plane{w: dw, h: dh, pix: make([]float32, dw*dh)}
	for dy := range dh {
		for dx := range dw {
			i := dy*dw + dx
			p.pix[i] = float32(sums[i]) / float32(colCount[dx]*rowCount[dy])
		}
	}
	return p
}

// rowReader returns a function that writes the 8-bit luma of source row y into row, with
// fast paths for the types the JPEG and PNG decoders produce.
func rowReader(img image.Image) func(y int, row []uint8) {
	b := img.Bounds()
	w := b.Dx()
	switch m := img.(type) {
	case *image.YCbCr:
		return func(y int, row []uint8) {
			i := m.YOffset(b.Min.X, y)
			copy(row, m.Y[i:i+w])
		}
	case *image.Gray:
		return func(y int, row []uint8) {
			i := m.PixOffset(b.Min.X, y)
			copy(row, m.Pix[i:i+w])
		}
	case *image.RGBA:
		return func(y int, row []uint8) { rgbLuma(m.Pix[m.PixOffset(b.Min.X, y):], row) }
	case *image.NRGBA:
		return func(y int, row []uint8) { rgbLuma(m.Pix[m.PixOffset(b.Min.X, y):], row) }
	default:
		return func(y int, row []uint8) {
			for x := range row {
				row[x] = color.GrayModel.Convert(img.At(b.Min.X+x, y)).(color.Gray).Y
			}
		}
	}
}

// rgbLuma converts 4-byte RGBA/NRGBA pixels to luma with color.GrayModel's weights
// (alpha ignored).
func rgbLuma(pix []uint8, row []uint8) {
	for x := range row {
		p := pix[4*x : 4*x+3 : 4*x+3]
		row[x] = uint8((19595*uint32(p[0]) + 38470*uint32(p[1]) + 7471*uint32(p[2]) + 1<<15) >> 16)
	}
}

// mean returns the mean value of the plane.
func (p plane) mean() float64 {
	var s float64
	for _, v := range p.pix {
		s += float64(v)
	}
	return s / float64(len(p.pix))
}

// laplacianVariance returns the variance of the 4-neighbour 3×3 Laplacian
// [0 1 0; 1 -4 1; 0 1 0] over interior pixels, or 0 when there are none.
func (p plane) laplacianVariance() float64 {
	if p.w < 3 || p.h < 3 {
		return 0
	}
	var sum, sumSq float64
	for y := 1; y < p.h-1; y++ {
		up, mid, down := p.pix[(y-1)*p.w:y*p.w], p.pix[y*p.w:(y+1)*p.w], p.pix[(y+1)*p.w:(y+2)*p.w]
		for x := 1; x < p.w-1; x++ {
			l := float64(up[x] + down[x] + mid[x-1] + mid[x+1] - 4*mid[x])
			sum += l
			sumSq += l * l
		}
	}
	n := float64((p.w - 2) * (p.h - 2))
	m := sum / n
	return max(0, sumSq/n-m*m)
}

// darkest returns the luma at or below which a fraction q of the plane lies (a low
// percentile: the print's ink level when print covers more than q of the frame).
func (p plane) darkest(q float64) float64 {
	var hist [256]int
	for _, v := range p.pix {
		hist[min(255, max(0, int(v)))]++
	}
	want := int(q * float64(len(p.pix)))
	acc := 0
	for v, c := range hist {
		acc += c
		if acc > want {
			return float64(v)
		}
	}
	return 255
}

// meanInside returns the mean luma of p inside the convex quadrilateral q, given in the
// picture's pixels, scale p's pixels to one of them; p's mean when q holds no pixel centre.
func (p plane) meanInside(q Quad, scale float64) float64 {
	var c [4][2]float64
	x0, y0, x1, y1 := float64(p.w), float64(p.h), 0.0, 0.0
	for i, pt := range q {
		c[i] = [2]float64{pt[0] * scale, pt[1] * scale}
		x0, y0, x1, y1 = min(x0, c[i][0]), min(y0, c[i][1]), max(x1, c[i][0]), max(y1, c[i][1])
	}
	var sum float64
	n := 0
	for y := max(0, int(y0)); y < min(p.h, int(y1)+1); y++ {
		for x := max(0, int(x0)); x < min(p.w, int(x1)+1); x++ {
			if insideQuad(c, [2]float64{float64(x) + 0.5, float64(y) + 0.5}) {
				sum += float64(p.pix[y*p.w+x])
				n++
			}
		}
	}
	if n == 0 {
		return p.mean()
	}
	return sum / float64(n)
}
