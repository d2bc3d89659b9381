package face

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/draw"
	"image/png"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/imagecheck"
)

// TestFoundSharesAnswersOfTheSameImage: two Engines of the same models sharing a Found
// answer the second look at a capture from the first one's work, with the same faces and
// embedding as computed; another capture (one pixel changed), an Engine of other thresholds
// and an image the process did not decode from a capture are computed; a caller changing
// what it was given changes nothing for the next.
func TestFoundSharesAnswersOfTheSameImage(t *testing.T) {
	skipIfAsked(t)
	decoded := imagecheck.NewDecoded(64 << 20)
	capture := func(img image.Image) image.Image {
		t.Helper()
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		out, _, err := decoded.Decode(sha256.Sum256(buf.Bytes()), buf.Bytes(), imagecheck.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	found := NewFound(decoded.Sum, 8, time.Minute)
	load := func(cfg Models) *Engine {
		t.Helper()
		e, err := Load(cfg, WithFound(found))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	a, b := load(DefaultModels(modelsDir)), load(DefaultModels(modelsDir))
	pixels := toRGBA(portrait(t))
	img := capture(pixels)
	want, err := testEngine(t).Detect(img) // no Found: the answer computed
	if err != nil || len(want) == 0 {
		t.Fatalf("faces %d, err %v", len(want), err)
	}
	wantVec, err := testEngine(t).Embed(img, want[0])
	if err != nil {
		t.Fatal(err)
	}

	first, err := a.Detect(img)
	if err != nil {
		t.Fatal(err)
	}
	first[0].Landmarks[0] = Point{-1, -1} // the caller's copy
	second, err := b.Detect(img)
	if err != nil {
		t.Fatal(err)
	}
	if s := found.Stats(); s.Hits != 1 || s.Misses != 1 {
		t.Errorf("after two looks at one capture: %+v, want 1 hit, 1 miss", s)
	}
	if !sameFaces(second, want) {
		t.Errorf("the shared answer differs from the computed one:\n%v\n%v", second, want)
	}
	v1, err := a.Embed(img, second[0])
	if err != nil {
		t.Fatal(err)
	}
	v2, err := b.Embed(img, second[0])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v1, wantVec) || !slices.Equal(v2, wantVec) {
		t.Error("a shared embedding differs from the computed one")
	}
	// What a caller was given from the Found is its own: changing it changes no later answer.
	second[0].Landmarks[1] = Point{-1, -1}
	v2[0] = 42
	third, err := a.Detect(img)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := a.Embed(img, want[0])
	if err != nil {
		t.Fatal(err)
	}
	if !sameFaces(third, want) || !slices.Equal(v3, wantVec) {
		t.Error("a caller's change to what the Found gave it reached the next caller")
	}
	if s := found.Stats(); s.Hits != 4 || s.Misses != 2 {
		t.Errorf("after three looks and three embeddings: %+v, want 4 hits, 2 misses", s)
	}

	pixels.Pix[0] ^= 1
	if _, err := b.Detect(capture(pixels)); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultModels(modelsDir)
	cfg.DetectThreshold = 0.9
	if _, err := load(cfg).Detect(img); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := a.Detect(pixels); err != nil { // not decoded from a capture
			t.Fatal(err)
		}
	}
	if s := found.Stats(); s.Hits != 4 {
		t.Errorf("another capture, other thresholds, an image not decoded from one: %d hits, want none more than 4", s.Hits)
	}
}

// TestFoundKeepsItsBound: a Found keeps no more images than its bound, the oldest going
// first, none of more than foundMostFaces faces, and none older than its age.
func TestFoundKeepsItsBound(t *testing.T) {
	sums := make(map[image.Image][sha256.Size]byte)
	know := func(img image.Image) ([sha256.Size]byte, bool) { s, ok := sums[img]; return s, ok }
	found := NewFound(know, 2, time.Hour)
	keys := make([]foundKey, 3)
	for i := range keys {
		img := image.NewGray(image.Rect(0, 0, 4, 4))
		sums[img] = sha256.Sum256([]byte{byte(i)})
		k, ok := found.key("e", img)
		if !ok {
			t.Fatal("an image known by its digest has no key")
		}
		keys[i] = k
		found.putFaces(k, []Face{{Score: float64(i)}})
	}
	if _, ok := found.faces(keys[0]); ok {
		t.Error("the oldest of three images is still kept with a bound of two")
	}
	for _, k := range keys[1:] {
		if _, ok := found.faces(k); !ok {
			t.Error("one of the two newest images is not kept")
		}
	}
	crowd := NewFound(know, 2, time.Hour)
	crowd.putFaces(keys[0], make([]Face, foundMostFaces+1))
	if _, ok := crowd.faces(keys[0]); ok {
		t.Errorf("an image of %d faces is kept (at most %d)", foundMostFaces+1, foundMostFaces)
	}
	aged := NewFound(know, 2, time.Nanosecond)
	aged.putFaces(keys[0], nil)
	time.Sleep(time.Millisecond)
	if _, ok := aged.faces(keys[0]); ok {
		t.Error("an answer older than the Found's age is still given")
	}
}

func toRGBA(img image.Image) *image.RGBA {
	out := image.NewRGBA(img.Bounds())
	draw.Draw(out, out.Bounds(), img, img.Bounds().Min, draw.Src)
	return out
}

func sameFaces(a, b []Face) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Box != b[i].Box || a[i].Detection != b[i].Detection || a[i].Score != b[i].Score ||
			a[i].Points != b[i].Points || !slices.Equal(a[i].Landmarks, b[i].Landmarks) {
			return false
		}
	}
	return true
}
