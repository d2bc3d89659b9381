package docread

import (
	"testing"

	"github.com/idstream/idstream/internal/benchmetrics"
	"github.com/idstream/idstream/internal/cardrender"
)

// BenchmarkReadPage is one label-anchored read of a chip ID front: the page pass and the
// fields found on it (with their re-reads).
func BenchmarkReadPage(b *testing.B) {
	ocr, rend := testReader(b), testRenderer(b)
	img, _ := rend.ChipIDFront(cardrender.SyntheticPerson(1))
	b.Run("page", func(b *testing.B) {
		benchmetrics.Measure(b, 1, func() {
			if _, err := ocr.ReadPage(img, 1200, 756); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("page+fields", func(b *testing.B) {
		benchmetrics.Measure(b, 1, func() {
			if _, err := ocr.ReadLabelled(img, ChipIDFront()); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("fixed", func(b *testing.B) {
		benchmetrics.Measure(b, 1, func() {
			if _, err := ocr.ReadCard(img, ChipIDFront()); err != nil {
				b.Fatal(err)
			}
		})
	})
}
