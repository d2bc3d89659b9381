// Package phash computes perceptual hashes of images and searches sets of them, for the
// fraud group's near-duplicate replay check: an image re-encoded, resized or slightly
// cropped keeps (nearly) the same hash, while a different photo gets an unrelated one.
//
// The hash is the 64-bit DCT hash ("pHash"): the image's luminance is averaged down to
// 32×32 (area averaging, so any input size gives the same grid), transformed by a 2-D DCT,
// and each of the 8×8 lowest frequencies becomes one bit: set when the coefficient is above
// the median of those 64. The DC coefficient's bit is always set, so 63 bits carry
// information. Two images are compared by the Hamming distance of their hashes (Distance).
//
// Thresholds are measured in phash_test.go (TestNearDuplicateThreshold) on the repository's
// face photos and card renders; see DefaultMaxDistance. The hash does not survive rotation,
// mirroring or cropping beyond about 1–2 % of a side: such copies are not found.
package phash

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// Hash is a 64-bit perceptual hash.
type Hash uint64

// DefaultMaxDistance is the largest Hamming distance at which two images count as
// near-identical. Measured on the 8 face photos of internal/face/facetest
// (TestNearDuplicateThreshold): re-encodings at JPEG quality 50–95, resizing to 50–150 %,
// ±10 % brightness and crops of up to 1 % per side stay within 6 bits of the original;
// crops of 2–3 % reach 14 bits (so they are not all found); two different photos are 24 bits
// or more apart (random hashes: 32 ± 4). Bits flip in pairs (a coefficient crossing the
// median swaps with another), so distances are even.
//
// Card renders of different people on one template are 0–8 bits apart: the layout is the
// whole low-frequency content. The hash therefore identifies a replayed photo (a selfie),
// not a replayed document, which the exact SHA-256 index covers.
const DefaultMaxDistance = 10

// size is the side of the averaged luminance grid, low the side of the kept frequencies.
const (
	size = 32
	low  = 8
)

// Distance returns the Hamming distance between a and b (0–64).
func Distance(a, b Hash) int { return bits.OnesCount64(uint64(a ^ b)) }

// String returns the hash as 16 lowercase hex digits.
func (h Hash) String() string { return fmt.Sprintf("%016x", uint64(h)) }

// Parse reads a hash written by String.
func Parse(s string) (Hash, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("phash: parse %q: want 16 hex digits", s)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("phash: parse %q: %w", s, err)
	}
	return Hash(v), nil
}

// Of returns the hash of img. An image smaller than 1×1 hashes to 0. It reads every pixel
// once (BenchmarkOf: 14 ms for a 1920×1350 RGBA photo) and allocates a few kilobytes.
func Of(img image.Image) Hash {
	b := img.Bounds()
	if b.Dx() < 1 || b.Dy() < 1 {
		return 0
	}
	grid := average(img)
	coef := dct2(&grid)
	vals := make([]float64, 0, low*low)
	for v := range low {
		for u := range low {
			vals = append(vals, coef[v][u])
		}
	}
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	median := (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	var h Hash
	for i, x := range vals {
		if x > median {
			h |= 1 << uint(63-i)
		}
	}
	return h
}

// average returns the mean luminance (0–255) of each cell of a size×size grid over img,
// each pixel weighted by the fraction of it that falls in the cell (rows and columns are
// split at their fractional boundaries).
func average(img image.Image) [size][size]float64 {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	var sum, weight [size][size]float64
	// Each source column x covers [x, x+1) and maps to grid columns [x*size/w, (x+1)*size/w).
	colCell, colSplit := spans(w)
	rowCell, rowSplit := spans(h)
	luma := lumaFunc(img)
	for y := range h {
		r0, rf := rowCell[y], rowSplit[y]
		for x := range w {
			c0, cf := colCell[x], colSplit[x]
			l := luma(b.Min.X+x, b.Min.Y+y)
			add := func(r, c int, wt float64) {
				if wt > 0 && r < size && c < size {
					sum[r][c] += l * wt
					weight[r][c] += wt
				}
			}
			add(r0, c0, rf*cf)
			add(r0, c0+1, rf*(1-cf))
			add(r0+1, c0, (1-rf)*cf)
			add(r0+1, c0+1, (1-rf)*(1-cf))
		}
	}
	var out [size][size]float64
	for r := range size {
		for c := range size {
			if weight[r][c] > 0 {
				out[r][c] = sum[r][c] / weight[r][c]
			}
		}
	}
	return out
}

// spans maps each of n source pixels to the grid cell its start falls in and the fraction of
// the pixel that lies in that cell (the rest lies in the next cell). A pixel never spans more
// than two cells when n ≥ size; when n < size (a tiny image) each pixel is given wholly to
// one cell and the cells between stay 0, which still hashes deterministically.
func spans(n int) ([]int, []float64) {
	cell := make([]int, n)
	frac := make([]float64, n)
	scale := float64(size) / float64(n)
	for i := range n {
		start, end := float64(i)*scale, float64(i+1)*scale
		c := int(start)
		cell[i] = c
		if n < size || end <= float64(c+1) {
			frac[i] = 1
		} else {
			frac[i] = (float64(c+1) - start) / scale
		}
	}
	return cell, frac
}

// lumaFunc returns a fast luminance reader for the common image types.
func lumaFunc(img image.Image) func(x, y int) float64 {
	switch m := img.(type) {
	case *image.YCbCr:
		return func(x, y int) float64 { return float64(m.Y[m.YOffset(x, y)]) }
	case *image.Gray:
		return func(x, y int) float64 { return float64(m.Pix[m.PixOffset(x, y)]) }
	case *image.RGBA:
		return func(x, y int) float64 {
			i := m.PixOffset(x, y)
			return 0.299*float64(m.Pix[i]) + 0.587*float64(m.Pix[i+1]) + 0.114*float64(m.Pix[i+2])
		}
	case *image.NRGBA:
		return func(x, y int) float64 {
			i := m.PixOffset(x, y)
			return 0.299*float64(m.Pix[i]) + 0.587*float64(m.Pix[i+1]) + 0.114*float64(m.Pix[i+2])
		}
	}
	return func(x, y int) float64 { return float64(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y) }
}

// dct2 returns the low×low lowest frequencies of the orthonormal 2-D DCT-II of g.
func dct2(g *[size][size]float64) [low][low]float64 {
	var cos [low][size]float64
	for u := range low {
		a := math.Sqrt(2.0 / size)
		if u == 0 {
			a = math.Sqrt(1.0 / size)
		}
		for x := range size {
			cos[u][x] = a * math.Cos(math.Pi*float64(2*x+1)*float64(u)/(2*size))
		}
	}
	var rows [size][low]float64 // rows[y][u]: 1-D DCT of each row
	for y := range size {
		for u := range low {
			s := 0.0
			for x := range size {
				s += g[y][x] * cos[u][x]
			}
			rows[y][u] = s
		}
	}
	var out [low][low]float64
	for v := range low {
		for u := range low {
			s := 0.0
			for y := range size {
				s += rows[y][u] * cos[v][y]
			}
			out[v][u] = s
		}
	}
	return out
}
