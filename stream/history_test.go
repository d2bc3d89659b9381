package stream

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestHistory: a History applies every committed record of the topic, repeats of one key
// included, in offset order; it skips aborted transactions, says caughtUp once
// it has read what was there when it started (not before), and goes on with later records.
func TestHistory(t *testing.T) {
	e := startBroker(t)
	brokers := e.Addrs()
	ensure(t, brokers, TopicSpec{Name: "h.log", Partitions: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := txnProducer(t, brokers, "h-writer")
	txnProduce(ctx, t, cl, "h.log", "a", "1", "a", "2", "b", "1")
	txnEnd(ctx, t, cl, true)
	txnProduce(ctx, t, cl, "h.log", "a", "aborted")
	txnEnd(ctx, t, cl, false)

	h, err := NewHistory("h.log", testOpts(brokers)...)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		seen    []string
		atReady []string
	)
	ready := make(chan struct{})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- h.Run(rctx, func(r *Record) {
			mu.Lock()
			seen = append(seen, string(r.Key)+"="+string(r.Value))
			mu.Unlock()
		}, func() {
			mu.Lock()
			atReady = slices.Clone(seen)
			mu.Unlock()
			close(ready)
		})
	}()
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatal("history never caught up")
	}
	want := []string{"a=1", "a=2", "b=1"}
	if !slices.Equal(atReady, want) {
		t.Fatalf("caught up having applied %v, want %v", atReady, want)
	}
	txnProduce(ctx, t, cl, "h.log", "c", "1")
	txnEnd(ctx, t, cl, true)
	want = append(want, "c=1")
	for {
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		if slices.Equal(got, want) {
			break
		}
		if len(got) > len(want) || ctx.Err() != nil {
			t.Fatalf("applied %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}
