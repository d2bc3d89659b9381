package face

import (
	"image"
	"testing"
)

// benchImage is sample3.jpg (1920×1350, three faces) and its first face.
func benchImage(b *testing.B) (*Engine, image.Image, Face) {
	e := testEngine(b)
	img := photo(b, "sample3.jpg")
	faces, err := e.Detect(img)
	if err != nil || len(faces) == 0 {
		b.Fatalf("faces %d, err %v", len(faces), err)
	}
	return e, img, faces[0]
}

func report(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/image")
}

func BenchmarkDetect(b *testing.B) {
	e, img, _ := benchImage(b)
	for b.Loop() {
		if _, err := e.Detect(img); err != nil {
			b.Fatal(err)
		}
	}
	report(b)
}

func BenchmarkEmbed(b *testing.B) {
	e, img, f := benchImage(b)
	for b.Loop() {
		if _, err := e.Embed(img, f); err != nil {
			b.Fatal(err)
		}
	}
	report(b)
}

func BenchmarkLiveness(b *testing.B) {
	e, img, f := benchImage(b)
	for b.Loop() {
		if _, err := e.Liveness(img, f); err != nil {
			b.Fatal(err)
		}
	}
	report(b)
}
