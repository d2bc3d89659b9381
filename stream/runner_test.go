package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRunnerAtLeastOnceAndDLQ(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers,
		TopicSpec{Name: "r.in", Partitions: 3},
		TopicSpec{Name: "r.out", Partitions: 3},
		TopicSpec{Name: "r.in.dlq", Partitions: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const n = 60
	var outs []Output
	for i := 0; i < n; i++ {
		v := strconv.Itoa(i)
		if i == 17 {
			v = "bad"
		}
		outs = append(outs, Output{Topic: "r.in", Key: []byte(fmt.Sprintf("k%d", i%7)), Value: []byte(v)})
	}
	p := testProducer(t, brokers)
	if err := p.Produce(ctx, outs...); err != nil {
		t.Fatal(err)
	}

	var seen atomic.Int64
	done := make(chan struct{})
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	g := Group{
		Name: "r.group", Inputs: []string{"r.in"}, Outputs: []string{"r.out"},
		Handler: func(_ context.Context, rec *Record) ([]Output, error) {
			if string(rec.Value) == "bad" {
				return nil, errors.New("cannot parse")
			}
			if seen.Add(1) == n-1 {
				close(done)
			}
			return []Output{{Topic: "r.out", Key: rec.Key, Value: rec.Value,
				Headers: []Header{{Key: "src-offset", Value: []byte(strconv.FormatInt(rec.Offset, 10))}}}}, nil
		},
	}
	r, err := NewRunner(g, testOpts(brokers, WithMetrics(m))...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- r.Run(runCtx) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("handler did not see every record")
	}
	stop()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}

	got := readAll(t, brokers, "r.out")
	if len(got) != n-1 {
		t.Fatalf("out has %d records, want %d", len(got), n-1)
	}
	// Per key (hence per partition) order is kept.
	last := map[string]int{}
	for _, rec := range got {
		v, _ := strconv.Atoi(string(rec.Value))
		if prev, ok := last[string(rec.Key)]; ok && v < prev {
			t.Fatalf("key %s out of order: %d after %d", rec.Key, v, prev)
		}
		last[string(rec.Key)] = v
	}
	dlq := readAll(t, brokers, "r.in.dlq")
	if len(dlq) != 1 || string(dlq[0].Value) != "bad" {
		t.Fatalf("dlq = %d records", len(dlq))
	}
	d := dlq[0]
	if headerValue(d, HeaderError) != "cannot parse" || headerValue(d, HeaderGroup) != "r.group" ||
		headerValue(d, HeaderAttempts) != "3" || headerValue(d, HeaderOriginalTopic) != "r.in" ||
		headerValue(d, HeaderOriginalPartition) == "" || headerValue(d, HeaderOriginalOffset) == "" {
		t.Fatalf("dlq headers: %+v", d.Headers)
	}
	// Every offset was committed: a restart would not reprocess anything.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	committed, err := adm.FetchOffsets(ctx, "r.group")
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, "r.in")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		c, ok := committed.Lookup("r.in", o.Partition)
		if !ok || c.At != o.Offset {
			t.Errorf("partition %d committed %d, end %d", o.Partition, c.At, o.Offset)
		}
	})
	if v := counterValue(t, m.dlq.WithLabelValues("r.group", "r.in")); v != 1 {
		t.Errorf("dlq metric = %v", v)
	}
	if v := counterValue(t, m.records.WithLabelValues("r.group", "r.in")); v != n {
		t.Errorf("records metric = %v, want %d", v, n)
	}
	if v := counterValue(t, m.errors.WithLabelValues("r.group", "r.in")); v != 3 {
		t.Errorf("errors metric = %v, want 3", v)
	}
}

func TestNewRunnerRejectsBadGroup(t *testing.T) {
	if _, err := NewRunner(Group{Name: "x"}, WithBrokers([]string{"127.0.0.1:1"})); err == nil {
		t.Fatal("group without inputs accepted")
	}
	if _, err := NewRunner(Group{Name: "x", Inputs: []string{"a"}, Handler: func(context.Context, *Record) ([]Output, error) { return nil, nil }}); err == nil {
		t.Fatal("no brokers accepted")
	}
	p, err := NewProducer(WithBrokers([]string{"127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Produce(context.Background(), Output{Key: []byte("k")}); err == nil {
		t.Fatal("output without topic accepted")
	}
}

func TestBackoff(t *testing.T) {
	c := config{backoff: 100 * time.Millisecond}
	want := []time.Duration{100, 200, 400, 800, 1600, 3200, 3200}
	for i, w := range want {
		if got := c.backoffFor(i + 1); got != w*time.Millisecond {
			t.Errorf("attempt %d: %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestRunnerOutlivesAFailedCommit: a commit the broker refuses (as around a broker restart
// or a rebalance) is logged and the runner goes on: its records are handed over again
// later, and a process of the pipeline does not exit over it (found by idstream chaos).
func TestRunnerOutlivesAFailedCommit(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "rc.in", Partitions: 1})
	var refused atomic.Int64
	e.cluster.ControlKey(kmsg.OffsetCommit.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		creq := req.(*kmsg.OffsetCommitRequest)
		resp := creq.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range creq.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		refused.Add(1)
		return resp, nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := testProducer(t, brokers)
	var seen atomic.Int64
	g := Group{Name: "rc.group", Inputs: []string{"rc.in"}, Handler: func(context.Context, *Record) ([]Output, error) {
		seen.Add(1)
		return nil, nil
	}}
	r, err := NewRunner(g, testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	for i := range 2 {
		if err := p.Produce(ctx, Output{Topic: "rc.in", Key: []byte("k"), Value: []byte(strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
		for seen.Load() < int64(i+1) {
			select {
			case err := <-errc:
				t.Fatalf("the runner stopped after %d records, %d commits refused: %v", seen.Load(), refused.Load(), err)
			case <-ctx.Done():
				t.Fatal("record not handled")
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if refused.Load() != 1 {
		t.Fatalf("%d commits refused, want 1", refused.Load())
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// TestKilledMemberHandedOverInTime: with the runtime's own group settings (not the tests'
// short ones), the partitions of a member that died without leaving go to the survivor
// within groupSessionTimeout and a rebalance, not kgo's default 45 s (found by idstream
// chaos: a group stalled that long after every SIGKILL).
func TestKilledMemberHandedOverInTime(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "rk.in", Partitions: 4})
	seen := map[string]*atomic.Int64{"a": new(atomic.Int64), "b": new(atomic.Int64)}
	member := func(name string) *Runner {
		g := Group{Name: "rk.group", Inputs: []string{"rk.in"}, Handler: func(context.Context, *Record) ([]Output, error) {
			seen[name].Add(1)
			return nil, nil
		}}
		r, err := NewRunner(g, WithBrokers(brokers), WithKgoOpts(kgo.FetchMaxWait(250*time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := member("a"), member("b")
	go func() { _ = a.Run(ctx) }()
	go func() { _ = b.Run(ctx) }()
	p := testProducer(t, brokers)
	produce := func(n int) {
		var outs []Output
		for i := range n {
			outs = append(outs, Output{Topic: "rk.in", Key: []byte(strconv.Itoa(i)), Value: []byte("v")})
		}
		if err := p.Produce(ctx, outs...); err != nil {
			t.Fatal(err)
		}
	}
	// Both members own partitions once each has handled a record.
	deadline := time.Now().Add(30 * time.Second)
	for seen["a"].Load() == 0 || seen["b"].Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the group never spread: a %d, b %d", seen["a"].Load(), seen["b"].Load())
		}
		produce(20)
		time.Sleep(300 * time.Millisecond)
	}
	b.ks.kill() // its connections cut, as by a SIGKILL: no LeaveGroup, no more heartbeats
	killed := time.Now()
	before := seen["a"].Load()
	produce(40) // keys on every partition, b's among them
	for seen["a"].Load() < before+40 {
		if time.Since(killed) > groupSessionTimeout+15*time.Second {
			t.Fatalf("the survivor handled %d of 40 records %s after the kill", seen["a"].Load()-before, time.Since(killed).Round(time.Second))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the survivor had every partition %s after the kill", time.Since(killed).Round(100*time.Millisecond))
}
