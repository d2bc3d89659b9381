package liveness

import (
	"bytes"
	"image"
	"image/jpeg"
	"os"
	"sync"
	"testing"

	"github.com/idstream/idstream/internal/face"
	"github.com/idstream/idstream/internal/face/facetest"
)

// The tests use the real models in models/ (make deps) and the photos that
// internal/face/testdata/fetch.sh places in models/testimages/, through facetest: missing
// files fail the tests with the command that fetches them, unless IDSTREAM_SKIP_FACE_TESTS=1.

var (
	envOnce sync.Once
	env     *facetest.Env
)

// faces is the package's one facetest environment (one engine for all tests).
func faces(t testing.TB) *facetest.Env {
	t.Helper()
	if os.Getenv("IDSTREAM_SKIP_FACE_TESTS") == "1" {
		t.Skip("IDSTREAM_SKIP_FACE_TESTS=1")
	}
	envOnce.Do(func() { env = facetest.New(t) })
	return env
}

func testEngine(t testing.TB) *face.Engine { return faces(t).Engine(t) }

func photo(t testing.TB, name string) image.Image { return faces(t).Photo(t, name) }

// portrait is one person's face and shoulders, cropped from a camera photo.
func portrait(t testing.TB) image.Image { return faces(t).PortraitA(t) }

func encodeJPEG(t testing.TB, img image.Image, q int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// screen, printed and texture are facetest's presentation attacks and face-free image.
func screen(img image.Image) image.Image  { return facetest.Screen(img) }
func printed(img image.Image) image.Image { return facetest.Printed(img) }
func texture() image.Image                { return facetest.Texture() }
