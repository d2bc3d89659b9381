package consent

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/schemas"
)

// readErasures returns every committed record of cmp.erasures.v1, reading until the end
// offsets listed at the start.
func readErasures(t *testing.T, cl *cluster) map[string][]schemas.BiometricErasureRequested {
	t.Helper()
	c, err := kgo.NewClient(kgo.SeedBrokers(cl.brokers...), kgo.ConsumeTopics(schemas.TopicErasures),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Each withdrawal POST is acknowledged before it answers, so the records are there: a
	// POST of a marker (a withdrawal of another tracking id) written last bounds the read.
	out := map[string][]schemas.BiometricErasureRequested{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for out["trk_marker"] == nil {
		fs := c.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("marker not read: %v", ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			var ev schemas.BiometricErasureRequested
			if err := cl.codec.Decode(schemas.TopicErasures, r.Value, &ev); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if string(r.Key) != ev.TrackingID {
				t.Errorf("key %q, tracking id %q", r.Key, ev.TrackingID)
			}
			out[ev.TrackingID] = append(out[ev.TrackingID], ev)
		})
	}
	return out
}

// TestWithdrawalProducesErasureRequest: a withdrawal of the eKYC purpose produces one
// erasure request beside its record; other decisions produce none.
func TestWithdrawalProducesErasureRequest(t *testing.T) {
	rp := newCluster(t).replica(t)
	decodeConsents(t, rp.post(keyAcme, grant("trk_w", PurposeEKYC, "marketing")), 201)
	decodeConsents(t, rp.post(keyAcme, decide("trk_m", StatusWithdrawn, "marketing")), 201)
	decodeConsents(t, rp.post(keyAcme, decide("trk_d", StatusDenied, PurposeEKYC)), 201)
	req := decide("trk_w", StatusWithdrawn, PurposeEKYC, "marketing")
	w := decodeConsents(t, rp.post(keyAcme, req), 201)
	decodeConsents(t, rp.post(keyBeta, decide("trk_marker", StatusWithdrawn, PurposeEKYC)), 201)

	got := readErasures(t, rp.cl)
	if len(got) != 2 || len(got["trk_w"]) != 1 {
		t.Fatalf("erasure requests: %+v", got)
	}
	ev := got["trk_w"][0]
	withdrawal := w.Records[0]
	if withdrawal.PurposeID != PurposeEKYC {
		t.Fatalf("records %+v", w.Records)
	}
	if ev.ConsentID != withdrawal.ConsentID || ev.Envelope.EventID != ErasureEventIDPrefix+withdrawal.ConsentID ||
		ev.Envelope.TenantID != "acme" || ev.Envelope.SessionID != "" || ev.Envelope.Producer != Producer ||
		ev.RequestedAt.UTC().Format(TimeFormat) != withdrawal.RecordedAt || len(ev.Categories) != 3 {
		t.Errorf("erasure request %+v for withdrawal %+v", ev, withdrawal)
	}
	if m := got["trk_marker"][0]; m.Envelope.TenantID != "beta" {
		t.Errorf("marker tenant %q", m.Envelope.TenantID)
	}
}
