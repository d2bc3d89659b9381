package facematch

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/imagecheck"
)

// The tests use the real models in models/ (make deps) and the photos that
// internal/face/testdata/fetch.sh places in models/testimages/. Missing files fail the tests
// with the command that fetches them, unless IDSTREAM_SKIP_FACE_TESTS=1.

const (
	modelsDir = "../../models"
	imagesDir = "../../models/testimages"
	fetchCmd  = "internal/face/testdata/fetch.sh"
)

// Crops of the group photos around one person each (as in internal/face): two different
// people.
var (
	portraitRectA = image.Rect(400, 150, 1000, 850) // sample3.jpg, the woman on the left
	portraitRectB = image.Rect(300, 250, 720, 750)  // sample1.jpg, the woman on the left
)

var (
	engineOnce sync.Once
	engine     *face.Engine
	engineErr  error
)

func skipIfAsked(t testing.TB) {
	t.Helper()
	if os.Getenv("IDSTREAM_SKIP_FACE_TESTS") == "1" {
		t.Skip("IDSTREAM_SKIP_FACE_TESTS=1")
	}
}

// testEngine loads the engine from models/ once for the whole package.
func testEngine(t testing.TB) *face.Engine {
	t.Helper()
	skipIfAsked(t)
	engineOnce.Do(func() { engine, engineErr = face.Load(face.DefaultModels(modelsDir)) })
	if engineErr != nil {
		t.Fatalf("load models from %s: %v (fetch them with: make deps)", modelsDir, engineErr)
	}
	return engine
}

// photo decodes models/testimages/name through imagecheck.
func photo(t testing.TB, name string) image.Image {
	t.Helper()
	skipIfAsked(t)
	path := filepath.Join(imagesDir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("face test image %s missing (%v): run %s (needs npm), or set IDSTREAM_SKIP_FACE_TESTS=1", path, err, fetchCmd)
	}
	img, _, err := imagecheck.Decode(data, imagecheck.Limits{})
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// crop returns a copy of r of img with origin (0, 0).
func crop(img image.Image, r image.Rectangle) image.Image {
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Bounds(), img, r.Min, draw.Src)
	return out
}

// personA and personB are two different people, photographed by a camera.
func personA(t testing.TB) image.Image { return crop(photo(t, "sample3.jpg"), portraitRectA) }
func personB(t testing.TB) image.Image { return crop(photo(t, "sample1.jpg"), portraitRectB) }

// transformed returns img mirrored, scaled by s and rotated by deg degrees about its centre
// (as internal/face's tests do): the same person in another capture. Encode it to re-encode.
func transformed(img image.Image, s, deg float64) image.Image {
	b := img.Bounds()
	w, h := int(float64(b.Dx())*s), int(float64(b.Dy())*s)
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	sin, cos := math.Sincos(deg * math.Pi / 180)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := float64(x)-float64(w)/2, float64(y)-float64(h)/2
			sx := (cos*dx + sin*dy) / s
			sy := (-sin*dx + cos*dy) / s
			px := b.Max.X - 1 - int(sx+float64(b.Dx())/2) // mirrored
			py := b.Min.Y + int(sy+float64(b.Dy())/2)
			if image.Pt(px, py).In(b) {
				out.Set(x, y, img.At(px, py))
			}
		}
	}
	return out
}

func encodeJPEG(t testing.TB, img image.Image, q int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func clamp8(v float64) uint8 { return uint8(math.Max(0, math.Min(255, math.Round(v)))) }

// texture is a 640×480 colourful pattern with no face in it.
func texture() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	r := rand.New(rand.NewPCG(3, 4))
	for y := 0; y < 480; y++ {
		for x := 0; x < 640; x++ {
			v := 128 + 60*math.Sin(float64(x)/7)*math.Cos(float64(y)/11) + float64(r.IntN(40))
			img.SetRGBA(x, y, color.RGBA{clamp8(v), clamp8(v * 0.8), clamp8(255 - v), 255})
		}
	}
	return img
}
