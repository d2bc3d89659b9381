package stream

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkProduce measures raw franz-go produce throughput of 1 KB records on the
// embedded broker and reports records/s.
func BenchmarkProduce(b *testing.B) {
	e := startBroker(b)
	ensure(b, e.Addrs(), TopicSpec{Name: "bench.produce", Partitions: 4})
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addrs()...), kgo.RecordPartitioner(KeyPartitioner()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	val := make([]byte, 1024)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: "bench.produce", Value: val}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}
