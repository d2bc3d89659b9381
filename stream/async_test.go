package stream

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// asyncMember runs one AsyncRunner of group "a" over a.in whose Take records every offset
// taken and finishes at once those finish says.
type asyncMember struct {
	r        *AsyncRunner
	mu       sync.Mutex
	taken    []int64
	recs     map[int64]*Record // the last record taken at each offset
	released [][]int32
}

func startAsync(t *testing.T, brokers []string, finish func(off int64) bool) (*asyncMember, context.CancelFunc, chan error) {
	t.Helper()
	m := &asyncMember{recs: make(map[int64]*Record)}
	r, err := NewAsyncRunner(AsyncGroup{
		Name: "a", Input: "a.in", CommitInterval: 20 * time.Millisecond,
		Take: func(rec *Record) {
			m.mu.Lock()
			m.taken = append(m.taken, rec.Offset)
			m.recs[rec.Offset] = rec
			m.mu.Unlock()
			if finish(rec.Offset) {
				m.r.Done(rec)
			}
		},
		Release: func(parts []int32, lost bool) {
			m.mu.Lock()
			m.released = append(m.released, parts)
			m.mu.Unlock()
		},
	}, testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	m.r = r
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return m, cancel, done
}

func (m *asyncMember) takenNow() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.taken)
}

// committedOffset is group a's committed offset of a.in/0, -1 when none.
func committedOffset(t *testing.T, brokers []string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("a.in", 0); ok {
		return o.At
	}
	return -1
}

// TestAsyncRunner: records finish out of order; the committed offset stays at the lowest
// unfinished one (not at the last finished), Run releases its partition when it ends, a
// later member is handed exactly the records from the lowest unfinished on, and only its
// own record finishes a record: a late Done of one taken before the restart changes nothing.
func TestAsyncRunner(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "a.in", Partitions: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := testProducer(t, brokers)
	for range 5 {
		if err := p.Produce(ctx, Output{Topic: "a.in", Key: []byte("k"), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}

	// Offsets 0, 1 and 3 finish; 2 and 4 stay pending.
	first, stop, done := startAsync(t, brokers, func(off int64) bool { return off != 2 && off != 4 })
	for len(first.takenNow()) < 5 || committedOffset(t, brokers) != 2 {
		if ctx.Err() != nil {
			t.Fatalf("taken %v, committed %d; want 5 records taken and offset 2 committed", first.takenNow(), committedOffset(t, brokers))
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := first.released; len(got) != 1 || !slices.Equal(got[0], []int32{0}) {
		t.Fatalf("released %v, want [[0]]", got)
	}
	if got := committedOffset(t, brokers); got != 2 {
		t.Fatalf("committed %d after Run ended, want 2", got)
	}
	// The second member is handed 2, 3 and 4 again; it finishes 2 and 3 at once, and 4 only
	// when its own record of 4 is finished: finishing a copy of it does nothing.
	second, stop2, done2 := startAsync(t, brokers, func(off int64) bool { return off != 4 })
	defer func() { stop2(); <-done2 }()
	for committedOffset(t, brokers) != 4 {
		if ctx.Err() != nil {
			t.Fatalf("second member took %v, committed %d; want 4", second.takenNow(), committedOffset(t, brokers))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := second.takenNow(); !slices.Equal(got, []int64{2, 3, 4}) {
		t.Fatalf("second member took %v, want [2 3 4]", got)
	}
	second.r.Done(first.recs[4]) // taken by the first member, before the restart
	second.r.Done(&Record{Topic: "a.in", Partition: 0, Offset: 4})
	time.Sleep(200 * time.Millisecond) // ten commit intervals
	if got := committedOffset(t, brokers); got != 4 {
		t.Fatalf("committed %d after stale Done calls, want 4", got)
	}
	second.mu.Lock()
	own := second.recs[4]
	second.mu.Unlock()
	second.r.Done(own)
	for committedOffset(t, brokers) != 5 {
		if ctx.Err() != nil {
			t.Fatalf("committed %d after Done, want 5", committedOffset(t, brokers))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAsyncRunnerRebalance: two members share a group while work is in flight; the first
// hands partitions over when the second joins (its Release waits for the work started on
// them), and in the end every record has been finished by someone and the group's offsets
// reach the end of every partition.
func TestAsyncRunnerRebalance(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "b.in", Partitions: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := testProducer(t, brokers)
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := p.Produce(ctx, Output{Topic: "b.in", Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	type key struct {
		part int32
		off  int64
	}
	var (
		mu       sync.Mutex
		finished = map[key]bool{}
		released int
	)
	member := func() (context.CancelFunc, chan error) {
		var inflight [4]sync.WaitGroup
		var r *AsyncRunner
		r, err := NewAsyncRunner(AsyncGroup{
			Name: "b", Input: "b.in", CommitInterval: 20 * time.Millisecond,
			Take: func(rec *Record) {
				inflight[rec.Partition].Go(func() {
					time.Sleep(100 * time.Millisecond) // work in flight when the rebalance comes
					mu.Lock()
					finished[key{rec.Partition, rec.Offset}] = true
					mu.Unlock()
					r.Done(rec)
				})
			},
			Release: func(parts []int32, lost bool) {
				mu.Lock()
				released++
				mu.Unlock()
				for _, p := range parts {
					inflight[p].Wait()
				}
			},
		}, testOpts(brokers)...)
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		return stop, done
	}
	produce(0, 20)
	stopA, doneA := member()
	for {
		mu.Lock()
		n := len(finished)
		mu.Unlock()
		if n > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the first member finished nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopB, doneB := member()
	produce(20, 40)
	committed := func() (sum int64) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		offs, err := kadm.NewClient(cl).FetchOffsets(ctx, "b")
		if err != nil {
			return 0
		}
		offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
		return sum
	}
	handedOver := func() bool { // before either member stops: the rebalance's
		mu.Lock()
		defer mu.Unlock()
		return released > 0
	}
	for committed() != 40 || !handedOver() {
		if ctx.Err() != nil {
			t.Fatalf("committed %d of 40, partitions handed over: %v", committed(), handedOver())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopA()
	stopB()
	if err := <-doneA; err != nil {
		t.Errorf("first member: %v", err)
	}
	if err := <-doneB; err != nil {
		t.Errorf("second member: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(finished) != 40 {
		t.Errorf("%d of 40 records finished", len(finished))
	}
}
