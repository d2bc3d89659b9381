package quality

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"testing"

	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/imagequality"
)

// samplePhoto is one of the real group photos of models/testimages with the faces the
// engine finds in it.
type samplePhoto struct {
	n     int // sample<n>.jpg
	name  string
	img   image.Image
	faces []face.Face
}

// samplePhotos returns the real group photos sample1.jpg … sample6.jpg with their faces.
func samplePhotos(t *testing.T, env *facetest.Env, e *face.Engine) []samplePhoto {
	t.Helper()
	var out []samplePhoto
	for i := 1; i <= 6; i++ {
		name := fmt.Sprintf("sample%d.jpg", i)
		img := env.Photo(t, name)
		faces, err := e.Detect(img)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, samplePhoto{n: i, name: name, img: img, faces: faces})
	}
	return out
}

// TestRealFaces measures the face checks on the 22 faces of the real group photos
// (models/testimages): the figures DefaultSelfieFraming's MaxYaw and MinEyeSpan and the
// gate's face exposure limits were chosen from. Every face, looking roughly towards the
// camera in ordinary light, must pass the turned-away and exposure checks, except the one
// seen nearly from the side (the woman at the left of sample2.jpg), which must not.
func TestRealFaces(t *testing.T) {
	env := facetest.New(t)
	defer env.Close()
	e := env.Engine(t)
	g := imagequality.NewGate(imagequality.DefaultThresholds())
	fr := DefaultSelfieFraming()
	profile := image.Pt(450, 270) // inside the side-on face's box in sample2.jpg
	n := 0
	for _, ph := range samplePhotos(t, env, e) {
		i, name, img := ph.n, ph.name, ph.img
		for _, f := range ph.faces {
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

// TestRealFaceSelfies runs every face of the real group photos through the selfie gate as a
// selfie: the photo cropped around the face (the face box grown by 60 % of its side on each
// side, clipped to the photo), then the same crop with a white wall around it (the crop
// pasted on a white frame twice its size) and 8 % dimmer. The faces look roughly at the
// camera in ordinary light: each must pass, except the one seen nearly from the side, which
// must be sent back as not_framed; crops that hold a large part of a neighbour's face are
// judged multiple_faces and skipped from the count (they are group photos, not selfies).
func TestRealFaceSelfies(t *testing.T) {
	env := facetest.New(t)
	defer env.Close()
	e := env.Engine(t)
	f := newFixture(t, WithFaceDetector(e, DefaultSelfieFraming()))
	profile := image.Pt(450, 270)
	var n, passed, neighbours int
	for _, ph := range samplePhotos(t, env, e) {
		i, name, img := ph.n, ph.name, ph.img
		for k, fc := range ph.faces {
			m := fc.Box.Dx() * 6 / 10
			crop := facetest.Crop(img, fc.Box.Inset(-m).Intersect(img.Bounds()))
			b := crop.Bounds()
			wall := plain(crop, 2*b.Dx(), 2*b.Dy(), b.Dx()/2, b.Dy()/4, color.RGBA{255, 255, 255, 255})
			dim := litFace(crop, crop.Bounds(), 0, 0, 0.92)
			side := i == 2 && profile.In(fc.Box)
			for j, sel := range []image.Image{crop, wall, dim} {
				rec, _ := f.capture(t, fmt.Sprintf("cap_real_%d_%d_%d", i, k, j), "selfie", encodeJPEG(t, sel))
				qa := f.assessed(t, rec)
				switch {
				case slices.Contains(qa.Reasons, ReasonMultipleFaces):
					neighbours++
					t.Logf("%s face %v variant %d: %v (a neighbour in the crop)", name, fc.Box, j, qa.Reasons)
					continue
				case side:
					if qa.Passed || !slices.Contains(qa.Reasons, ReasonNotFramed) {
						t.Errorf("%s face %v variant %d (side-on): passed %v reasons %v, want not_framed", name, fc.Box, j, qa.Passed, qa.Reasons)
					}
					continue
				}
				n++
				if qa.Passed {
					passed++
				} else {
					t.Errorf("%s face %v variant %d: sent back for %v (glare %.4f)", name, fc.Box, j, qa.Reasons, qa.Glare)
				}
			}
		}
	}
	t.Logf("real faces as selfies: %d/%d passed (%d crops with a neighbour's face skipped)", passed, n, neighbours)
	if n < 40 {
		t.Errorf("only %d selfies judged, want at least 40", n)
	}
}
