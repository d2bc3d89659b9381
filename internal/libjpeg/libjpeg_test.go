package libjpeg

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// closePixels asserts that a (libjpeg) and b (image/jpeg) have the same type, bounds and
// subsampling, that no sample differs by more than maxDiff and that samples differ by less
// than maxMeanDiff on average: the two IDCTs (libjpeg's integer one, image/jpeg's from the
// MPEG-2 reference decoder) round differently, by one level here and there.
func closePixels(t *testing.T, a, b image.Image) {
	t.Helper()
	const maxDiff, maxMeanDiff = 2, 0.25
	var sum, n, worst int
	cmp := func(x, y int, p, q uint8) {
		d := int(p) - int(q)
		if d < 0 {
			d = -d
		}
		sum += d
		n++
		if d > worst {
			worst = d
			if d > maxDiff {
				t.Fatalf("sample at (%d,%d): %d, image/jpeg %d", x, y, p, q)
			}
		}
	}
	defer func() {
		if mean := float64(sum) / float64(n); mean > maxMeanDiff {
			t.Fatalf("mean difference %.3f per sample (worst %d)", mean, worst)
		}
		t.Logf("%d samples, mean difference %.3f, worst %d", n, float64(sum)/float64(n), worst)
	}()
	if a.Bounds() != b.Bounds() {
		t.Fatalf("bounds %v, image/jpeg %v", a.Bounds(), b.Bounds())
	}
	switch ga := a.(type) {
	case *image.Gray:
		gb, ok := b.(*image.Gray)
		if !ok {
			t.Fatalf("libjpeg gave *image.Gray, image/jpeg %T", b)
		}
		r := ga.Bounds()
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				cmp(x, y, ga.GrayAt(x, y).Y, gb.GrayAt(x, y).Y)
			}
		}
	case *image.YCbCr:
		yb, ok := b.(*image.YCbCr)
		if !ok {
			t.Fatalf("libjpeg gave *image.YCbCr, image/jpeg %T", b)
		}
		if ga.SubsampleRatio != yb.SubsampleRatio {
			t.Fatalf("ratio %v, image/jpeg %v", ga.SubsampleRatio, yb.SubsampleRatio)
		}
		r := ga.Bounds()
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				p, q := ga.YCbCrAt(x, y), yb.YCbCrAt(x, y)
				cmp(x, y, p.Y, q.Y)
				cmp(x, y, p.Cb, q.Cb)
				cmp(x, y, p.Cr, q.Cr)
			}
		}
	default:
		t.Fatalf("unexpected %T", a)
	}
}

// TestMatchesImageJPEG decodes Go's own JPEG test images (every subsampling ratio,
// baseline and progressive, restart intervals, grey) and asserts libjpeg's image is sample
// for sample image/jpeg's; the layouts it leaves to image/jpeg are ErrUnsupported.
func TestMatchesImageJPEG(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jpeg")
	if err != nil || len(files) < 20 {
		t.Fatalf("test images: %v (%d)", err, len(files))
	}
	unsupported := map[string]bool{
		"video-001.cmyk.jpeg": true, "video-001.rgb.jpeg": true, "video-001.221212.jpeg": true,
		"video-005.gray.q50.2x2.jpeg": true, "video-005.gray.q50.2x2.progressive.jpeg": true,
	}
	compared := 0
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(data)
			want, werr := jpeg.Decode(bytes.NewReader(data))
			switch {
			case unsupported[name]:
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("want ErrUnsupported, got %v", err)
				}
				return
			case werr != nil:
				if err == nil {
					t.Fatalf("image/jpeg fails (%v), libjpeg decodes", werr)
				}
				return
			case err != nil:
				t.Fatalf("image/jpeg decodes, libjpeg: %v", err)
			}
			closePixels(t, got, want)
			compared++
		})
	}
	if compared < 15 {
		t.Fatalf("only %d images compared", compared)
	}
}

// TestErrorsAfterTheScan: libjpeg's fatal error in jpeg_finish_decompress (an unknown marker
// between the scan and the end of the image) comes back as ErrCorrupt, with nothing freed
// twice (the row pointers live on the C stack).
func TestErrorsAfterTheScan(t *testing.T) {
	data, err := os.ReadFile("testdata/video-001.jpeg")
	if err != nil || !bytes.HasSuffix(data, []byte{0xFF, 0xD9}) {
		t.Fatalf("test image: %v", err)
	}
	bad := append(append([]byte{}, data[:len(data)-2]...), 0xFF, 0x37, 0x00, 0x02, 0xFF, 0xD9)
	if _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown marker after the scan: %v, want ErrCorrupt", err)
	}
}
