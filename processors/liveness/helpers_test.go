package liveness

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

// portraitRect is the crop of sample3.jpg around the woman on the left (as in internal/face).
var portraitRect = image.Rect(400, 150, 1000, 850)

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

// portrait is one person's face and shoulders, cropped from a camera photo.
func portrait(t testing.TB) image.Image {
	t.Helper()
	img := photo(t, "sample3.jpg")
	out := image.NewRGBA(image.Rect(0, 0, portraitRect.Dx(), portraitRect.Dy()))
	draw.Draw(out, out.Bounds(), img, portraitRect.Min, draw.Src)
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

// screen re-renders img as if photographed off a display (as internal/face's tests do): an
// RGB sub-pixel stripe grid with dark row gaps every 3 pixels and a faint moiré beat.
func screen(img image.Image) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			c := [3]float64{float64(r >> 8), float64(g >> 8), float64(bl >> 8)}
			moire := 10 * math.Sin(2*math.Pi*(0.29*float64(x)+0.05*float64(y)))
			for i := range c {
				k := 0.6
				if x%3 == i {
					k = 1.1
				}
				if y%3 == 2 {
					k *= 0.7
				}
				c[i] = c[i]*k + moire
			}
			out.SetRGBA(x, y, color.RGBA{clamp8(c[0]), clamp8(c[1]), clamp8(c[2]), 255})
		}
	}
	return out
}

// printed re-renders img as a print photographed on paper (as internal/face's tests do):
// colours washed out, a 7×7 blur, luminance compressed towards paper white, faint grain.
func printed(img image.Image) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	src := make([][3]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			c := [3]float64{float64(r >> 8), float64(g >> 8), float64(bl >> 8)}
			l := 0.299*c[0] + 0.587*c[1] + 0.114*c[2]
			for i := range c {
				c[i] = 90 + 0.45*(l+0.15*(c[i]-l))
			}
			src[y*w+x] = c
		}
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	rnd := rand.New(rand.NewPCG(5, 6))
	const rad = 3
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var s [3]float64
			n := 0.0
			for dy := -rad; dy <= rad; dy++ {
				for dx := -rad; dx <= rad; dx++ {
					xx, yy := min(max(x+dx, 0), w-1), min(max(y+dy, 0), h-1)
					for i := range s {
						s[i] += src[yy*w+xx][i]
					}
					n++
				}
			}
			grain := rnd.Float64()*2 - 1
			out.SetRGBA(x, y, color.RGBA{clamp8(s[0]/n + grain), clamp8(s[1]/n + grain), clamp8(s[2]/n + grain), 255})
		}
	}
	return out
}

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
