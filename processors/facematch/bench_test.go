package facematch

import (
	"context"
	"testing"

	"github.com/idstream/idstream/internal/benchmetrics"

	"github.com/idstream/idstream/schemas"
)

// BenchmarkHandler is the group's time per snapshot that needs all three pairs (selfie
// 600×700, document crop 420×490, chip face 300×350, all JPEG): three blob reads, decodes,
// detections and embeddings, three similarities. The result cache is off. Latency p50/p99 is
// per snapshot, CPU per image (three per snapshot; benchmetrics).
func BenchmarkHandler(b *testing.B) {
	f := newFixture(b, WithCacheSize(0))
	rec := f.record(b, f.state(b, faces{selfie: selfieA(b), doc: sameDoc(b), chip: sameChip(b)}))
	benchmetrics.Measure(b, 3, func() {
		if outs, err := f.group.Handler(context.Background(), rec); err != nil || len(outs) != 1 {
			b.Fatalf("outputs %d, err %v", len(outs), err)
		}
	})
}

// BenchmarkRepeatedSnapshot is the time for a snapshot whose faces were already compared
// (st.Faces carries the result): decoding the snapshot and deriving the event id.
func BenchmarkRepeatedSnapshot(b *testing.B) {
	f := newFixture(b)
	st := f.state(b, faces{selfie: selfieA(b), chip: sameChip(b)})
	outs, err := f.group.Handler(context.Background(), f.record(b, st))
	if err != nil || len(outs) != 1 {
		b.Fatalf("outputs %d, err %v", len(outs), err)
	}
	var ev schemas.FacesMatched
	if err := f.codec.Decode(schemas.TopicFacematch, outs[0].Value, &ev); err != nil {
		b.Fatal(err)
	}
	rec := f.record(b, folded(st, ev))
	for b.Loop() {
		if outs, err := f.group.Handler(context.Background(), rec); err != nil || len(outs) != 0 {
			b.Fatalf("outputs %d, err %v", len(outs), err)
		}
	}
}
