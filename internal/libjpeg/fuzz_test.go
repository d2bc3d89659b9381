package libjpeg

import (
	"errors"
	"image"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds libjpeg mutated JPEGs: no input may crash the process (the C side's
// errors and warnings must come back as ErrCorrupt), every error is one of the package's two,
// and a decoded image has the dimensions its header declares. Seeds: the test images.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jpeg")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8000 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadHeader(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("header error of no class: %v", err)
			}
			return
		}
		if h.Width*h.Height > 1<<20 { // callers bound dimensions first (imagecheck)
			return
		}
		img, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error of no class: %v", err)
			}
			return
		}
		if img.Bounds() != image.Rect(0, 0, h.Width, h.Height) {
			t.Fatalf("decoded %v, header declares %dx%d", img.Bounds(), h.Width, h.Height)
		}
	})
}
