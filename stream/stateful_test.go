package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// counter is the state of a counterGroup member.
type counter struct {
	handled atomic.Int64
	// holdAt > 0 makes the handler's holdAt-th call block until its context ends (Kill),
	// so that the member dies with a transaction open.
	holdAt int64
}

// counterGroup is a StatefulGroup counting events per key: the table holds the count, and
// every event produces one record to "s.out".
func counterGroup(c *counter) StatefulGroup {
	return StatefulGroup{
		Name: "s.counter", Inputs: []string{"s.in"}, Outputs: []string{"s.out"}, Table: "s.table",
		Handler: func(ctx context.Context, rec *Record, table Table) ([]Output, error) {
			n := 0
			if v, ok := table.Get(rec.Key); ok {
				var err error
				if n, err = strconv.Atoi(string(v)); err != nil {
					return nil, fmt.Errorf("bad count: %w", err)
				}
			}
			n++
			if c.handled.Add(1) == c.holdAt {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return []Output{
				{Topic: "s.table", Key: rec.Key, Value: []byte(strconv.Itoa(n))},
				{Topic: "s.out", Key: rec.Key, Value: rec.Value},
			}, nil
		},
	}
}

func tableSum(tb Table) int {
	sum := 0
	tb.Range(func(_, v []byte) bool {
		n, _ := strconv.Atoi(string(v))
		sum += n
		return true
	})
	return sum
}

// TestStatefulExactlyOnceAcrossCrash kills a member (no commit, no leave) and checks that
// its successor restores the table and ends with exact counts and exactly one output per
// event:
//   - idle: the member had committed everything; the successor gets no input record at all
//     and must still restore its table (it used to wait for a record that never came);
//   - open-transaction: the member dies with a transaction holding table writes open; the
//     successor (another transactional id) waits until the broker aborts it (transaction
//     timeout 2s in testOpts);
//   - open-transaction-same-id: the successor reuses the dead member's transactional id and
//     fences its transaction at once. The dead member's transaction timeout is longer than
//     the test's deadline, so the test only passes if fencing works.
func TestStatefulExactlyOnceAcrossCrash(t *testing.T) {
	for _, tc := range []struct {
		name   string
		open   bool
		sameID bool
	}{
		{"idle", false, false},
		{"open-transaction", true, false},
		{"open-transaction-same-id", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) { testCrash(t, tc.open, tc.sameID) })
	}
}

func testCrash(t *testing.T, openTxn, sameID bool) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers,
		TopicSpec{Name: "s.in", Partitions: 4},
		TopicSpec{Name: "s.out", Partitions: 4},
		TopicSpec{Name: "s.table", Partitions: 4, Compacted: true})
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	adm := testAdmin(t, brokers)

	const n, keys = 600, 37
	want := map[string]int{}
	p := testProducer(t, brokers)
	produce := func(from, to int) {
		var outs []Output
		for i := from; i < to; i++ {
			k := fmt.Sprintf("key-%d", i%keys)
			want[k]++
			outs = append(outs, Output{Topic: "s.in", Key: []byte(k), Value: []byte(strconv.Itoa(i))})
		}
		if err := p.Produce(ctx, outs...); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, n/2)

	cA := &counter{}
	var optsA []Option
	if openTxn {
		cA.holdAt = n/2 + 10
	}
	if sameID {
		optsA = append(optsA, WithTransactionalID("s.counter-member-0"),
			WithKgoOpts(kgo.TransactionTimeout(time.Minute)))
	}
	mA := NewMetrics(nil)
	a, err := NewStatefulRunner(counterGroup(cA), testOpts(brokers, append(optsA, WithMetrics(mA))...)...)
	if err != nil {
		t.Fatal(err)
	}
	errA := make(chan error, 1)
	go func() { errA <- a.Run(ctx) }()
	for counterValue(t, mA.transactions.WithLabelValues("s.counter", "committed")) < 1 {
		if ctx.Err() != nil {
			t.Fatal("member A made no progress")
		}
		time.Sleep(5 * time.Millisecond)
	}
	produce(n/2, n)
	if openTxn {
		// Kill once A's open transaction has table writes on the broker (end offset above
		// the last stable offset) and A is stuck on the next record.
		for cA.handled.Load() < cA.holdAt || !openTransaction(ctx, t, adm, "s.table") {
			if ctx.Err() != nil {
				t.Fatal("member A did not open a transaction on the table")
			}
			time.Sleep(5 * time.Millisecond)
		}
	} else {
		for committedSum(ctx, t, adm, "s.counter", "s.in") < n {
			if ctx.Err() != nil {
				t.Fatal("member A did not commit every input")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	a.Kill()
	if err := <-errA; !errors.Is(err, ErrKilled) {
		t.Fatalf("killed member returned %v", err)
	}

	killed := time.Now()
	cB := &counter{}
	var optsB []Option
	if sameID {
		optsB = append(optsB, WithTransactionalID("s.counter-member-0"))
	}
	healthB := NewHealth()
	b, err := NewStatefulRunner(counterGroup(cB), testOpts(brokers, append(optsB, WithHealth(healthB))...)...)
	if err != nil {
		t.Fatal(err)
	}
	bctx, stopB := context.WithCancel(ctx)
	errB := make(chan error, 1)
	go func() { errB <- b.Run(bctx) }()
	restoring := 0 // the most partitions B reported waiting for their table
	for tableSum(b.Table()) < n {
		if ctx.Err() != nil {
			t.Fatalf("member B did not catch up: table sum %d of %d", tableSum(b.Table()), n)
		}
		restoring = max(restoring, healthB.Status().Groups["s.counter"].Restoring)
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(killed)
	// B's restore waits for the broker to abort A's transaction (2 s): its Health says so
	// meanwhile, and nothing is left to restore once it caught up.
	if openTxn && !sameID && restoring == 0 {
		t.Error("member B never reported a table partition waiting for its restore")
	}
	if st := healthB.Status().Groups["s.counter"]; !st.Joined || st.Restoring != 0 {
		t.Errorf("member B after catching up: %+v", st)
	}
	stopB()
	if err := <-errB; err != nil {
		t.Fatalf("member B: %v", err)
	}

	latest := map[string]string{}
	for _, r := range readAll(t, brokers, "s.table") {
		latest[string(r.Key)] = string(r.Value)
	}
	if len(latest) != keys {
		t.Fatalf("table has %d keys, want %d", len(latest), keys)
	}
	for k, c := range want {
		if latest[k] != strconv.Itoa(c) {
			t.Errorf("key %s: table count %s, want %d", k, latest[k], c)
		}
	}
	out := readAll(t, brokers, "s.out")
	seen := map[string]int{}
	for _, r := range out {
		seen[string(r.Value)]++
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("event %s output %d times", v, c)
		}
	}
	if len(out) != n || len(seen) != n {
		t.Fatalf("out has %d records (%d distinct), want %d", len(out), len(seen), n)
	}
	if openTxn && cB.handled.Load() == 0 {
		t.Error("member B handled nothing although A died with records uncommitted")
	}
	t.Logf("member A handled %d (uncommitted work lost in the crash), member B %d; B caught up %v after the kill",
		cA.handled.Load(), cB.handled.Load(), took.Round(time.Millisecond))
}

func testAdmin(t testing.TB, brokers []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// openTransaction reports whether some partition of topic has an open transaction.
func openTransaction(ctx context.Context, t testing.TB, adm *kadm.Client, topic string) bool {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	stable, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	open := false
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := stable.Lookup(topic, o.Partition); ok && s.Offset < o.Offset {
			open = true
		}
	})
	return open
}

// committedSum returns the sum of group's committed offsets on topic.
func committedSum(ctx context.Context, t testing.TB, adm *kadm.Client, group, topic string) int64 {
	t.Helper()
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At > 0 {
			sum += o.At
		}
	})
	return sum
}
