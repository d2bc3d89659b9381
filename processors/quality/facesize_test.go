package quality

import (
	"image"
	"image/color"
	"testing"

	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/face/facetest"
)

// resizeArea scales img by k (< 1) by area averaging: a camera farther away.
func resizeArea(img image.Image, k float64) *image.RGBA {
	b := img.Bounds()
	w, h := max(1, int(float64(b.Dx())*k)), max(1, int(float64(b.Dy())*k))
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		y0, y1 := b.Min.Y+int(float64(y)/k), b.Min.Y+max(int(float64(y)/k)+1, int(float64(y+1)/k))
		for x := range w {
			x0, x1 := b.Min.X+int(float64(x)/k), b.Min.X+max(int(float64(x)/k)+1, int(float64(x+1)/k))
			var s [3]uint32
			n := uint32(0)
			for yy := y0; yy < min(y1, b.Max.Y); yy++ {
				for xx := x0; xx < min(x1, b.Max.X); xx++ {
					r, g, bl, _ := img.At(xx, yy).RGBA()
					s[0], s[1], s[2] = s[0]+r>>8, s[1]+g>>8, s[2]+bl>>8
					n++
				}
			}
			n = max(n, 1)
			out.SetRGBA(x, y, color.RGBA{uint8(s[0] / n), uint8(s[1] / n), uint8(s[2] / n), 255})
		}
	}
	return out
}

// faceAtSide returns img scaled so its largest face's box is about side pixels, and that face.
func faceAtSide(t *testing.T, e *face.Engine, img image.Image, full face.Face, side int) (image.Image, face.Face, bool) {
	t.Helper()
	small := resizeArea(img, float64(side)/float64(full.Box.Dy()))
	faces, err := e.Detect(small)
	if err != nil {
		t.Fatal(err)
	}
	if len(faces) == 0 {
		return small, face.Face{}, false
	}
	return small, faces[0], true
}

// TestMinimumFaceSize measures what the face models lose as a selfie's face gets smaller:
// the cosine between the embedding of each real portrait at full size (face box about 280 px)
// and of the same picture scaled down until the face box is side pixels. It is the figure
// DefaultSelfieFraming's MinFacePixels was chosen from, and it asserts that a face at that size
// still embeds as itself with a wide margin over the match threshold.
func TestMinimumFaceSize(t *testing.T) {
	env := facetest.New(t)
	defer env.Close()
	e := env.Engine(t)
	minSide := DefaultSelfieFraming().MinFacePixels
	for _, p := range []struct {
		name string
		img  image.Image
	}{{"A", env.PortraitA(t)}, {"B", env.PortraitB(t)}} {
		faces, err := e.Detect(p.img)
		if err != nil || len(faces) != 1 {
			t.Fatalf("portrait %s: %d faces, %v", p.name, len(faces), err)
		}
		ref, err := e.Embed(p.img, faces[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, side := range []int{32, 48, 64, 80, 96, 112, 128, 160} {
			small, f, ok := faceAtSide(t, e, p.img, faces[0], side)
			if !ok {
				t.Logf("portrait %s face %3d px: not detected", p.name, side)
				if side >= minSide {
					t.Errorf("portrait %s: face of %d px (≥ MinFacePixels %d) not detected", p.name, side, minSide)
				}
				continue
			}
			emb, err := e.Embed(small, f)
			if err != nil {
				t.Fatal(err)
			}
			live, err := e.Liveness(small, f)
			if err != nil {
				t.Fatal(err)
			}
			cos := face.Cosine(ref, emb)
			t.Logf("portrait %s face %3d px (box %d): cosine to full size %.3f, P(live) %.2f", p.name, side, f.Box.Dy(), cos, live.Score)
			if side >= minSide && cos < 0.8 {
				t.Errorf("portrait %s: face of %d px (≥ MinFacePixels %d) embeds at cosine %.3f to itself, want ≥ 0.8", p.name, side, minSide, cos)
			}
		}
	}
}
