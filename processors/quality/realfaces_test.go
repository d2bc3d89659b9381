package quality

import (
	"fmt"
	"image"
	"math"
	"testing"

	"github.com/idstream/idstream/internal/face/facetest"
	qualitygate "github.com/idstream/idstream/internal/quality"
)

// TestRealFaces measures the face checks on the 22 faces of the real group photos
// (models/testimages): the figures DefaultSelfieFraming's MaxYaw and MinEyeSpan and the
// gate's face exposure limits were chosen from. Every face, looking roughly towards the
// camera in ordinary light, must pass the turned-away and exposure checks, except the one
// seen nearly from the side (the woman at the left of sample2.jpg), which must not.
func TestRealFaces(t *testing.T) {
	env := facetest.New(t)
	defer env.Close()
	e := env.Engine(t)
	g := qualitygate.NewGate(qualitygate.DefaultThresholds())
	fr := DefaultSelfieFraming()
	profile := image.Pt(450, 270) // inside the side-on face's box in sample2.jpg
	n := 0
	for i := 1; i <= 6; i++ {
		name := fmt.Sprintf("sample%d.jpg", i)
		img := env.Photo(t, name)
		faces, err := e.Detect(img)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range faces {
			n++
			l, r, nose := f.Points[0], f.Points[1], f.Points[2]
			ex, ey := r.X-l.X, r.Y-l.Y
			iod := math.Hypot(ex, ey)
			yaw := ((nose.X-(l.X+r.X)/2)*ex + (nose.Y-(l.Y+r.Y)/2)*ey) / (iod * iod)
			fx := g.AssessFace(img, f.Box, skinRect(f))
			t.Logf("%s face %v: yaw %+.2f, eye span %.2f, skin luma %.0f, glare %.4f, clipped %.4f %v",
				name, f.Box, yaw, iod/float64(f.Box.Dx()), fx.Brightness, fx.Glare, fx.Saturated, fx.Reasons)
			side := i == 2 && profile.In(f.Box)
			if got := turnedAway(f, fr); got != side {
				t.Errorf("%s face %v: turned away %v, want %v", name, f.Box, got, side)
			}
			if len(fx.Reasons) != 0 {
				t.Errorf("%s face %v: exposure reasons %v, want none", name, f.Box, fx.Reasons)
			}
		}
	}
	if n != 22 {
		t.Errorf("%d faces in the test photos, want 22", n)
	}
}
