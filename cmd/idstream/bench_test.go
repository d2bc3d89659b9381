package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/idstream/idstream/schemas"
)

// benchClients is the number of concurrent callers in the throughput benchmarks.
const benchClients = 32

// parallel runs fn n times over benchClients goroutines and returns the elapsed time.
func parallel(n int, fn func(i int)) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkSessionInit measures Session Init through the edge to an acknowledged produce,
// and in the same run raw franz-go produces of equivalent records (same encoded size, same
// topic, same concurrency), and reports both rates and their ratio.
func BenchmarkSessionInit(b *testing.B) {
	s := testService(b, nil)
	c := newClient(b, s)
	c.http.Transport = &http.Transport{MaxIdleConnsPerHost: benchClients}
	body, _ := json.Marshal(map[string]any{"flow": "chip_id_card", "reference_id": "bench-ref-000001"})

	b.ResetTimer()
	edgeTime := parallel(b.N, func(int) {
		if r := c.do(http.MethodPost, "/v1/ekyc/sessions", c.key, "application/json", body); r.status != http.StatusCreated {
			b.Errorf("init: %d %s", r.status, r.body)
		}
	})
	b.StopTimer()

	// The equivalent record: a SessionOpened as the edge writes it.
	ref := "bench-ref-000001"
	ev := &schemas.SessionEvent{
		Envelope: schemas.Envelope{EventID: "evt_0123456789abcdefghijklmnop", SessionID: "ses_0123456789abcdefghijklmnop", TenantID: "sandbox", OccurredAt: time.Now(), Producer: "edge"},
		Opened: &schemas.SessionOpened{Flow: "chip_id_card", Steps: []string{"document_front", "document_back", "nfc", "selfie"},
			ReferenceID: &ref, Locale: "vi", DataRetention: "service", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(30 * time.Minute), Nonce: make([]byte, 8)},
	}
	val, err := s.codec.Encode(schemas.TopicSessions, ev)
	if err != nil {
		b.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	rawTime := parallel(b.N, func(int) {
		rec := &kgo.Record{Topic: schemas.TopicSessions, Key: []byte(ev.Envelope.SessionID), Value: val}
		if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			b.Errorf("produce: %v", err)
		}
	})
	edgeRate := float64(b.N) / edgeTime.Seconds()
	rawRate := float64(b.N) / rawTime.Seconds()
	b.ReportMetric(edgeRate, "inits/s")
	b.ReportMetric(rawRate, "raw_produces/s")
	b.ReportMetric(edgeRate/rawRate, "edge/raw")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkDataGet measures Data Get requests/s answered from the session-state view.
func BenchmarkDataGet(b *testing.B) {
	s := testService(b, []string{"session"})
	c := newClient(b, s)
	c.http.Transport = &http.Transport{MaxIdleConnsPerHost: benchClients}
	const sessions = 500
	ids := make([]string, sessions)
	parallel(sessions, func(i int) { ids[i] = str(c.openSession("id_card")["session_id"]) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range ids { // every session folded into the view, not served provisionally
		if _, err := s.states.Wait(ctx, id, func(st *schemas.SessionState) bool { return st != nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	elapsed := parallel(b.N, func(i int) {
		if r := c.do(http.MethodGet, "/v1/ekyc/sessions/"+ids[i%sessions], c.key, "", nil); r.status != http.StatusOK {
			b.Errorf("get: %d %s", r.status, r.body)
		}
	})
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "gets/s")
	b.ReportMetric(0, "ns/op")
}
