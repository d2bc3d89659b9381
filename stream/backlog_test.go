package stream

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// lagOf is a reading of one group with one partition of topic "in".
func lagOf(group string, end, lag int64) kadm.DescribedGroupLags {
	return kadm.DescribedGroupLags{group: {Group: group, Lag: kadm.GroupLag{
		"in": {0: {Topic: "in", Partition: 0, End: kadm.ListedOffset{Offset: end}, Lag: lag}},
	}}}
}

// TestBacklogEstimate folds readings in by hand: a group getting through its lag is
// estimated at lag over its rate; one with work and no progress at the time it has been
// stuck; one with no lag at zero.
func TestBacklogEstimate(t *testing.T) {
	b, err := NewBacklog([]string{"g"}, time.Second, WithBrokers([]string{"127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	clock := t0
	b.now = func() time.Time { return clock }
	b.sample(lagOf("g", 100, 10), t0)
	if w := b.Wait("g"); w != time.Second {
		t.Fatalf("work seen once, no rate yet: wait %v, want one interval", w)
	}
	// One second later: 4 more arrived, 6 still wait, so 8 were handled: 8/s, 6 records → 0.75 s.
	clock = t0.Add(time.Second)
	b.sample(lagOf("g", 104, 6), clock)
	if w := b.Wait("g"); w != 750*time.Millisecond {
		t.Fatalf("wait %v, want 750ms (6 records at 8/s)", w)
	}
	// Two records announced count at once (8 at 8/s), and are settled when they arrive.
	b.Expect("g", 2)
	if w := b.Wait("g"); w != time.Second {
		t.Fatalf("with 2 announced: wait %v, want 1s", w)
	}
	clock = t0.Add(1500 * time.Millisecond)
	// They arrived, and 2 were handled in the half second: 4/s, the rate 0.3×4 + 0.7×8 = 6.8/s,
	// 6 records wait (0.88 s; 1.18 s if the announced 2 still counted).
	b.sample(lagOf("g", 106, 6), clock)
	if w, want := b.Wait("g").Seconds(), 6/6.8; math.Abs(w-want) > 1e-6 {
		t.Fatalf("announced records still counted after arriving: wait %.3fs, want %.3fs", w, want)
	}
	// Then nothing is handled for three seconds: stuck since the reading at t0+1s.
	clock = t0.Add(2 * time.Second)
	b.sample(lagOf("g", 106, 6), clock)
	clock = t0.Add(4500 * time.Millisecond)
	b.sample(lagOf("g", 106, 6), clock)
	if w := b.Wait("g"); w != 3*time.Second {
		t.Fatalf("stuck group: wait %v, want 3s", w)
	}
	clock = t0.Add(5 * time.Second)
	b.sample(lagOf("g", 106, 0), clock)
	if w := b.Wait("g"); w != 0 {
		t.Fatalf("drained group: wait %v, want 0", w)
	}
	b.Expect("g", 5) // announced records that never come stop counting after expectTTL
	clock = clock.Add(expectTTL + time.Second)
	b.sample(lagOf("g", 106, 0), clock)
	if w := b.Wait("g"); w != 0 {
		t.Fatalf("expired announcements: wait %v, want 0", w)
	}
	if w := b.Wait("other"); w != 0 {
		t.Fatalf("unknown group: wait %v, want 0", w)
	}
}

// TestBacklogOfRunner watches a real group on the embedded broker: while its handler is
// held, the group's records wait and the estimate grows; once it is let go and has
// committed everything, the estimate is zero again.
func TestBacklogOfRunner(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "b.in", Partitions: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	release := make(chan struct{})
	g := Group{Name: "b.group", Inputs: []string{"b.in"}, Handler: func(ctx context.Context, _ *Record) ([]Output, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	}}
	r, err := NewRunner(g, testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRunner := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- r.Run(runCtx) }()
	defer func() {
		close(release)
		stopRunner()
		<-runDone
	}()

	b, err := NewBacklog([]string{"b.group"}, 50*time.Millisecond, testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	bctx, stopBacklog := context.WithCancel(ctx)
	defer stopBacklog()
	go func() { _ = b.Run(bctx) }()

	p := testProducer(t, brokers)
	var outs []Output
	for i := range 6 {
		outs = append(outs, Output{Topic: "b.in", Key: []byte("k" + strconv.Itoa(i)), Value: []byte("v")})
	}
	if err := p.Produce(ctx, outs...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a held group estimated at 300ms or more", func() bool {
		return b.Wait("b.group") >= 300*time.Millisecond
	})
	for range 6 {
		release <- struct{}{}
	}
	waitFor(t, ctx, "a drained group estimated at zero", func() bool {
		return b.Wait("b.group") == 0
	})
}

// TestBacklogPartitionMissing: a partition missing from one reading (its leader moving) is
// neither records handled nor records arrived; a group missing from a reading keeps its
// estimate while what it was told to expect still expires.
func TestBacklogPartitionMissing(t *testing.T) {
	b, err := NewBacklog([]string{"g"}, time.Second, WithBrokers([]string{"127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	b.now = func() time.Time { return t0.Add(time.Second) }
	two := kadm.DescribedGroupLags{"g": {Group: "g", Lag: kadm.GroupLag{"in": {
		0: {Topic: "in", Partition: 0, End: kadm.ListedOffset{Offset: 100}, Lag: 10},
		1: {Topic: "in", Partition: 1, End: kadm.ListedOffset{Offset: 100}, Lag: 10},
	}}}}
	b.sample(two, t0)
	// Partition 1 unread a second later; partition 0 handled 5 of its 10: 5/s, 5 waiting.
	b.sample(lagOf("g", 100, 5), t0.Add(time.Second))
	if w := b.Wait("g"); w != time.Second {
		t.Fatalf("wait %v, want 1s (5 records at 5/s; 15/s if the unread partition counted as handled)", w)
	}
	b.Expect("g", 5)
	b.now = func() time.Time { return t0.Add(10 * time.Second) }
	b.sample(kadm.DescribedGroupLags{}, t0.Add(10*time.Second)) // the group not in the reading
	if w := b.Wait("g"); w != time.Second {
		t.Fatalf("group missing from a reading: wait %v, want the last estimate, 1s, its announced records expired", w)
	}
}
