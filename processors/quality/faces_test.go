package quality

import (
	"image"
	"image/color"
	"image/draw"
	"slices"
	"testing"

	"github.com/idstream/idstream/internal/face/facetest"
)

// canvas places img at (x, y) on a w×h mid-grey, lightly textured background.
func canvas(img image.Image, w, h, x, y int) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for py := range h {
		for px := range w {
			v := uint8(120 + (px*7+py*13)%40)
			out.SetRGBA(px, py, color.RGBA{v, v, v, 255})
		}
	}
	draw.Draw(out, img.Bounds().Add(image.Pt(x, y)), img, img.Bounds().Min, draw.Src)
	return out
}

// TestSelfieFaces runs the selfie gate with the real face detector on real photos: one
// central face passes; none, two, a small one and an off-centre one get their reasons.
func TestSelfieFaces(t *testing.T) {
	env := facetest.New(t)
	defer env.Close()
	f := newFixture(t, WithFaceDetector(env.Engine(t), DefaultSelfieFraming()))
	portrait := env.PortraitA(t) // 600×700
	tests := []struct {
		name   string
		img    image.Image
		reason string // "" = passes
	}{
		{"one central face", canvas(portrait, 800, 900, 100, 100), ""},
		{"no face", sharpImage(), ReasonNoFace},
		{"two faces", canvas(env.PortraitB(t), 1300, 800, 0, 100), ReasonMultipleFaces},
		{"face too small", canvas(downscale(portrait, 2), 1400, 1050, 550, 350), ReasonFaceTooSmall},
		{"face off-centre", canvas(portrait, 2000, 900, 0, 100), ReasonNotFramed},
	}
	// "two faces": the second portrait beside the first.
	draw.Draw(tests[2].img.(*image.RGBA), portrait.Bounds().Add(image.Pt(650, 50)), portrait, image.Point{}, draw.Src)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := f.capture(t, "cap_face_"+string(rune('a'+i)), "selfie", encodeJPEG(t, tc.img))
			qa := f.assessed(t, rec)
			if tc.reason == "" {
				if !qa.Passed || len(qa.Reasons) != 0 {
					t.Fatalf("passed=%v reasons=%v, want a pass", qa.Passed, qa.Reasons)
				}
				return
			}
			if qa.Passed || !slices.Contains(qa.Reasons, tc.reason) {
				t.Fatalf("passed=%v reasons=%v, want %s", qa.Passed, qa.Reasons, tc.reason)
			}
		})
	}
}

// downscale shrinks img by an integer factor (nearest neighbour is enough for a small face).
func downscale(img *image.RGBA, factor int) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx()/factor, b.Dy()/factor))
	for y := range out.Bounds().Dy() {
		for x := range out.Bounds().Dx() {
			out.Set(x, y, img.At(b.Min.X+x*factor, b.Min.Y+y*factor))
		}
	}
	return out
}
