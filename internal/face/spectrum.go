package face

import (
	"math"
	"math/cmplx"
	"sort"
)

// fft2 returns the magnitude spectrum of the n×n real plane (n a power of two), after removing
// its mean and applying a Hann window; mag[v*n+u] with u, v in 0..n-1 (unshifted: index k and
// n-k are the same frequency magnitude).
func fft2(plane []float32, n int) []float64 {
	var mean float64
	for _, v := range plane {
		mean += float64(v)
	}
	mean /= float64(len(plane))
	win := make([]float64, n)
	for i := range win {
		win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n-1))
	}
	data := make([]complex128, n*n)
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			data[y*n+x] = complex((float64(plane[y*n+x])-mean)*win[x]*win[y], 0)
		}
	}
	row := make([]complex128, n)
	for y := 0; y < n; y++ {
		fft1(data[y*n : y*n+n])
	}
	for x := 0; x < n; x++ {
		for y := 0; y < n; y++ {
			row[y] = data[y*n+x]
		}
		fft1(row)
		for y := 0; y < n; y++ {
			data[y*n+x] = row[y]
		}
	}
	mag := make([]float64, n*n)
	for i, c := range data {
		mag[i] = cmplx.Abs(c)
	}
	return mag
}

// fft1 is an in-place iterative radix-2 FFT; len(a) must be a power of two.
func fft1(a []complex128) {
	n := len(a)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			a[i], a[j] = a[j], a[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		w := cmplx.Exp(complex(0, -2*math.Pi/float64(size)))
		for start := 0; start < n; start += size {
			wk := complex(1, 0)
			for k := 0; k < size/2; k++ {
				u, v := a[start+k], a[start+k+size/2]*wk
				a[start+k], a[start+k+size/2] = u+v, u-v
				wk *= w
			}
		}
	}
}

// spectrumStats summarises a magnitude spectrum for the replay and print signals.
type spectrumStats struct {
	// peak is the strongest isolated peak in the band 0.12..0.5 cycles/pixel, as the log10
	// ratio of a bin's magnitude to the median magnitude of its ring (same radius): a natural
	// image's spectrum falls smoothly with radius (ratio ~0.6–0.9), a screen's pixel grid or a
	// moiré pattern puts sharp peaks at a few frequencies (ratio > 1.3).
	peak float64
	// high is the fraction of spectral energy above 0.25 cycles/pixel: fine texture and
	// sensor noise. Blurred prints and re-photographed paper lose it.
	high float64
}

// analyseSpectrum computes spectrumStats for an n×n magnitude spectrum. Bins on the 8-pixel
// lattice (k·n/8 on both axes, where JPEG block edges put their peaks) are ignored, so an
// ordinary JPEG does not read as a screen.
func analyseSpectrum(mag []float64, n int) spectrumStats {
	freq := func(k int) int { // signed frequency index
		if k > n/2 {
			return k - n
		}
		return k
	}
	rings := make([][]float64, n/2+1)
	ringOf := make([]int, n*n)
	var total, high float64
	onLattice := func(k int) bool {
		step := n / 8
		if step < 2 {
			return false
		}
		m := ((k % step) + step) % step
		return m <= 1 || m >= step-1
	}
	for v := 0; v < n; v++ {
		for u := 0; u < n; u++ {
			fu, fv := freq(u), freq(v)
			r := int(math.Round(math.Hypot(float64(fu), float64(fv))))
			i := v*n + u
			ringOf[i] = -1
			if r == 0 || r > n/2 {
				continue
			}
			e := mag[i] * mag[i]
			total += e
			if float64(r) > 0.25*float64(n) {
				high += e
			}
			if onLattice(fu) && onLattice(fv) {
				continue
			}
			ringOf[i] = r
			rings[r] = append(rings[r], mag[i])
		}
	}
	medians := make([]float64, len(rings))
	for r, ring := range rings {
		if len(ring) == 0 {
			continue
		}
		sort.Float64s(ring)
		medians[r] = ring[len(ring)/2]
	}
	var st spectrumStats
	lo := int(math.Ceil(0.12 * float64(n)))
	for i, r := range ringOf {
		if r < lo || medians[r] <= 0 {
			continue
		}
		if p := math.Log10(mag[i] / medians[r]); p > st.peak {
			st.peak = p
		}
	}
	if total > 0 {
		st.high = high / total
	}
	return st
}
