package facematch

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

// photos is the package's one facetest environment (one engine for all tests).
func photos(t testing.TB) *facetest.Env {
	t.Helper()
	if os.Getenv("IDSTREAM_SKIP_FACE_TESTS") == "1" {
		t.Skip("IDSTREAM_SKIP_FACE_TESTS=1")
	}
	envOnce.Do(func() { env = facetest.New(t) })
	return env
}

func testEngine(t testing.TB) *face.Engine { return photos(t).Engine(t) }

// personA and personB are two different people, photographed by a camera.
func personA(t testing.TB) image.Image { return photos(t).PortraitA(t) }
func personB(t testing.TB) image.Image { return photos(t).PortraitB(t) }

// transformed is facetest.Transformed: the same person in another capture.
func transformed(img image.Image, s, deg float64) image.Image {
	return facetest.Transformed(img, s, deg)
}

// texture is facetest's face-free image.
func texture() image.Image { return facetest.Texture() }

func encodeJPEG(t testing.TB, img image.Image, q int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
