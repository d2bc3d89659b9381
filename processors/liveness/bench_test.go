package liveness

import (
	"context"
	"testing"
)

// BenchmarkHandler is the group's time per selfie (a 600×700 portrait JPEG): blob read,
// decode, detection, liveness model and signals, encoding.
func BenchmarkHandler(b *testing.B) {
	f := newFixture(b)
	rec := f.selfie(b, "cap_bench", encodeJPEG(b, portrait(b), 92))
	for b.Loop() {
		if outs, err := f.group.Handler(context.Background(), rec); err != nil || len(outs) != 1 {
			b.Fatalf("outputs %d, err %v", len(outs), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/selfie")
}
