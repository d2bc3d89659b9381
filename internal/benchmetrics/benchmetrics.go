// Package benchmetrics makes every processor's benchmark report the same figures: the latency
// of one unit of work at the 50th and 99th percentile, and the CPU time the process spent per
// image, so that `make bench` prints comparable lines for quality, ocr, liveness, facematch
// and chip.
//
// CPU time is the process's user plus system time (getrusage(RUSAGE_SELF)) across the timed
// loop, which counts every thread: OpenCV's and Tesseract's as well as the Go runtime's,
// garbage collection included. Benchmarks using it should therefore run nothing else in the
// background while they measure.
package benchmetrics

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/loadbench"
)

// Metric units reported by Measure.
const (
	UnitP50 = "p50-ms"     // median latency of one call, milliseconds
	UnitP99 = "p99-ms"     // 99th-percentile latency of one call, milliseconds
	UnitCPU = "cpu-ms/img" // process CPU time per image, milliseconds
)

// Measure runs work in a b.Loop, timing every call, and reports UnitP50 and UnitP99 over the
// calls and UnitCPU as the process CPU time over the loop divided by the images processed
// (imagesPerCall for each call, at least 1). work should fail the benchmark itself when a
// call goes wrong. Setup before Measure is not counted.
func Measure(b *testing.B, imagesPerCall int, work func()) {
	b.Helper()
	imagesPerCall = max(1, imagesPerCall)
	lat := make([]time.Duration, 0, 64)
	cpu0, err := processCPU()
	if err != nil {
		b.Fatal(err)
	}
	calls := 0
	for b.Loop() {
		start := time.Now()
		work()
		lat = append(lat, time.Since(start))
		calls++
	}
	cpu1, err := processCPU()
	if err != nil {
		b.Fatal(err)
	}
	if calls == 0 {
		return
	}
	Report(b, lat)
	b.ReportMetric(ms(cpu1-cpu0)/float64(calls*imagesPerCall), UnitCPU)
}

// Report reports UnitP50 and UnitP99 of the latencies lat (unsorted; at least one).
func Report(b *testing.B, lat []time.Duration) {
	b.Helper()
	if len(lat) == 0 {
		return
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	b.ReportMetric(ms(loadbench.NearestRank(s, 0.50)), UnitP50)
	b.ReportMetric(ms(loadbench.NearestRank(s, 0.99)), UnitP99)
}

// processCPU returns the process's user plus system CPU time so far.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("benchmetrics: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
