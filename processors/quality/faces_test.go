package quality

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"slices"
	"testing"

	"github.com/idstream/idstream/internal/face/facetest"
	"github.com/idstream/idstream/internal/imagequality"
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

// plain places img at (x, y) on a w×h background of one colour (a white or light wall).
func plain(img image.Image, w, h, x, y int, bg color.RGBA) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(out, out.Bounds(), &image.Uniform{bg}, image.Point{}, draw.Src)
	draw.Draw(out, img.Bounds().Add(image.Pt(x, y)), img, img.Bounds().Min, draw.Src)
	return out
}

// faceBoxA is where PortraitA's face lies in it (the detector's box on the full photo).
var faceBoxA = image.Rect(150, 179, 429, 458)

// litFace returns a copy of img with the light of a specular reflection added over its face
// (on the forehead, a bump of peak amp levels and σ sigma pixels with a wider sheen), or the
// face brightened by gain (an over-exposed face), or darkened.
func litFace(img *image.RGBA, face image.Rectangle, sigma, amp, gain float64) *image.RGBA {
	out := image.NewRGBA(img.Bounds())
	copy(out.Pix, img.Pix)
	cx, cy := float64(face.Min.X+face.Max.X)/2, float64(face.Min.Y)+0.3*float64(face.Dy())
	for y := face.Min.Y - face.Dy()/2; y < face.Max.Y+face.Dy()/2; y++ {
		for x := face.Min.X - face.Dx()/2; x < face.Max.X+face.Dx()/2; x++ {
			if !image.Pt(x, y).In(out.Bounds()) {
				continue
			}
			d2 := (float64(x)-cx)*(float64(x)-cx) + (float64(y)-cy)*(float64(y)-cy)
			add := 0.0
			if sigma > 0 {
				add = amp * (0.8*math.Exp(-d2/(2*sigma*sigma)) + 0.2*math.Exp(-d2/(18*sigma*sigma)))
			}
			i := out.PixOffset(x, y)
			for c := range 3 {
				v := float64(out.Pix[i+c])
				if image.Pt(x, y).In(face) {
					v *= gain
				}
				out.Pix[i+c] = uint8(max(0, min(255, v+add)))
			}
		}
	}
	return out
}

// TestSelfieFaces runs the selfie gate with the real face detector on real photos: one face
// wholly in the frame at a usable size passes wherever it sits and whatever is behind it
// (white and light walls too); none, two, a tiny one, a cut-off one, a turned-away one, a
// face under a specular highlight, washed out, out of focus or in the dark get their reasons.
func TestSelfieFaces(t *testing.T) {
	env := facetest.New(t)
	defer env.Close()
	f := newFixture(t, WithFaceDetector(env.Engine(t), DefaultSelfieFraming()))
	portrait := env.PortraitA(t) // 600×700, face box about (150,179)-(429,458)
	white, light := color.RGBA{255, 255, 255, 255}, color.RGBA{236, 238, 240, 255}
	// The portrait: the face a fifth of a 1080×1440 frame's width, in its upper third.
	fifth := resizeArea(portrait, 216.0/279)
	// A turned-away face: the woman at the left of sample2.jpg, seen nearly from the side.
	turned := facetest.Crop(env.Photo(t, "sample2.jpg"), image.Rect(150, 0, 760, 640))
	tests := []struct {
		name   string
		img    image.Image
		reason string // "" = passes
	}{
		{"one central face", canvas(portrait, 800, 900, 100, 100), ""},
		{"face a fifth of the width in the upper third", plain(fifth, 1080, 1440, 100, 0, light), ""},
		{"face near the right edge, wholly inside", canvas(portrait, 1400, 800, 780, 50), ""},
		{"face near the top, wholly inside", canvas(portrait, 900, 900, 150, -150), ""},
		{"white wall", plain(portrait, 900, 1000, 150, 150, white), ""},
		{"light wall, face in a corner", plain(portrait, 1600, 1200, 0, 500, light), ""},
		{"no face", sharpImage(), ReasonNoFace},
		{"two faces", canvas(env.PortraitB(t), 1300, 800, 0, 100), ReasonMultipleFaces},
		{"face too small", canvas(resizeArea(portrait, 50.0/279), 640, 480, 250, 150), ReasonFaceTooSmall},
		{"cut off at the left", canvas(portrait, 800, 800, -250, 50), ReasonNotFramed},
		{"cut off at the right", canvas(portrait, 800, 800, 400, 50), ReasonNotFramed},
		{"cut off at the top", canvas(portrait, 800, 800, 100, -300), ReasonNotFramed},
		{"cut off at the bottom", canvas(portrait, 800, 800, 100, 450), ReasonNotFramed},
		{"turned away", turned, ReasonNotFramed},
		{"specular highlight on the forehead", canvas(litFace(portrait, faceBoxA, 22, 420, 1), 800, 900, 100, 100), imagequality.ReasonGlare},
		{"washed-out face", canvas(litFace(portrait, faceBoxA, 0, 0, 1.9), 800, 900, 100, 100), imagequality.ReasonGlare},
		{"blurred face", canvas(boxBlurred(portrait, 2), 800, 900, 100, 100), imagequality.ReasonBlurry},
		{"face in the dark", canvas(litFace(portrait, faceBoxA, 0, 0, 0.25), 800, 900, 100, 100), imagequality.ReasonTooDark},
	}
	// "two faces": the second portrait beside the first.
	draw.Draw(tests[7].img.(*image.RGBA), portrait.Bounds().Add(image.Pt(650, 50)), portrait, image.Point{}, draw.Src)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := f.capture(t, fmt.Sprintf("cap_face_%02d", i), "selfie", encodeJPEG(t, tc.img))
			qa := f.assessed(t, rec)
			t.Logf("passed %v reasons %v glare %.4f brightness %.0f", qa.Passed, qa.Reasons, qa.Glare, qa.Brightness)
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

// boxBlurred returns img blurred by three passes of a box filter of radius r (close to a
// Gaussian of σ = sqrt(r(r+1))): a selfie out of focus or moved.
func boxBlurred(img *image.RGBA, r int) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(b)
	copy(out.Pix, img.Pix)
	w, h := b.Dx(), b.Dy()
	tmp := make([]uint8, len(out.Pix))
	for pass := 0; pass < 3; pass++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				for c := 0; c < 3; c++ {
					s, n := 0, 0
					for d := -r; d <= r; d++ {
						if xx := x + d; xx >= 0 && xx < w {
							s += int(out.Pix[y*out.Stride+4*xx+c])
							n++
						}
					}
					tmp[y*out.Stride+4*x+c] = uint8(s / n)
				}
				tmp[y*out.Stride+4*x+3] = 255
			}
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				for c := 0; c < 3; c++ {
					s, n := 0, 0
					for d := -r; d <= r; d++ {
						if yy := y + d; yy >= 0 && yy < h {
							s += int(tmp[yy*out.Stride+4*x+c])
							n++
						}
					}
					out.Pix[y*out.Stride+4*x+c] = uint8(s / n)
				}
			}
		}
	}
	return out
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
