package fraud

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// BenchmarkFraud measures the fraud processor's time per session: the three image captures
// (index and injection checks) and the processing snapshot (blocklist of 10k entries,
// in-process sandbox registry, structure, dates, replay lookups against 30k sightings).
func BenchmarkFraud(b *testing.B) {
	f := newFixture(b, WithRegistry(registry.NewSandbox().Registry()))
	for i := range 10000 {
		f.blocklist[fmt.Sprintf("%s|%064x", tenant, i)] = fmt.Sprintf("blk_%d", i)
	}
	for i := range 30000 {
		f.sightings.m[IndexKey(tenant, fmt.Sprintf("%064x", i))] = Sighting{SessionID: fmt.Sprintf("ses_%d", i)}
	}
	var recs [][]*stream.Record
	for i := range 256 {
		id := fmt.Sprintf("ses_%026d", i)
		st := matchSnapshot(id)
		var rs []*stream.Record
		for _, c := range st.Captures {
			if c.Step == stepNFC {
				continue
			}
			v, err := f.codec.Encode(schemas.TopicCaptures, f.capture(id, c.Step, c.Blobs[0].SHA256, map[string]string{"emulator": "false"}))
			if err != nil {
				b.Fatal(err)
			}
			rs = append(rs, &stream.Record{Topic: schemas.TopicCaptures, Key: []byte(id), Value: v})
		}
		recs = append(recs, append(rs, f.snapshotRecord(st)))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for _, r := range recs[i%len(recs)] {
			outs, err := f.group.Handler(ctx, r)
			if err != nil || len(outs) == 0 {
				b.Fatalf("%v %d", err, len(outs))
			}
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/session")
}
