package stream

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// unorderedFixture is a one-partition topic holding n records of one key, values "0".."n-1",
// and a group whose handler holds "0" until hold is closed and copies every record to out.
type unorderedFixture struct {
	brokers  []string
	in, out  string
	n        int
	hold     chan struct{}
	deaf     bool     // "0" is held until hold closes even when the runner is killed (a C call)
	handled  sync.Map // value → times handled
	inFlight atomic.Int64
	most     atomic.Int64
}

func newUnorderedFixture(t *testing.T, name string, n int) *unorderedFixture {
	t.Helper()
	e := startBroker(t)
	f := &unorderedFixture{brokers: e.Addrs(), in: name + ".in", out: name + ".out", n: n, hold: make(chan struct{})}
	ensure(t, f.brokers, TopicSpec{Name: f.in, Partitions: 1}, TopicSpec{Name: f.out, Partitions: 1})
	var outs []Output
	for i := range n {
		outs = append(outs, Output{Topic: f.in, Key: []byte("one-session"), Value: []byte(strconv.Itoa(i))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := testProducer(t, f.brokers).Produce(ctx, outs...); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *unorderedFixture) group(name string) Group {
	return Group{Name: name, Inputs: []string{f.in}, Outputs: []string{f.out},
		Handler: func(ctx context.Context, rec *Record) ([]Output, error) {
			now := f.inFlight.Add(1)
			defer f.inFlight.Add(-1)
			for m := f.most.Load(); now > m && !f.most.CompareAndSwap(m, now); m = f.most.Load() {
			}
			if string(rec.Value) == "0" {
				done := ctx.Done()
				if f.deaf {
					done = nil
				}
				select {
				case <-f.hold:
				case <-done:
					return nil, ctx.Err()
				}
			}
			c, _ := f.handled.LoadOrStore(string(rec.Value), new(atomic.Int64))
			c.(*atomic.Int64).Add(1)
			return []Output{{Topic: f.out, Key: rec.Key, Value: rec.Value}}, nil
		}}
}

func (f *unorderedFixture) times(v int) int64 {
	c, ok := f.handled.Load(strconv.Itoa(v))
	if !ok {
		return 0
	}
	return c.(*atomic.Int64).Load()
}

// committed is the group's committed offset of the input's partition (-1: none).
func (f *unorderedFixture) committed(t *testing.T, ctx context.Context, group string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup(f.in, 0); ok {
		return o.At
	}
	return -1
}

// TestRunnerUnordered: WithUnordered(2) handles the records of one partition and one key
// side by side, the ones behind a record in hand included, never more than two at once; the
// committed offset stays at the record in hand until it is finished, then moves to the end
// while the runner runs.
func TestRunnerUnordered(t *testing.T) {
	const n = 8
	f := newUnorderedFixture(t, "u", n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := NewRunner(f.group("u.group"), testOpts(f.brokers, WithUnordered(2))...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	waitFor(t, ctx, "the records behind the one in hand handled", func() bool {
		for i := 1; i < n; i++ {
			if f.times(i) == 0 {
				return false
			}
		}
		return true
	})
	if f.times(0) != 0 {
		t.Fatal("the held record was finished")
	}
	if c := f.committed(t, ctx, "u.group"); c > 0 {
		t.Fatalf("committed %d past the record in hand (offset 0)", c)
	}
	close(f.hold)
	waitFor(t, ctx, "every offset committed while running", func() bool { return f.committed(t, ctx, "u.group") == n })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m := f.most.Load(); m != 2 {
		t.Fatalf("%d records handled at once, want 2", m)
	}
	if got := readAll(t, f.brokers, f.out); len(got) != n {
		t.Fatalf("%d outputs, want %d", len(got), n)
	}
}

// TestRunnerUnorderedKilled: a runner killed with a record in hand committed nothing past it;
// its successor handles that record.
func TestRunnerUnorderedKilled(t *testing.T) {
	const n = 5
	f := newUnorderedFixture(t, "uk", n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first, err := NewRunner(f.group("uk.group"), testOpts(f.brokers, WithUnordered(2))...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	waitFor(t, ctx, "the records behind the one in hand handled", func() bool { return f.times(n-1) == 1 })
	first.Kill()
	if err := <-done; err != ErrKilled {
		t.Fatalf("killed runner returned %v", err)
	}
	if c := f.committed(t, ctx, "uk.group"); c > 0 {
		t.Fatalf("committed %d past the record in hand", c)
	}
	close(f.hold)
	second, err := NewRunner(f.group("uk.group"), testOpts(f.brokers, WithUnordered(2))...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	go func() { done <- second.Run(runCtx) }()
	waitFor(t, ctx, "the record in hand at the kill handled by the successor", func() bool { return f.times(0) == 1 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRunnerUnorderedStop: a runner stopped with a record in hand finishes it and commits
// everything before it returns; its successor handles nothing again.
func TestRunnerUnorderedStop(t *testing.T) {
	const n = 5
	f := newUnorderedFixture(t, "us", n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first, err := NewRunner(f.group("us.group"), testOpts(f.brokers, WithUnordered(2))...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- first.Run(runCtx) }()
	waitFor(t, ctx, "the records behind the one in hand handled", func() bool { return f.times(n-1) == 1 })
	stop()
	select {
	case err := <-done:
		t.Fatalf("the runner returned (%v) with a record in hand", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(f.hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := f.committed(t, ctx, "us.group"); c != n {
		t.Fatalf("committed %d at the stop, want %d", c, n)
	}
	for i := range n {
		if f.times(i) != 1 {
			t.Fatalf("record %d handled %d times", i, f.times(i))
		}
	}
}

// TestRunnerUnorderedKilledWhileReleasing: a runner killed while it hands a partition over
// (waiting for its record in hand, in a call that does not heed the kill, as a Tesseract
// call does not) stops at once: Kill and the release return, nothing is committed.
func TestRunnerUnorderedKilledWhileReleasing(t *testing.T) {
	const n = 3
	f := newUnorderedFixture(t, "ur", n)
	f.deaf = true
	defer close(f.hold)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := NewRunner(f.group("ur.group"), testOpts(f.brokers, WithUnordered(2))...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, ctx, "the records behind the one in hand handled", func() bool { return f.times(n-1) == 1 })
	released := make(chan struct{})
	go func() {
		r.release(ctx, map[string][]int32{f.in: {0}}, false)
		close(released)
	}()
	time.Sleep(50 * time.Millisecond) // the release waits for the record in hand
	killed := make(chan struct{})
	go func() {
		r.Kill()
		close(killed)
	}()
	for what, ch := range map[string]chan struct{}{"Kill": killed, "the release": released} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still waits for the record in hand", what)
		}
	}
	if c := f.committed(t, ctx, "ur.group"); c > 0 {
		t.Fatalf("committed %d past the record in hand", c)
	}
	if f.times(0) != 0 {
		t.Fatal("the record in hand was finished")
	}
}

// TestRunnerKilledWaitingForATurn: a runner killed while its record waits for a background
// turn (every turn held elsewhere) returns at once without calling the handler, committing or
// dead-lettering anything; its successor, once a turn is free, handles every record once.
func TestRunnerKilledWaitingForATurn(t *testing.T) {
	const n = 3
	f := newUnorderedFixture(t, "bt", n)
	close(f.hold)
	ensure(t, f.brokers, TopicSpec{Name: f.in + ".dlq", Partitions: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bg := NewBackground(1, 0)
	defer bg.Close()
	holding, release := make(chan struct{}), make(chan struct{})
	go bg.run(ctx, "elsewhere", func(ctx context.Context) {
		_ = Compute(ctx)
		close(holding)
		<-release
	})
	<-holding
	// The fixture's handler, taking its turn first as one made by Handle does.
	g := f.group("bt.group")
	handle := g.Handler
	g.Handler = func(ctx context.Context, rec *Record) ([]Output, error) {
		if err := Compute(ctx); err != nil {
			return nil, err
		}
		return handle(ctx, rec)
	}
	first, err := NewRunner(g, testOpts(f.brokers, WithBackground(bg))...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	waitFor(t, ctx, "the first record waiting for a turn", func() bool {
		bg.mu.Lock()
		defer bg.mu.Unlock()
		return len(bg.waiting) == 1
	})
	first.Kill()
	if err := <-done; err != ErrKilled {
		t.Fatalf("killed runner returned %v", err)
	}
	if c := f.committed(t, ctx, "bt.group"); c > 0 {
		t.Fatalf("committed %d with no record handled", c)
	}
	if dlq := readAll(t, f.brokers, f.in+".dlq"); len(dlq) != 0 {
		t.Fatalf("%d records dead-lettered by a kill", len(dlq))
	}
	for i := range n {
		if f.times(i) != 0 {
			t.Fatalf("record %d handled without a turn", i)
		}
	}
	close(release)
	second, err := NewRunner(g, testOpts(f.brokers, WithBackground(bg))...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	go func() { done <- second.Run(runCtx) }()
	waitFor(t, ctx, "every record handled by the successor", func() bool { return f.times(n-1) == 1 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if f.times(i) != 1 {
			t.Fatalf("record %d handled %d times", i, f.times(i))
		}
	}
}
