package stream

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
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
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, idle, err := measuredCall(context.Background(), func(context.Context) ([]Output, error) {
		time.Sleep(200 * time.Millisecond)
		return nil, nil
	}, nil)
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

// TestNicedCallRunsAtItsPriorityAlone: a call made with a nice value runs on a thread at that
// priority, and its CPU is counted; that thread alone is niced, and none once it is closed.
func TestNicedCallRunsAtItsPriorityAlone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread priority is set on Linux only")
	}
	niceOfThisThread := func() int {
		// The raw syscall answers 20 − nice.
		p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
		if err != nil {
			t.Fatal(err)
		}
		return 20 - p
	}
	if n := niceOfThisThread(); n != 0 {
		t.Skipf("the test runs at nice %d: every thread counts as niced", n)
	}
	buf := make([]byte, 1<<20)
	var inside int
	niced := newNicedThreads(7)
	_, cpu, err := measuredCall(context.Background(), func(context.Context) ([]Output, error) {
		inside = niceOfThisThread()
		for range 32 {
			sha256.Sum256(buf)
		}
		return nil, nil
	}, niced)
	if err != nil {
		t.Fatal(err)
	}
	if inside != 7 {
		t.Errorf("the call ran at nice %d, want 7", inside)
	}
	if cpu < 0.005 {
		t.Errorf("a niced call counted %.4f CPU-s", cpu)
	}
	// The call's thread is kept for the runner's next calls and ends when the runner stops
	// (close): then no thread of the process is niced.
	if n := countNicedThreads(t); n != 1 {
		t.Errorf("%d threads niced while the runner runs, want its one", n)
	}
	niced.close()
	deadline := time.Now().Add(5 * time.Second)
	for niced := countNicedThreads(t); niced > 0; niced = countNicedThreads(t) {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads of the process still niced after the call", niced)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countNicedThreads counts the threads of this process whose nice value is not 0
// (/proc/self/task/*/stat, field 19).
func countNicedThreads(t *testing.T) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended meanwhile
		}
		_, rest, _ := strings.Cut(string(b), ") ") // after the command, which may hold spaces
		fields := strings.Fields(rest)
		if len(fields) > 16 && fields[16] != "0" { // field 19 of the line is the 17th after ") "
			n++
		}
	}
	return n
}
