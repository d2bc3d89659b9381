package liveness

import (
	"context"
	"testing"

	"github.com/idstream/idstream/internal/benchmetrics"
)

// BenchmarkHandler is the group's time per selfie (a 600×700 portrait JPEG): blob read,
// decode, detection, liveness model and signals, encoding. It reports latency p50/p99 and
// CPU per image (benchmetrics).
func BenchmarkHandler(b *testing.B) {
	f := newFixture(b)
	rec := f.selfie(b, "cap_bench", encodeJPEG(b, portrait(b), 92))
	benchmetrics.Measure(b, 1, func() {
		if outs, err := f.group.Handler(context.Background(), rec); err != nil || len(outs) != 1 {
			b.Fatalf("outputs %d, err %v", len(outs), err)
		}
	})
}
