package docgen

import (
	"fmt"
	"image"
	_ "image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"golang.org/x/image/draw"
)

var testRef = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func newTestRenderer(t testing.TB) *Renderer {
	t.Helper()
	rd, err := NewRenderer(DefaultFontDir)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// TestWriteSamples writes every template's sides to $DOCGEN_SAMPLES (skipped when unset).
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("DOCGEN_SAMPLES")
	if dir == "" {
		t.Skip("DOCGEN_SAMPLES not set")
	}
	rd := newTestRenderer(t)
	face := sampleFace(t)
	for i, tp := range Templates() {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		p := NewPerson(r, testRef)
		d, err := rd.RenderTemplate(p, tp.Name, r, face)
		if err != nil {
			t.Fatal(err)
		}
		for side, img := range d.Sides {
			f, _ := os.Create(dir + "/" + tp.Name + "_" + side + ".png")
			png.Encode(f, img)
			f.Close()
		}
		t.Logf("%s %v %v", tp.Name, d.Fields, d.MRZ)
	}
}

// TestWriteCaptures writes good and bad captures to $DOCGEN_SAMPLES (skipped when unset).
func TestWriteCaptures(t *testing.T) {
	dir := os.Getenv("DOCGEN_SAMPLES")
	if dir == "" {
		t.Skip("DOCGEN_SAMPLES not set")
	}
	rd := newTestRenderer(t)
	for i, split := range []Split{Calibration, HeldOut, Calibration, HeldOut} {
		r := rand.New(rand.NewPCG(uint64(i), 9))
		p := NewPerson(r, testRef)
		d, err := rd.Render(p, ChipIDCard, split, r, sampleFace(t))
		if err != nil {
			t.Fatal(err)
		}
		c := Photograph(d.Sides[StepFront], split, r)
		writeCapture(t, fmt.Sprintf("%s/cap%d_good", dir, i), c)
		for _, reason := range BadReasons() {
			c, err := BadCapture(d.Sides[StepBack], reason, split, r)
			if err != nil {
				t.Fatal(err)
			}
			writeCapture(t, fmt.Sprintf("%s/cap%d_%s", dir, i, reason), c)
		}
	}
}

func writePNG(t *testing.T, path string, img image.Image) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// writeCapture writes the JPEG and a half-size PNG preview.
func writeCapture(t *testing.T, base string, c Capture) {
	if err := os.WriteFile(base+".jpg", c.JPEG, 0o644); err != nil {
		t.Fatal(err)
	}
	b := c.Image.Bounds()
	small := image.NewRGBA(image.Rect(0, 0, b.Dx()/2, b.Dy()/2))
	draw.ApproxBiLinear.Scale(small, small.Bounds(), c.Image, b, draw.Src, nil)
	writePNG(t, base+".png", small)
}

// sampleFace loads the portrait named by $DOCGEN_FACE (nil when unset).
func sampleFace(t *testing.T) image.Image {
	path := os.Getenv("DOCGEN_FACE")
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestWriteScenes writes every table texture to $DOCGEN_SAMPLES (skipped when unset).
func TestWriteScenes(t *testing.T) {
	dir := os.Getenv("DOCGEN_SAMPLES")
	if dir == "" {
		t.Skip("DOCGEN_SAMPLES not set")
	}
	for _, s := range []Split{Calibration, HeldOut} {
		for i, name := range ScenesOf(s) {
			fr := scene(name, 640, 480, rand.New(rand.NewPCG(uint64(i), 4)))
			writePNG(t, dir+"/scene_"+name+".png", fr.rgba())
		}
	}
}
