package webhook

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// BenchmarkDeliveries measures end to end, on the embedded broker: decided snapshots
// produced to ekyc.session-state.v1 → trigger → retry topic → signed POST acknowledged by a
// local receiver. It reports deliveries/s and the p99 from a decision produced to its
// delivery acknowledged.
func BenchmarkDeliveries(b *testing.B) {
	e := newEnv(b)
	k1, s1 := newKey(b)
	rcv := newReceiver(b, k1)
	rcv.start()
	tenants := tenant.NewRegistry(&tenant.Tenant{ID: "ten_a", WebhookURL: rcv.URL(),
		WebhookSecrets: []string{s1}, AllowPrivateWebhooks: true})
	e.startSink(tenants, ExponentialSchedule(8, time.Millisecond))
	// Warm up: the groups join and the first delivery goes through.
	e.produce(schemas.TopicSessionState, "ses_warm", decided("ses_warm", "ten_a", nil))
	waitDeliveries(b, rcv, 1)

	outs := make([]stream.Output, b.N)
	for i := range b.N {
		sid := "ses_b" + strconv.Itoa(i)
		v, err := e.codec.Encode(schemas.TopicSessionState, decided(sid, "ten_a", nil))
		if err != nil {
			b.Fatal(err)
		}
		outs[i] = stream.Output{Topic: schemas.TopicSessionState, Key: []byte(sid), Value: v}
	}
	b.ResetTimer()
	start := time.Now()
	produced := make(map[string]time.Time, b.N)
	for i := 0; i < b.N; i += 100 {
		batch := outs[i:min(i+100, b.N)]
		at := time.Now()
		if err := e.prod.Produce(context.Background(), batch...); err != nil {
			b.Fatal(err)
		}
		for _, o := range batch {
			produced["msg_dec_"+string(o.Key)] = at
		}
	}
	got := waitDeliveries(b, rcv, b.N+1)
	elapsed := time.Since(start)
	b.StopTimer()
	var lat []time.Duration
	for _, d := range got {
		if at, ok := produced[d.ID]; ok {
			lat = append(lat, d.At.Sub(at))
			delete(produced, d.ID)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
	}
}

// waitDeliveries waits until the receiver holds n distinct webhook ids.
func waitDeliveries(tb testing.TB, rcv *receiver, n int) []delivery {
	tb.Helper()
	deadline := time.After(guard)
	for {
		got, _ := rcv.deliveries()
		ids := map[string]bool{}
		for _, d := range got {
			ids[d.ID] = true
		}
		if len(ids) >= n {
			return got
		}
		select {
		case <-rcv.notify:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			tb.Fatalf("%d of %d deliveries before the hang guard", len(ids), n)
		}
	}
}
