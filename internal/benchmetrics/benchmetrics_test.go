package benchmetrics

import (
	"testing"
	"time"
)

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
