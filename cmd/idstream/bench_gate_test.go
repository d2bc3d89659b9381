package main

import (
	"bytes"
	"image/jpeg"
	"net/http"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/benchmetrics"
	"github.com/idstream/idstream/internal/cardrender"
)

// BenchmarkQualityGateAnswer measures the quality gate's answer time as a caller sees it: a
// 1600×1200 JPEG photo of a vehicle registration card on a wooden table (rotated, in
// perspective, noisy: the document search does its full work) posted to the edge, stored,
// produced to Kafka, assessed by the quality group and the answer consumed back by the
// edge. It reports p50-ms and p99-ms (benchmetrics); the photo must pass the gate.
func BenchmarkQualityGateAnswer(b *testing.B) {
	s := testService(b, []string{"session", "quality"})
	c := newClient(b, s)
	card, _ := renderer(b).VehicleRegistration(cardrender.SyntheticVehicle(1))
	img, _, err := cardrender.Place(card, cardrender.Scene{Width: 1600, Height: 1200, Background: cardrender.Wood,
		CenterX: 0.5, CenterY: 0.5, Scale: 0.75, RotationDeg: 5, Skew: 0.02, NoiseStdDev: 3}, 7)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	photo := buf.Bytes()
	init := c.openSession("vehicle_registration")
	id, token := str(init["session_id"]), str(init["sdk_token"])
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r := c.upload(id, "document", "front", photo, token)
		lat = append(lat, time.Since(start))
		if r.status != http.StatusOK {
			b.Fatalf("gate did not answer in the budget: %d %s", r.status, r.body)
		}
		if st := r.json(b)["status"]; st != "accepted" {
			b.Fatalf("the card photo was not accepted: %s", r.body)
		}
	}
	b.StopTimer()
	benchmetrics.Report(b, lat)
	b.ReportMetric(0, "ns/op")
}
