package stream

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// txnProducer returns a transactional franz-go client with id, closed at the end of the test.
func txnProducer(t *testing.T, brokers []string, id string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.TransactionalID(id),
		kgo.RecordPartitioner(KeyPartitioner()), kgo.TransactionTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func txnProduce(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, kvs ...string) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(kvs[i]), Value: []byte(kvs[i+1])}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func txnEnd(ctx context.Context, t *testing.T, cl *kgo.Client, commit bool) {
	t.Helper()
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

type updates struct {
	mu  sync.Mutex
	log []string // "key=value", "key=<nil>" for a deletion
}

func (u *updates) add(key string, value []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if value == nil {
		u.log = append(u.log, key+"=<nil>")
		return
	}
	u.log = append(u.log, key+"="+string(value))
}

func (u *updates) all() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.log...)
}

// TestView: the view holds the latest committed value per key across partitions, applies
// tombstones as deletes, never shows records of aborted transactions, becomes ready even
// when a partition's last stable offset sits right after aborted records (another
// transaction still open), and follows updates made after it is ready.
func TestView(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers,
		TopicSpec{Name: "v.state", Partitions: 3, Compacted: true},
		TopicSpec{Name: "v.single", Partitions: 1, Compacted: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := testProducer(t, brokers)
	put := func(topic, key string, value []byte) {
		t.Helper()
		if err := p.Produce(ctx, Output{Topic: topic, Key: []byte(key), Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 6; i++ {
		put("v.state", fmt.Sprintf("k%d", i), []byte("v1"))
	}
	put("v.state", "k1", []byte("v2"))
	put("v.state", "k2", nil) // tombstone
	t1 := txnProducer(t, brokers, "v.t1")
	txnProduce(ctx, t, t1, "v.state", "k3", "aborted", "k9", "aborted")
	txnEnd(ctx, t, t1, false)

	// v.single: aborted records of t1, then an open transaction of t2: the last stable
	// offset is t2's first record, right after records the view never sees.
	put("v.single", "s0", []byte("x"))
	txnProduce(ctx, t, t1, "v.single", "s1", "aborted")
	t2 := txnProducer(t, brokers, "v.t2")
	txnProduce(ctx, t, t2, "v.single", "s2", "later")
	txnEnd(ctx, t, t1, false)

	var u updates
	v, err := NewView("v.state", testOpts(brokers, WithOnUpdate(u.add))...)
	if err != nil {
		t.Fatal(err)
	}
	single, err := NewView("v.single", testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	if v.Ready() {
		t.Fatal("view ready before Run")
	}
	vctx, stopViews := context.WithCancel(ctx)
	errc := make(chan error, 2)
	go func() { errc <- v.Run(vctx) }()
	go func() { errc <- single.Run(vctx) }()
	defer func() {
		stopViews()
		for i := 0; i < 2; i++ {
			if err := <-errc; err != nil {
				t.Errorf("view run: %v", err)
			}
		}
	}()
	if err := v.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := single.WaitReady(ctx); err != nil {
		t.Fatalf("view behind aborted records and an open transaction: %v", err)
	}
	if !v.Ready() || !single.Ready() {
		t.Fatal("Ready false after WaitReady")
	}

	want := map[string]string{"k0": "v1", "k1": "v2", "k3": "v1", "k4": "v1", "k5": "v1"}
	if v.Len() != len(want) {
		t.Errorf("Len = %d, want %d", v.Len(), len(want))
	}
	got := map[string]string{}
	v.Range(func(k string, val []byte) bool { got[k] = string(val); return true })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Range = %v, want %v", got, want)
	}
	for k, w := range want {
		if val, ok := v.Get(k); !ok || string(val) != w {
			t.Errorf("Get(%s) = %q, %v; want %q", k, val, ok, w)
		}
	}
	for _, k := range []string{"k2", "k9", "nope"} {
		if _, ok := v.Get(k); ok {
			t.Errorf("Get(%s) found a value", k)
		}
	}
	n := 0
	v.Range(func(string, []byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("Range went on after fn returned false: %d calls", n)
	}
	if _, ok := single.Get("s1"); ok || single.Len() != 1 {
		t.Errorf("single view holds %d keys (s1 found: %v), want only s0", single.Len(), ok)
	}

	// Updates after ready: a new key, a deletion, and an aborted transaction followed by a
	// committed one (Wait returns on the committed one; the aborted never shows).
	put("v.state", "k6", []byte("new"))
	if val, _, err := v.Wait(ctx, "k6", func(_ []byte, ok bool) bool { return ok }); err != nil || string(val) != "new" {
		t.Fatalf("Wait(k6) = %q, %v", val, err)
	}
	put("v.state", "k0", nil)
	if _, ok, err := v.Wait(ctx, "k0", func(_ []byte, ok bool) bool { return !ok }); err != nil || ok {
		t.Fatalf("Wait(k0 deleted) = %v, %v", ok, err)
	}
	txnProduce(ctx, t, t1, "v.state", "k7", "aborted", "k1", "aborted")
	txnEnd(ctx, t, t1, false)
	txnProduce(ctx, t, t1, "v.state", "k8", "committed")
	txnEnd(ctx, t, t1, true)
	if val, _, err := v.Wait(ctx, "k8", func(_ []byte, ok bool) bool { return ok }); err != nil || string(val) != "committed" {
		t.Fatalf("Wait(k8) = %q, %v", val, err)
	}
	if _, ok := v.Get("k7"); ok {
		t.Error("record of an aborted transaction visible")
	}
	if val, _ := v.Get("k1"); string(val) != "v2" {
		t.Errorf("k1 = %q after an aborted overwrite, want v2", val)
	}
	txnEnd(ctx, t, t2, true)
	if val, _, err := single.Wait(ctx, "s2", func(_ []byte, ok bool) bool { return ok }); err != nil || string(val) != "later" {
		t.Fatalf("Wait(s2) = %q, %v", val, err)
	}

	// Wait returns ctx's error when the predicate never holds.
	wctx, wcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer wcancel()
	if _, _, err := v.Wait(wctx, "never", func(_ []byte, ok bool) bool { return ok }); err == nil {
		t.Error("Wait returned nil for a key that never appears")
	}

	log := u.all()
	for _, entry := range log {
		if strings.HasSuffix(entry, "=aborted") {
			t.Errorf("OnUpdate called with a record of an aborted transaction: %s", entry)
		}
	}
	for _, w := range []string{"k1=v2", "k2=<nil>", "k6=new", "k0=<nil>", "k8=committed"} {
		found := false
		for _, entry := range log {
			found = found || entry == w
		}
		if !found {
			sort.Strings(log)
			t.Errorf("OnUpdate never called with %s; calls: %v", w, log)
		}
	}
}

// TestTail: a tail delivers the records produced after WaitReady returned, and none of the
// records produced before it started.
func TestTail(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "t.replies", Partitions: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := testProducer(t, brokers)
	for i := 0; i < 10; i++ {
		if err := p.Produce(ctx, Output{Topic: "t.replies", Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("before")}); err != nil {
			t.Fatal(err)
		}
	}

	var (
		mu   sync.Mutex
		seen []string
	)
	got := make(chan struct{}, 100)
	tail, err := NewTail("t.replies", func(r *Record) {
		mu.Lock()
		seen = append(seen, string(r.Key)+"="+string(r.Value))
		mu.Unlock()
		got <- struct{}{}
	}, testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewTail("t.replies", nil, testOpts(brokers)...); err == nil {
		t.Error("tail without callback accepted")
	}
	tctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- tail.Run(tctx) }()
	if err := tail.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	const after = 10
	for i := 0; i < after; i++ {
		if err := p.Produce(ctx, Output{Topic: "t.replies", Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("after")}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < after; i++ {
		select {
		case <-got:
		case <-ctx.Done():
			t.Fatalf("tail delivered %d of %d records", i, after)
		}
	}
	stop()
	if err := <-errc; err != nil {
		t.Fatalf("tail run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Records before the start sit at lower offsets: had any been delivered, it would have
	// come before the "after" ones of its partition.
	if len(seen) != after {
		t.Fatalf("tail delivered %d records, want %d: %v", len(seen), after, seen)
	}
	for _, s := range seen {
		if !strings.HasSuffix(s, "=after") {
			t.Errorf("tail delivered a record produced before it started: %s", s)
		}
	}
}
