package face

import (
	"bytes"
	"image"
	"image/draw"
	"image/jpeg"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/idstream/idstream/internal/imagecheck"
)

// The tests use the real models in models/ (make deps) and the photos that
// testdata/fetch.sh places in models/testimages/. Missing files fail the tests with the
// command that fetches them, unless IDSTREAM_SKIP_FACE_TESTS=1.

const (
	modelsDir = "../../models"
	imagesDir = "../../models/testimages"
	fetchCmd  = "internal/face/testdata/fetch.sh"
)

var (
	engineOnce sync.Once
	engine     *Engine
	engineErr  error
	fetchOnce  sync.Once
)

func skipIfAsked(t testing.TB) {
	t.Helper()
	if os.Getenv("IDSTREAM_SKIP_FACE_TESTS") == "1" {
		t.Skip("IDSTREAM_SKIP_FACE_TESTS=1")
	}
}

// testEngine loads the engine from models/ once for the whole package.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	skipIfAsked(t)
	engineOnce.Do(func() { engine, engineErr = Load(DefaultModels(modelsDir)) })
	if engineErr != nil {
		t.Fatalf("load models from %s: %v (fetch them with: make deps)", modelsDir, engineErr)
	}
	return engine
}

// photo decodes models/testimages/name through imagecheck, as the service does. When the
// file is missing it runs the fetch script once; if that fails the test fails naming it.
func photo(t testing.TB, name string) image.Image {
	t.Helper()
	skipIfAsked(t)
	path := filepath.Join(imagesDir, name)
	if _, err := os.Stat(path); err != nil {
		fetchOnce.Do(func() {
			// testdata/fetch.sh is idempotent and checks SHA-256 digests.
			out, err := runFetch()
			t.Logf("%s: %s %v", fetchCmd, out, err)
		})
	}
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

// crop returns a copy of r of img as an RGBA image with origin (0, 0).
func crop(img image.Image, r image.Rectangle) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Bounds(), img, r.Min, draw.Src)
	return out
}

// reencode passes img through JPEG at quality q and imagecheck.
func reencode(t testing.TB, img image.Image, q int) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	out, _, err := imagecheck.Decode(buf.Bytes(), imagecheck.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
