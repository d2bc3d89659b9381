package stream

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMeasuredCallCountsTheHandlersCPU: a handler's CPU is what its thread computed, not the
// time it took: hashing counts, sleeping does not.
func TestMeasuredCallCountsTheHandlersCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread CPU is measured on Linux only")
	}
	buf := make([]byte, 1<<20)
	_, busyUse, err := measuredCall(context.Background(), "test", func(context.Context) ([]Output, error) {
		for range 64 { // 64 MiB of SHA-256: tens of milliseconds on any machine
			sha256.Sum256(buf)
		}
		return nil, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, idleUse, err := measuredCall(context.Background(), "test", func(context.Context) ([]Output, error) {
		time.Sleep(200 * time.Millisecond)
		return nil, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	busy, idle := busyUse.cpu, idleUse.cpu
	if busy < 0.01 {
		t.Errorf("hashing 64 MiB counted %.4f CPU-s, want at least 0.01", busy)
	}
	if idle > 0.005 {
		t.Errorf("sleeping 200 ms counted %.4f CPU-s, want about none", idle)
	}
}

// TestBackgroundCallRunsAtItsPriorityAlone: a call made on a Background runs on a thread at
// its priority, and its CPU is counted; its threads alone are niced, and none once it is
// closed.
func TestBackgroundCallRunsAtItsPriorityAlone(t *testing.T) {
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
	bg := NewBackground(2, 7)
	defer bg.Close()
	_, use, err := measuredCall(context.Background(), "test", func(context.Context) ([]Output, error) {
		inside = niceOfThisThread()
		for range 32 {
			sha256.Sum256(buf)
		}
		return nil, nil
	}, bg)
	if err != nil {
		t.Fatal(err)
	}
	if inside != 7 {
		t.Errorf("the call ran at nice %d, want 7", inside)
	}
	if use.cpu < 0.005 {
		t.Errorf("a background call counted %.4f CPU-s", use.cpu)
	}
	// The call's thread is kept for the next calls and ends when the Background is closed:
	// then no thread of the process is niced.
	if n := countNicedThreads(t); n != 1 {
		t.Errorf("%d threads niced while the Background is open, want its 1", n)
	}
	bg.Close()
	deadline := time.Now().Add(5 * time.Second)
	for niced := countNicedThreads(t); niced > 0; niced = countNicedThreads(t) {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads of the process still niced after Close", niced)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// After Close a call still runs, on its caller's thread.
	ran := false
	if _, _, err := measuredCall(context.Background(), "test", func(context.Context) ([]Output, error) {
		ran = true
		return nil, nil
	}, bg); err != nil || !ran {
		t.Errorf("a call after Close: ran %v, err %v", ran, err)
	}
}

// TestBackgroundBoundsItsCalls: however many callers, a Background runs no more calls at once
// than it has turns; a caller whose context ends while it waits for a turn gets the
// context's error and its call is never made; a call waiting in Blocking gives its turn to
// another meanwhile.
func TestBackgroundBoundsItsCalls(t *testing.T) {
	bg := NewBackground(2, 0)
	defer bg.Close()
	var (
		mu            sync.Mutex
		running, most int
		wg            sync.WaitGroup
	)
	computing := func(delta int) int {
		mu.Lock()
		defer mu.Unlock()
		running += delta
		most = max(most, running)
		return running
	}
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for computing(0) != n {
			if time.Now().After(deadline) {
				t.Fatalf("%d calls computing, want %d", computing(0), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	release := make(chan struct{})
	call := func(ctx context.Context) {
		if err := Compute(ctx); err != nil {
			t.Error(err)
			return
		}
		computing(1)
		<-release
		computing(-1)
	}
	for range 6 {
		wg.Go(func() { bg.run(context.Background(), "test", call) })
	}
	waitFor(2) // both turns taken; four calls wait for one
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var err error
	computed := false
	bg.run(ctx, "test", func(ctx context.Context) {
		if err = Compute(ctx); err == nil {
			computed = true
		}
	})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNoTurn) || computed {
		t.Errorf("waiting past its context: err %v, computed %v; want ErrNoTurn with the deadline's error", err, computed)
	}
	close(release)
	wg.Wait()
	if most != 2 {
		t.Errorf("%d calls computed at once on 2 turns, want 2", most)
	}

	// Two calls that each wait in Blocking hold no turn meanwhile: a third computes.
	answer := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			bg.run(context.Background(), "test", func(ctx context.Context) {
				if err := Compute(ctx); err != nil {
					t.Error(err)
				}
				Blocking(ctx, func() { <-answer })
			})
		})
	}
	third := make(chan struct{})
	wg.Go(func() {
		bg.run(context.Background(), "test", func(ctx context.Context) {
			if Compute(ctx) == nil {
				close(third)
			}
		})
	})
	select {
	case <-third:
	case <-time.After(10 * time.Second):
		t.Fatal("a call found no turn while the two others waited in Blocking")
	}
	close(answer)
	wg.Wait()
	wantAllFree(t, bg, 2)

	// A goroutine of a call still waiting in Blocking when the call returns takes no turn
	// again afterwards.
	late := make(chan struct{})
	out := make(chan struct{})
	bg.run(context.Background(), "test", func(ctx context.Context) {
		if err := Compute(ctx); err != nil {
			t.Error(err)
		}
		go func() {
			defer close(out)
			Blocking(ctx, func() { <-late })
		}()
	})
	close(late)
	<-out
	wantAllFree(t, bg, 2)
}

// wantAllFree fails t unless bg has n turns free and no call waiting.
func wantAllFree(t *testing.T, bg *Background, n int) {
	t.Helper()
	bg.mu.Lock()
	defer bg.mu.Unlock()
	if bg.free != n || len(bg.waiting) != 0 {
		t.Errorf("%d turns free and %d calls waiting after every call returned, want %d and none", bg.free, len(bg.waiting), n)
	}
}

// TestBackgroundLinesUpByUsualLength: a free turn goes to the waiting call that would finish
// first were the calls run in the order they came: a short group's call that came just after
// a long group's goes first, and a long group's call that has waited longer than the short
// one's length goes before it.
func TestBackgroundLinesUpByUsualLength(t *testing.T) {
	bg := NewBackground(1, 0)
	defer bg.Close()
	bg.learn("ocr", 400*time.Millisecond)
	bg.learn("facematch", 20*time.Millisecond)
	order := func(first, second string, between time.Duration) []string {
		t.Helper()
		release := make(chan struct{})
		holding := make(chan struct{})
		go func() {
			bg.run(context.Background(), "holder", func(ctx context.Context) {
				_ = Compute(ctx)
				close(holding)
				<-release
			})
		}()
		<-holding
		var (
			mu  sync.Mutex
			ran []string
			wg  sync.WaitGroup
		)
		queue := func(group string) {
			wg.Go(func() {
				bg.run(context.Background(), group, func(ctx context.Context) {
					_ = Compute(ctx)
					mu.Lock()
					ran = append(ran, group)
					mu.Unlock()
				})
			})
			deadline := time.Now().Add(10 * time.Second)
			for {
				bg.mu.Lock()
				lined := len(bg.waiting)
				bg.mu.Unlock()
				if lined > 0 && (group == first && lined == 1 || group == second && lined == 2) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s never lined up", group)
				}
				time.Sleep(time.Millisecond)
			}
		}
		queue(first)
		time.Sleep(between)
		queue(second)
		close(release)
		wg.Wait()
		return ran
	}
	if got := order("ocr", "facematch", 0); !slices.Equal(got, []string{"facematch", "ocr"}) {
		t.Errorf("an OCR call, then a face match: ran %v, want the face match first", got)
	}
	if got := order("ocr", "facematch", 500*time.Millisecond); !slices.Equal(got, []string{"ocr", "facematch"}) {
		t.Errorf("an OCR call, then a face match 0.5 s later: ran %v, want the OCR call first", got)
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

// TestNoTurnIsNoTry: a handler whose call got no background turn (its context ended while it
// waited) is not tried again and not counted: one attempt, no handler metrics.
func TestNoTurnIsNoTry(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg, err := newConfig([]Option{WithBrokers([]string{"127.0.0.1:1"}), WithRetry(3, time.Millisecond), WithMetrics(NewMetrics(reg))})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, attempts, err := callWithRetry(context.Background(), &cfg, "g", &Record{Topic: "t"}, func(context.Context) ([]Output, error) {
		calls++
		return nil, fmt.Errorf("g: %w: %w", ErrNoTurn, context.Canceled)
	})
	if !errors.Is(err, ErrNoTurn) || attempts != 1 || calls != 1 {
		t.Fatalf("err %v after %d attempts (%d calls), want ErrNoTurn after one", err, attempts, calls)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "idstream_processor_handler_seconds" && len(f.GetMetric()) > 0 {
			t.Errorf("%d handler latency series recorded for a call that got no turn", len(f.GetMetric()))
		}
	}
}
