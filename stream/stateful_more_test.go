package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// runStateful starts r.Run in the background and returns a function that stops it and
// returns Run's result.
func runStateful(t *testing.T, ctx context.Context, r *StatefulRunner) func() error {
	t.Helper()
	rctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- r.Run(rctx) }()
	var once sync.Once
	var err error
	done := func() error {
		once.Do(func() {
			stop()
			err = <-errc
		})
		return err
	}
	t.Cleanup(func() { _ = done() })
	return done
}

// waitFor polls cond every 10ms until it holds or ctx ends (then the test fails with what).
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStatefulDeadLetter: a record whose handler always fails goes, once, to
// "<topic>.dlq" with the error headers, in the same transaction as the records around it;
// the group goes on with the next record and every other record is handled exactly once.
func TestStatefulDeadLetter(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers,
		TopicSpec{Name: "d.in", Partitions: 2},
		TopicSpec{Name: "d.in.dlq", Partitions: 2},
		TopicSpec{Name: "d.out", Partitions: 2},
		TopicSpec{Name: "d.table", Partitions: 2, Compacted: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const n = 20
	var outs []Output
	for i := 0; i < n; i++ {
		v := strconv.Itoa(i)
		if i == 7 {
			v = "bad"
		}
		// One key: every record on one partition, so "the next record" is well defined.
		outs = append(outs, Output{Topic: "d.in", Key: []byte("k"), Value: []byte(v),
			Headers: []Header{{Key: "trace", Value: []byte("t" + v)}}})
	}
	p := testProducer(t, brokers)
	if err := p.Produce(ctx, outs...); err != nil {
		t.Fatal(err)
	}

	var badCalls atomic.Int64
	g := StatefulGroup{
		Name: "d.group", Inputs: []string{"d.in"}, Outputs: []string{"d.out"}, Table: "d.table",
		Handler: func(_ context.Context, rec *Record, table Table) ([]Output, error) {
			if string(rec.Value) == "bad" {
				badCalls.Add(1)
				return nil, errors.New("cannot parse")
			}
			n := 0
			if v, ok := table.Get(rec.Key); ok {
				n, _ = strconv.Atoi(string(v))
			}
			return []Output{
				{Topic: "d.table", Key: rec.Key, Value: []byte(strconv.Itoa(n + 1))},
				{Topic: "d.out", Key: rec.Key, Value: rec.Value},
			}, nil
		},
	}
	m := NewMetrics(nil)
	r, err := NewStatefulRunner(g, testOpts(brokers, WithMetrics(m))...)
	if err != nil {
		t.Fatal(err)
	}
	stop := runStateful(t, ctx, r)
	waitFor(t, ctx, "every record handled", func() bool {
		return counterValue(t, m.records.WithLabelValues("d.group", "d.in")) >= n
	})
	if err := stop(); err != nil {
		t.Fatalf("run: %v", err)
	}

	dlq := readAll(t, brokers, "d.in.dlq")
	if len(dlq) != 1 {
		t.Fatalf("dlq has %d records, want 1", len(dlq))
	}
	d := dlq[0]
	if string(d.Value) != "bad" || string(d.Key) != "k" {
		t.Fatalf("dlq record %q=%q", d.Key, d.Value)
	}
	for key, want := range map[string]string{
		HeaderError: "cannot parse", HeaderGroup: "d.group", HeaderAttempts: "3",
		HeaderOriginalTopic: "d.in", HeaderOriginalOffset: "7", "trace": "tbad",
	} {
		if got := headerValue(d, key); got != want {
			t.Errorf("dlq header %s = %q, want %q", key, got, want)
		}
	}
	if headerValue(d, HeaderOriginalPartition) == "" {
		t.Error("dlq record lacks the original partition")
	}
	if got := badCalls.Load(); got != 3 {
		t.Errorf("failing handler called %d times, want 3 (the retry attempts)", got)
	}
	out := readAll(t, brokers, "d.out")
	if len(out) != n-1 {
		t.Fatalf("out has %d records, want %d", len(out), n-1)
	}
	for i, rec := range out { // in order, the bad one skipped, none twice
		want := i
		if i >= 7 {
			want = i + 1
		}
		if string(rec.Value) != strconv.Itoa(want) {
			t.Fatalf("out[%d] = %q, want %d", i, rec.Value, want)
		}
	}
	var count string
	for _, rec := range readAll(t, brokers, "d.table") {
		count = string(rec.Value)
	}
	if count != strconv.Itoa(n-1) {
		t.Errorf("table count %q, want %d", count, n-1)
	}
	if v := counterValue(t, m.dlq.WithLabelValues("d.group", "d.in")); v != 1 {
		t.Errorf("dlq metric = %v, want 1", v)
	}
	adm := testAdmin(t, brokers)
	if got := committedSum(ctx, t, adm, "d.group", "d.in"); got != n {
		t.Errorf("committed offsets sum %d, want %d", got, n)
	}
}

// TestStatefulTick: OnTick sees the member's table; its outputs (table writes included) are
// produced in a transaction of their own: committed with no input record around, and
// rolled back as a whole when the tick's output is invalid.
func TestStatefulTick(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers,
		TopicSpec{Name: "k.in", Partitions: 3},
		TopicSpec{Name: "k.out", Partitions: 3},
		TopicSpec{Name: "k.table", Partitions: 3, Compacted: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	keys := []string{"a", "b", "c", "d", "e"}
	var (
		mu        sync.Mutex
		phase     int // 0: waiting for the table, 1: invalid tick sent, 2: valid tick sent
		sawTable  map[string]string
		sawBad    bool
		tickCalls int
	)
	g := StatefulGroup{
		Name: "k.group", Inputs: []string{"k.in"}, Outputs: []string{"k.out"}, Table: "k.table",
		Handler: func(_ context.Context, rec *Record, _ Table) ([]Output, error) {
			return []Output{{Topic: "k.table", Key: rec.Key, Value: rec.Value}}, nil
		},
		Tick: 50 * time.Millisecond,
		OnTick: func(_ context.Context, _ time.Time, table Table) ([]Output, error) {
			snap := map[string]string{}
			table.Range(func(k, v []byte) bool { snap[string(k)] = string(v); return true })
			mu.Lock()
			defer mu.Unlock()
			tickCalls++
			if snap["ticks"] == "bad" {
				sawBad = true
			}
			switch {
			case phase == 0 && len(snap) == len(keys):
				phase = 1
				sawTable = snap
				// The last output is invalid: the whole tick transaction aborts.
				return []Output{
					{Topic: "k.out", Key: []byte("x"), Value: []byte("aborted")},
					{Topic: "k.table", Key: []byte("ticks"), Value: []byte("bad")},
					{Key: []byte("no-topic")},
				}, nil
			case phase == 1:
				phase = 2
				return []Output{
					{Topic: "k.out", Key: []byte("x"), Value: []byte("committed")},
					{Topic: "k.table", Key: []byte("ticks"), Value: []byte("1")},
				}, nil
			}
			return nil, nil
		},
	}
	m := NewMetrics(nil)
	r, err := NewStatefulRunner(g, testOpts(brokers, WithMetrics(m))...)
	if err != nil {
		t.Fatal(err)
	}
	stop := runStateful(t, ctx, r)
	p := testProducer(t, brokers)
	for _, k := range keys {
		if err := p.Produce(ctx, Output{Topic: "k.in", Key: []byte(k), Value: []byte("v-" + k)}); err != nil {
			t.Fatal(err)
		}
	}
	// Inputs are all handled before the ticks write anything; the ticks' transactions
	// commit with no input record after them.
	waitFor(t, ctx, "the committed tick output", func() bool {
		v, ok := r.Table().Get([]byte("ticks"))
		return ok && string(v) == "1"
	})
	if err := stop(); err != nil {
		t.Fatalf("run: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(sawTable) != len(keys) {
		t.Fatalf("OnTick saw table %v", sawTable)
	}
	for _, k := range keys {
		if sawTable[k] != "v-"+k {
			t.Errorf("OnTick saw %s=%q, want %q", k, sawTable[k], "v-"+k)
		}
	}
	if sawBad {
		t.Error("a tick saw the table write of an aborted tick transaction")
	}
	out := readAll(t, brokers, "k.out")
	if len(out) != 1 || string(out[0].Value) != "committed" {
		var vals []string
		for _, o := range out {
			vals = append(vals, string(o.Value))
		}
		t.Fatalf("k.out = %v, want only the committed tick output", vals)
	}
	table := map[string]string{}
	for _, rec := range readAll(t, brokers, "k.table") {
		table[string(rec.Key)] = string(rec.Value)
	}
	if table["ticks"] != "1" || len(table) != len(keys)+1 {
		t.Errorf("table topic = %v", table)
	}
	if v := counterValue(t, m.transactions.WithLabelValues("k.group", "aborted")); v < 1 {
		t.Errorf("aborted transactions = %v, want >= 1 (the invalid tick)", v)
	}
}

// lockedBuffer is an io.Writer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Contains(l.b.Bytes(), []byte(s))
}

// TestStatefulRestoreCancelledByShutdown: a restore stuck behind a dead member's open
// transaction (timeout: one minute, beyond the test's deadline) ends when Run's context
// does, and Run returns nil.
func TestStatefulRestoreCancelledByShutdown(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers,
		TopicSpec{Name: "s.in", Partitions: 2},
		TopicSpec{Name: "s.out", Partitions: 2},
		TopicSpec{Name: "s.table", Partitions: 2, Compacted: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := testProducer(t, brokers)
	var outs []Output
	for i := 0; i < 20; i++ {
		outs = append(outs, Output{Topic: "s.in", Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("v")})
	}
	if err := p.Produce(ctx, outs...); err != nil {
		t.Fatal(err)
	}

	cA := &counter{holdAt: 10}
	a, err := NewStatefulRunner(counterGroup(cA), testOpts(brokers, WithKgoOpts(kgo.TransactionTimeout(time.Minute)))...)
	if err != nil {
		t.Fatal(err)
	}
	errA := make(chan error, 1)
	go func() { errA <- a.Run(ctx) }()
	adm := testAdmin(t, brokers)
	waitFor(t, ctx, "A's open transaction", func() bool {
		return cA.handled.Load() >= cA.holdAt && openTransaction(ctx, t, adm, "s.table")
	})
	a.Kill()
	if err := <-errA; !errors.Is(err, ErrKilled) {
		t.Fatalf("killed member returned %v", err)
	}

	logs := &lockedBuffer{}
	b, err := NewStatefulRunner(counterGroup(&counter{}), testOpts(brokers,
		WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))...)
	if err != nil {
		t.Fatal(err)
	}
	stop := runStateful(t, ctx, b)
	waitFor(t, ctx, "B to start restoring", func() bool { return logs.contains("restoring table partitions") })
	if err := stop(); err != nil {
		t.Fatalf("run after shutdown during restore: %v", err)
	}
	if logs.contains("table partitions restored") {
		t.Fatal("restore finished although the dead member's transaction was still open")
	}
	if ctx.Err() != nil {
		t.Fatal("Run did not return before the test's deadline")
	}
}

// TestMergeByTimestamp: records of several partitions come out in timestamp order, each
// partition's own order kept even where its timestamps go backwards.
func TestMergeByTimestamp(t *testing.T) {
	at := func(topic string, off int64, sec int) *kgo.Record {
		return &kgo.Record{Topic: topic, Offset: off, Timestamp: time.Unix(int64(sec), 0)}
	}
	sessions := []*kgo.Record{at("sessions", 0, 1), at("sessions", 1, 5)}
	chip := []*kgo.Record{at("chip", 0, 2), at("chip", 1, 1), at("chip", 2, 6)} // offset 1 older than 0
	got := mergeByTimestamp([][]*kgo.Record{chip, sessions})
	var order []string
	for _, r := range got {
		order = append(order, fmt.Sprintf("%s/%d", r.Topic, r.Offset))
	}
	want := []string{"sessions/0", "chip/0", "chip/1", "sessions/1", "chip/2"}
	if !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}
