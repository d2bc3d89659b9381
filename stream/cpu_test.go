package stream

import (
	"context"
	"crypto/sha256"
	"runtime"
	"testing"
	"time"
)

// TestMeasuredCallCountsTheHandlersCPU: a handler's CPU is what its thread computed, not the
// time it took: hashing counts, sleeping does not.
func TestMeasuredCallCountsTheHandlersCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread CPU is measured on Linux only")
	}
	buf := make([]byte, 1<<20)
	_, busy, err := measuredCall(context.Background(), func(context.Context) ([]Output, error) {
		for range 64 { // 64 MiB of SHA-256: tens of milliseconds on any machine
			sha256.Sum256(buf)
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, idle, err := measuredCall(context.Background(), func(context.Context) ([]Output, error) {
		time.Sleep(200 * time.Millisecond)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if busy < 0.01 {
		t.Errorf("hashing 64 MiB counted %.4f CPU-s, want at least 0.01", busy)
	}
	if idle > 0.005 {
		t.Errorf("sleeping 200 ms counted %.4f CPU-s, want about none", idle)
	}
}
