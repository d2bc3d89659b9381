package main

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"
)

// BenchmarkQualityGateAnswer measures the quality gate's answer time as a caller sees it: a
// 1600×1200 JPEG document posted to the edge, stored, produced to Kafka, assessed by the
// quality group and the answer consumed back by the edge. It reports p50 and p99 in ms.
func BenchmarkQualityGateAnswer(b *testing.B) {
	s := testService(b, []string{"session", "quality"})
	c := newClient(b, s)
	rng := rand.New(rand.NewPCG(7, 7))
	img := image.NewRGBA(image.Rect(0, 0, 1600, 1200))
	for y := range 1200 {
		for x := range 1600 {
			v := uint8(150 + rng.IntN(20))
			if (x/6+y/40)%3 == 0 && rng.IntN(3) > 0 {
				v = 30
			}
			img.SetRGBA(x, y, color.RGBA{v, v, v + 10, 255})
		}
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
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	b.ReportMetric(0, "ns/op")
}
