package stream

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestHealth: a Health given to the runners of a process reports the brokers answering and
// each group member in its group, a member that left out of it; a member whose partitions go
// to a second member (another process) stops reporting their lag.
func TestHealth(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "h.in", Partitions: 4}, TopicSpec{Name: "s.in", Partitions: 4},
		TopicSpec{Name: "s.out", Partitions: 4}, TopicSpec{Name: "s.table", Partitions: 4, Compacted: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var outs []Output
	for i := range 40 {
		outs = append(outs, Output{Topic: "h.in", Key: []byte("k" + strconv.Itoa(i)), Value: []byte("v")})
	}
	if err := testProducer(t, brokers).Produce(ctx, outs...); err != nil {
		t.Fatal(err)
	}

	handled := make(chan struct{}, 100)
	start := func(h *Health, m *Metrics) context.CancelFunc {
		g := Group{Name: "h.group", Inputs: []string{"h.in"}, Handler: func(context.Context, *Record) ([]Output, error) {
			handled <- struct{}{}
			return nil, nil
		}}
		r, err := NewRunner(g, testOpts(brokers, WithHealth(h), WithMetrics(m))...)
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		go func() { _ = r.Run(runCtx) }()
		return stop
	}
	a, regA := NewHealth(), prometheus.NewRegistry()
	if st := a.Status(); !st.BrokerAnswered.IsZero() || len(st.Groups) != 0 {
		t.Fatalf("a new Health: %+v", st)
	}
	stopA := start(a, NewMetrics(regA))
	defer stopA()
	sr, err := NewStatefulRunner(counterGroup(&counter{}), testOpts(brokers, WithHealth(a))...)
	if err != nil {
		t.Fatal(err)
	}
	srCtx, stopSR := context.WithCancel(ctx)
	defer stopSR()
	go func() { _ = sr.Run(srCtx) }()

	waitFor := func(what string, h *Health, ok func(HealthStatus) bool) {
		t.Helper()
		for !ok(h.Status()) {
			if ctx.Err() != nil {
				t.Fatalf("%s: %+v", what, h.Status())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("both members joined", a, func(st HealthStatus) bool {
		return st.Groups["h.group"].Joined && st.Groups["s.counter"].Joined
	})
	if since := time.Since(a.Status().BrokerAnswered); since > 10*time.Second {
		t.Errorf("brokers last answered %v ago", since)
	}
	for range 40 {
		select {
		case <-handled:
		case <-ctx.Done():
			t.Fatal("the records were not handled")
		}
	}
	if n := testutil.CollectAndCount(regA, "idstream_consumer_lag"); n != 4 {
		t.Fatalf("member A reports the lag of %d partitions, want 4", n)
	}

	b := NewHealth()
	stopB := start(b, NewMetrics(prometheus.NewRegistry()))
	waitFor("the second member joined", b, func(st HealthStatus) bool { return st.Groups["h.group"].Joined })
	if _, ok := b.Status().Groups["s.counter"]; ok {
		t.Error("the second Health reports a group it has no member of")
	}
	deadline := time.Now().Add(10 * time.Second)
	for testutil.CollectAndCount(regA, "idstream_consumer_lag") == 4 {
		if time.Now().After(deadline) {
			t.Fatal("member A still reports the lag of all 4 partitions after sharing them")
		}
		time.Sleep(20 * time.Millisecond)
	}

	stopB()
	waitFor("the stopped member out of its group", b, func(st HealthStatus) bool { return !st.Groups["h.group"].Joined })
}

// TestHealthMemberLost: a member whose group the broker no longer lets it take part in
// (every heartbeat and join refused) is reported out of its group, though its client still
// holds its last generation.
func TestHealthMemberLost(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	ensure(t, brokers, TopicSpec{Name: "l.in", Partitions: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := NewHealth()
	r, err := NewRunner(Group{Name: "l.group", Inputs: []string{"l.in"}, Handler: func(context.Context, *Record) ([]Output, error) { return nil, nil }},
		testOpts(brokers, WithHealth(h))...)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.Run(ctx) }()
	for !h.Status().Groups["l.group"].Joined {
		if ctx.Err() != nil {
			t.Fatal("never joined")
		}
		time.Sleep(20 * time.Millisecond)
	}
	refuse := func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind()
		switch r := resp.(type) {
		case *kmsg.HeartbeatResponse:
			r.ErrorCode = kerr.GroupAuthorizationFailed.Code
		case *kmsg.JoinGroupResponse:
			r.ErrorCode = kerr.GroupAuthorizationFailed.Code
		}
		return resp, nil, true
	}
	c.ControlKey(int16(kmsg.Heartbeat), refuse)
	c.ControlKey(int16(kmsg.JoinGroup), refuse)
	// The runner runs on (ctx): only losing its group may make it report out.
	deadline := time.Now().Add(10 * time.Second)
	for h.Status().Groups["l.group"].Joined {
		if time.Now().After(deadline) {
			t.Fatalf("still joined 10 s after its heartbeats were refused: %+v", h.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
