package tamper

import "math"

// dctBasis[u][x] is the orthonormal 8-point DCT-II basis, the transform JPEG uses: a block
// of pixels minus 128 transforms to the coefficients the encoder quantised.
var dctBasis = func() (b [8][8]float64) {
	for u := range 8 {
		a := math.Sqrt(2.0 / 8)
		if u == 0 {
			a = math.Sqrt(1.0 / 8)
		}
		for x := range 8 {
			b[u][x] = a * math.Cos(math.Pi*float64(2*x+1)*float64(u)/16)
		}
	}
	return b
}()

// dct8 returns the 2-D DCT (natural order) of the 8×8 block of p at (x0, y0), level-shifted
// by 128. The caller keeps the block inside p.
func dct8(p *Plane, x0, y0 int, out *[64]float64) {
	var tmp [8][8]float64 // tmp[y][u]: rows transformed
	for y := range 8 {
		row := p.Pix[(y0+y)*p.W+x0 : (y0+y)*p.W+x0+8]
		for u := range 8 {
			s := 0.0
			for x, v := range row {
				s += (float64(v) - 128) * dctBasis[u][x]
			}
			tmp[y][u] = s
		}
	}
	for v := range 8 {
		for u := range 8 {
			s := 0.0
			for y := range 8 {
				s += tmp[y][u] * dctBasis[v][y]
			}
			out[v*8+u] = s
		}
	}
}
