package consent

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// benchRecords is how many consent records BenchmarkGetConsents stores before measuring
// (go test -bench GetConsents -consent.records 1000000).
var benchRecords = flag.Int("consent.records", 100_000, "consent records stored by BenchmarkGetConsents")

// recordsPerPerson is how many records each tracking id holds in the benchmark.
const recordsPerPerson = 4

// BenchmarkGetConsents measures GET /v1/consents over loopback HTTP with -consent.records
// records in cmp.consents.v1 (recordsPerPerson per tracking id), read back into a fresh
// replica's index by its Follower. It reports p50/p99 latency, the index rebuild rate and
// the heap held per record.
func BenchmarkGetConsents(b *testing.B) {
	n := *benchRecords
	cl := newCluster(b)
	cmp, err := DefaultConfig()
	if err != nil {
		b.Fatal(err)
	}
	people := n / recordsPerPerson
	pub := cl.producer(b)
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const batch = 5000
	outs := make([]stream.Output, 0, batch)
	for i := range n {
		tracking := fmt.Sprintf("trk_%09d", i%people)
		r := Record{
			ConsentID: newConsentID(), PurposeID: cmp.Purposes[i/people%len(cmp.Purposes)].ID, Status: StatusGranted,
			NoticeVersion: "1", RecordedAt: base.Add(time.Duration(i) * time.Millisecond), Channel: "web",
			IP: "203.0.113.24", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36",
		}
		r.ProofSHA256 = Proof(tracking, r)
		data, err := cl.codec.Encode(schemas.TopicConsents, toEvent("acme", tracking, r))
		if err != nil {
			b.Fatal(err)
		}
		outs = append(outs, stream.Output{Topic: schemas.TopicConsents, Key: []byte(tracking), Value: data})
		if len(outs) == batch || i == n-1 {
			if err := pub.Produce(ctx, outs...); err != nil {
				b.Fatal(err)
			}
			outs = outs[:0]
		}
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	rp := cl.replica(b)
	rebuild := time.Since(start)
	if rp.index.Len() != n {
		b.Fatalf("index holds %d records, want %d", rp.index.Len(), n)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)

	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		id := fmt.Sprintf("trk_%09d", rng.IntN(people))
		t0 := time.Now()
		r := rp.get(keyAcme, id)
		lat = append(lat, time.Since(t0))
		if r.status != 200 {
			b.Fatalf("GET %s: %d %s", id, r.status, r.body)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(n), "records")
	b.ReportMetric(float64(n)/rebuild.Seconds(), "rebuild-records/s")
	if after.HeapInuse > before.HeapInuse {
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/float64(n), "heap-B/record")
	}
}
