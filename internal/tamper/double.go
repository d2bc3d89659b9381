package tamper

import (
	"math"
	"slices"
	"sort"
)

// DoubleCompression is the result of the double-JPEG-compression analysis.
//
// Method (after Fridrich, Lukáš: "Estimation of primary quantization matrix in double
// compressed JPEG images", 2003). For each of the lowest AC frequencies, the histogram of the
// image's quantised DCT coefficients (blocks on the JPEG grid, divided by the file's table:
// what the last encoder wrote) is compared with simulations: the coefficients of blocks
// shifted 4 pixels off the grid (where the compression traces are mostly gone: an estimate of
// the uncompressed image) quantised once with the file's step q2, or first with a candidate
// primary step q1 and then with q2. Double quantisation leaves periodic empty or doubled bins
// that only the right q1 reproduces. A frequency votes "double" when the best q1 ≠ q2 fits
// at least DoubleFitRatio times better than q2 alone.
//
// Measured (tamper_test.go, TestDoubleCompressionRates, camera-like card renders): see
// DoubleVoteThreshold.
type DoubleCompression struct {
	Applicable  bool       // a JPEG whose luminance table and blocks could be analysed
	Frequencies int        // frequencies analysed (file step 2–40)
	Votes       int        // frequencies whose best primary step differs from the file's
	Score       float64    // Votes / Frequencies (0 when not applicable)
	Primary     [64]uint16 // estimated primary steps per natural index (0: not analysed)
	Table       [64]uint16 // the file's luminance table (natural order)
	Detected    bool       // Score ≥ DoubleVoteThreshold
}

// Parameters of the analysis.
const (
	// MaxDCTBlocks bounds the blocks transformed per grid (aligned and shifted).
	MaxDCTBlocks = 20000
	// doubleFreqs is how many zigzag positions after DC are considered.
	doubleFreqs = 15
	// histHalf bounds the histogram to bins -histHalf..histHalf.
	histHalf = 20
	// DoubleFitRatio: a primary step must explain the histogram this much better (squared
	// error) than single compression to vote.
	DoubleFitRatio = 0.5
	// DoubleVoteThreshold is the fraction of voting frequencies that reports double
	// compression.
	DoubleVoteThreshold = 0.4
	// minFreqs is the fewest analysable frequencies for a verdict.
	minFreqs = 4
)

// AnalyzeDoubleCompression runs the analysis on the luminance y of a JPEG whose luminance
// table is q (natural order). Images under 64×64 pixels are not applicable.
func AnalyzeDoubleCompression(y *Plane, q [64]uint16) DoubleCompression {
	res := DoubleCompression{Table: q}
	if y.W < 64 || y.H < 64 {
		return res
	}
	var freqs []int
	for _, f := range zigzag[1 : 1+doubleFreqs] {
		if q[f] >= 2 && q[f] <= 40 {
			freqs = append(freqs, f)
		}
	}
	if len(freqs) < minFreqs {
		return res
	}
	aligned := coefficients(y, 0, freqs)
	shifted := coefficients(y, 4, freqs)
	if len(aligned[0]) < 64 || len(shifted[0]) < 64 {
		return res
	}
	res.Applicable = true
	for i, f := range freqs {
		q2 := float64(q[f])
		obs := histogram(len(aligned[i]), func(k int) float64 { return math.Round(aligned[i][k] / q2) })
		sorted := slices.Clone(shifted[i])
		slices.Sort(sorted)
		simulate := func(q1 float64) []float64 { return requantised(sorted, q1, q2) }
		single := sqErr(obs, simulate(q2))
		best, bestQ := math.Inf(1), 0
		for q1 := 1; q1 <= 3*int(q2)+8 && q1 <= 127; q1++ {
			if q1 == int(q2) {
				continue
			}
			if e := sqErr(obs, simulate(float64(q1))); e < best {
				best, bestQ = e, q1
			}
		}
		res.Frequencies++
		res.Primary[f] = q[f]
		if best < DoubleFitRatio*single {
			res.Votes++
			res.Primary[f] = uint16(bestQ)
		}
	}
	res.Score = float64(res.Votes) / float64(res.Frequencies)
	res.Detected = res.Score >= DoubleVoteThreshold
	return res
}

// coefficients returns, per frequency of freqs, the DCT coefficients of the 8×8 blocks of y
// whose corners lie at offset+8k in both directions, at most MaxDCTBlocks of them (an even
// sample of the grid's rows and columns).
func coefficients(y *Plane, offset int, freqs []int) [][]float64 {
	bw, bh := (y.W-offset)/8, (y.H-offset)/8
	step := 1
	for (bw/step)*(bh/step) > MaxDCTBlocks {
		step++
	}
	out := make([][]float64, len(freqs))
	var c [64]float64
	for by := 0; by < bh; by += step {
		for bx := 0; bx < bw; bx += step {
			dct8(y, offset+8*bx, offset+8*by, &c)
			for i, f := range freqs {
				out[i] = append(out[i], c[f])
			}
		}
	}
	return out
}

// histogram returns the normalised histogram of n values over bins -histHalf..histHalf
// (values beyond fall into the outer bins).
func histogram(n int, value func(k int) float64) []float64 {
	h := make([]float64, 2*histHalf+1)
	for k := range n {
		v := int(value(k))
		v = max(-histHalf, min(histHalf, v))
		h[v+histHalf]++
	}
	for i := range h {
		h[i] /= float64(n)
	}
	return h
}

// requantised is histogram(len(sorted), k → round(round(sorted[k]/q1)·q1/q2)), the
// coefficients quantised with q1 then with q2, computed from the sorted coefficients without
// touching each for each q1: those whose first quantisation is j are a run of sorted, whose
// ends a binary search with the same rounding finds; the runs whose second quantisation falls
// beyond the outer bins are counted at once. Same bins, same counts (TestRequantised), in
// O(q2/q1 · log n) instead of O(n) per candidate q1.
func requantised(sorted []float64, q1, q2 float64) []float64 {
	h := make([]float64, 2*histHalf+1)
	n := len(sorted)
	if n == 0 {
		return h
	}
	// from is the first index whose first quantisation is at least j.
	from := func(j float64) int {
		return sort.Search(n, func(i int) bool { return math.Round(sorted[i]/q1) >= j })
	}
	bin := func(j float64) int {
		return max(-histHalf, min(histHalf, int(math.Round(j*q1/q2)))) + histHalf
	}
	// Every j below lo lands in the first bin, every j above hi in the last.
	lo := math.Floor(-(histHalf + 1) * q2 / q1)
	hi := math.Ceil((histHalf + 1) * q2 / q1)
	start := from(lo)
	h[0] += float64(start)
	for j := lo; j <= hi; j++ {
		end := from(j + 1)
		h[bin(j)] += float64(end - start)
		start = end
	}
	h[2*histHalf] += float64(n - start)
	for i := range h {
		h[i] /= float64(n)
	}
	return h
}

// sqErr is the squared error between two histograms, bin 0 left out: its mass depends
// mostly on how flat the picture is, which the shifted-grid estimate gets least right.
func sqErr(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		if i == histHalf {
			continue
		}
		d := a[i] - b[i]
		s += d * d
	}
	return s
}
