package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// batchRecorder is a BatchHandler that records every batch it was handed and fails while
// failing returns true.
type batchRecorder struct {
	mu      sync.Mutex
	calls   [][]string // values of each call, successful or not
	ok      [][]string // values of each successful call
	failing func(call int) bool
	got     chan struct{} // signalled after every successful call
}

func newBatchRecorder(failing func(int) bool) *batchRecorder {
	if failing == nil {
		failing = func(int) bool { return false }
	}
	return &batchRecorder{failing: failing, got: make(chan struct{}, 1000)}
}

func (b *batchRecorder) handle(_ context.Context, recs []*Record) error {
	vals := make([]string, len(recs))
	for i, r := range recs {
		vals[i] = string(r.Value)
	}
	b.mu.Lock()
	b.calls = append(b.calls, vals)
	call := len(b.calls)
	fail := b.failing(call)
	if !fail {
		b.ok = append(b.ok, vals)
	}
	b.mu.Unlock()
	if fail {
		return fmt.Errorf("call %d: sink unavailable", call)
	}
	b.got <- struct{}{}
	return nil
}

// delivered returns the values of every successful call, flattened.
func (b *batchRecorder) delivered() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, c := range b.ok {
		out = append(out, c...)
	}
	return out
}

func (b *batchRecorder) waitFor(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for len(b.delivered()) < n {
		select {
		case <-b.got:
		case <-timeout:
			t.Fatalf("handler saw %d records, want %d", len(b.delivered()), n)
		}
	}
}

func produceValues(t *testing.T, brokers []string, topic string, from, to int) {
	t.Helper()
	p := testProducer(t, brokers)
	var outs []Output
	for i := from; i < to; i++ {
		outs = append(outs, Output{Topic: topic, Key: []byte("k" + strconv.Itoa(i%7)), Value: []byte(strconv.Itoa(i))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Produce(ctx, outs...); err != nil {
		t.Fatal(err)
	}
}

func runBatch(t *testing.T, g BatchGroup, brokers []string) (*BatchRunner, context.CancelFunc, chan error) {
	t.Helper()
	r, err := NewBatchRunner(g, testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return r, cancel, done
}

func exactlyOnce(t *testing.T, got []string, from, to int) {
	t.Helper()
	seen := make(map[string]int)
	for _, v := range got {
		seen[v]++
	}
	for i := from; i < to; i++ {
		if n := seen[strconv.Itoa(i)]; n != 1 {
			t.Errorf("record %d handed over %d times, want 1", i, n)
		}
	}
	if len(got) != to-from {
		t.Errorf("handed over %d records, want %d", len(got), to-from)
	}
}

func TestBatchRunnerBatchesBySizeAndCommits(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "batch.in", Partitions: 3})
	produceValues(t, brokers, "batch.in", 0, 95)

	rec := newBatchRecorder(nil)
	g := BatchGroup{Name: "batcher", Inputs: []string{"batch.in"}, MaxRecords: 10, MaxWait: 200 * time.Millisecond, Handler: rec.handle}
	_, cancel, done := runBatch(t, g, brokers)
	rec.waitFor(t, 95)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for i, c := range rec.ok {
		if len(c) > 10 {
			t.Errorf("batch %d holds %d records, more than MaxRecords 10", i, len(c))
		}
	}
	exactlyOnce(t, rec.delivered(), 0, 95)

	// A new member of the same group starts after the committed offsets: only new records.
	produceValues(t, brokers, "batch.in", 95, 100)
	rec2 := newBatchRecorder(nil)
	g.Handler = rec2.handle
	_, cancel2, done2 := runBatch(t, g, brokers)
	rec2.waitFor(t, 5)
	cancel2()
	if err := <-done2; err != nil {
		t.Fatalf("run: %v", err)
	}
	exactlyOnce(t, rec2.delivered(), 95, 100)
}

func TestBatchRunnerFlushesPartialBatchAfterMaxWait(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "batch.in", Partitions: 1})
	rec := newBatchRecorder(nil)
	g := BatchGroup{Name: "batcher", Inputs: []string{"batch.in"}, MaxRecords: 1000, MaxWait: 100 * time.Millisecond, Handler: rec.handle}
	_, cancel, done := runBatch(t, g, brokers)
	defer func() { cancel(); <-done }()
	produceValues(t, brokers, "batch.in", 0, 3)
	rec.waitFor(t, 3) // far fewer than MaxRecords: handed over because MaxWait passed
	exactlyOnce(t, rec.delivered(), 0, 3)
}

func TestBatchRunnerRetriesSameBatchWithoutCommitting(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "batch.in", Partitions: 1})
	produceValues(t, brokers, "batch.in", 0, 20)

	// The handler fails on its first 4 calls: every try must get the very same batch.
	rec := newBatchRecorder(func(call int) bool { return call <= 4 })
	g := BatchGroup{Name: "batcher", Inputs: []string{"batch.in"}, MaxRecords: 50, MaxWait: 300 * time.Millisecond, Handler: rec.handle}
	_, cancel, done := runBatch(t, g, brokers)
	rec.waitFor(t, 20)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	rec.mu.Lock()
	first := fmt.Sprint(rec.calls[0])
	for i := 1; i <= 4; i++ {
		if got := fmt.Sprint(rec.calls[i]); got != first {
			t.Errorf("try %d got %s, want the failed batch %s again", i+1, got, first)
		}
	}
	rec.mu.Unlock()
	exactlyOnce(t, rec.delivered(), 0, 20)
}

func TestBatchRunnerNeverCommitsAFailingBatch(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "batch.in", Partitions: 2})
	produceValues(t, brokers, "batch.in", 0, 30)

	// The sink is down for good: the member keeps retrying until it crashes.
	var calls sync.WaitGroup
	calls.Add(3)
	var once sync.Map
	rec := newBatchRecorder(func(call int) bool {
		if _, loaded := once.LoadOrStore(call, true); !loaded && call <= 3 {
			calls.Done()
		}
		return true
	})
	g := BatchGroup{Name: "batcher", Inputs: []string{"batch.in"}, MaxRecords: 100, MaxWait: 100 * time.Millisecond, Handler: rec.handle}
	r, _, done := runBatch(t, g, brokers)
	calls.Wait()
	r.Kill()
	if err := <-done; !errors.Is(err, ErrKilled) {
		t.Fatalf("run after kill: %v, want ErrKilled", err)
	}
	if n := len(rec.delivered()); n != 0 {
		t.Fatalf("%d records delivered by a failing handler", n)
	}

	// Its successor gets every record: nothing was committed, nothing dropped.
	rec2 := newBatchRecorder(nil)
	g.Handler = rec2.handle
	_, cancel2, done2 := runBatch(t, g, brokers)
	rec2.waitFor(t, 30)
	cancel2()
	if err := <-done2; err != nil {
		t.Fatalf("run: %v", err)
	}
	exactlyOnce(t, rec2.delivered(), 0, 30)
}

func TestNewBatchRunnerValidates(t *testing.T) {
	h := func(context.Context, []*Record) error { return nil }
	for name, g := range map[string]BatchGroup{
		"no name":     {Inputs: []string{"a"}, Handler: h},
		"no inputs":   {Name: "g", Handler: h},
		"no handler":  {Name: "g", Inputs: []string{"a"}},
		"negative ms": {Name: "g", Inputs: []string{"a"}, Handler: h, MaxWait: -1},
	} {
		if _, err := NewBatchRunner(g, WithBrokers([]string{"127.0.0.1:1"})); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := NewBatchRunner(BatchGroup{Name: "g", Inputs: []string{"a"}, Handler: h}); err == nil {
		t.Error("no brokers: want an error")
	}
}
