package stream

import (
	"context"
	"testing"
	"time"
)

// TestHealth: a Health given to the runners of a process reports the brokers answering and,
// per group, the partitions its member holds — all of them alone, a share once a second
// member (another process, another Health) joins, and none for a group never started.
func TestHealth(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "h.in", Partitions: 4}, TopicSpec{Name: "s.in", Partitions: 4},
		TopicSpec{Name: "s.out", Partitions: 4}, TopicSpec{Name: "s.table", Partitions: 4, Compacted: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	start := func(h *Health) context.CancelFunc {
		g := Group{Name: "h.group", Inputs: []string{"h.in"}, Handler: func(context.Context, *Record) ([]Output, error) { return nil, nil }}
		r, err := NewRunner(g, testOpts(brokers, WithHealth(h))...)
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		go func() { _ = r.Run(runCtx) }()
		return stop
	}
	a := NewHealth()
	if st := a.Status(); !st.BrokerAnswered.IsZero() || len(st.Groups) != 0 {
		t.Fatalf("a new Health: %+v", st)
	}
	stopA := start(a)
	defer stopA()
	sr, err := NewStatefulRunner(counterGroup(&counter{}), testOpts(brokers, WithHealth(a))...)
	if err != nil {
		t.Fatal(err)
	}
	srCtx, stopSR := context.WithCancel(ctx)
	defer stopSR()
	go func() { _ = sr.Run(srCtx) }()

	held := func(h *Health, group, topic string) (bool, int) {
		g := h.Status().Groups[group]
		return g.Joined, len(g.Partitions[topic])
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("%s: %+v", what, a.Status())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("both members hold every partition", func() bool {
		j1, n1 := held(a, "h.group", "h.in")
		j2, n2 := held(a, "s.counter", "s.in")
		return j1 && n1 == 4 && j2 && n2 == 4
	})
	if since := time.Since(a.Status().BrokerAnswered); since > 10*time.Second {
		t.Errorf("brokers last answered %v ago", since)
	}

	b := NewHealth()
	stopB := start(b)
	defer stopB()
	waitFor("the partitions shared with a second member", func() bool {
		ja, na := held(a, "h.group", "h.in")
		jb, nb := held(b, "h.group", "h.in")
		return ja && jb && na > 0 && nb > 0 && na+nb == 4
	})
	if _, ok := b.Status().Groups["s.counter"]; ok {
		t.Error("the second Health reports a group it has no member of")
	}
}
