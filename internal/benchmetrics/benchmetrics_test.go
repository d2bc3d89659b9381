package benchmetrics

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := Percentile(s, c.q); got != c.want {
			t.Errorf("Percentile(1..100 ms, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := Percentile(s[:1], 0.99); got != time.Millisecond {
		t.Errorf("one sample: %v", got)
	}
	if got := Percentile(nil, 0.5); got != 0 {
		t.Errorf("no sample: %v", got)
	}
}

func TestProcessCPUGrows(t *testing.T) {
	before, err := processCPU()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	after, err := processCPU()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before || x == 0 {
		t.Fatalf("CPU time %v then %v after a busy loop", before, after)
	}
}

// BenchmarkMeasure shows the metrics Measure reports, on a busy loop of about 1 ms.
func BenchmarkMeasure(b *testing.B) {
	Measure(b, 1, func() {
		for start := time.Now(); time.Since(start) < time.Millisecond; {
		}
	})
}
