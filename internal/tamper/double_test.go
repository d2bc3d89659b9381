package tamper

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRequantised: the binary-search histogram of double quantisation has the same counts in
// the same bins as quantising every coefficient twice, for coefficients spread wide, on the
// half-steps where rounding ties, and beyond the outer bins.
func TestRequantised(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var vs []float64
	for range 4000 {
		vs = append(vs, rng.NormFloat64()*60)
	}
	for k := -300; k <= 300; k++ {
		vs = append(vs, float64(k)+0.5, float64(k)*2.5, float64(k)*7.5) // ties for many steps
	}
	vs = append(vs, 5000, -5000, 0)
	sorted := slices.Clone(vs)
	slices.Sort(sorted)
	for _, q2 := range []float64{2, 7, 16, 40} {
		for q1 := 1.0; q1 <= 127; q1++ {
			want := histogram(len(vs), func(k int) float64 { return math.Round(math.Round(vs[k]/q1) * q1 / q2) })
			if got := requantised(sorted, q1, q2); !slices.Equal(got, want) {
				t.Fatalf("q1 %v q2 %v:\n got %v\nwant %v", q1, q2, got, want)
			}
		}
	}
}
