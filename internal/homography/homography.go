// Package homography maps points between two quadrilaterals: the perspective transform that
// the OCR uses to straighten a photographed card and the card renderer uses to skew one.
package homography

import "math"

// Matrix is a 3×3 projective transform, row-major, with its last element 1.
type Matrix [9]float64

// Solve returns the transform mapping each corner of from onto the same corner of to, by
// Gauss–Jordan elimination with partial pivoting of the 8×8 linear system. Degenerate
// quadrilaterals (three collinear corners) give a meaningless matrix, not a panic.
func Solve(from, to [4][2]float64) Matrix {
	var a [8][9]float64
	for i := 0; i < 4; i++ {
		x, y, u, v := from[i][0], from[i][1], to[i][0], to[i][1]
		a[2*i] = [9]float64{x, y, 1, 0, 0, 0, -u * x, -u * y, u}
		a[2*i+1] = [9]float64{0, 0, 0, x, y, 1, -v * x, -v * y, v}
	}
	for col := 0; col < 8; col++ {
		p := col
		for r := col + 1; r < 8; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[p][col]) {
				p = r
			}
		}
		a[col], a[p] = a[p], a[col]
		for r := 0; r < 8; r++ {
			if r == col || a[col][col] == 0 {
				continue
			}
			f := a[r][col] / a[col][col]
			for k := col; k < 9; k++ {
				a[r][k] -= f * a[col][k]
			}
		}
	}
	var m Matrix
	for i := 0; i < 8; i++ {
		m[i] = a[i][8] / a[i][i]
	}
	m[8] = 1
	return m
}

// Apply maps the point (x, y).
func (m Matrix) Apply(x, y float64) (float64, float64) {
	w := m[6]*x + m[7]*y + m[8]
	return (m[0]*x + m[1]*y + m[2]) / w, (m[3]*x + m[4]*y + m[5]) / w
}
