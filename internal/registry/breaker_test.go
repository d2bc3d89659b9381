package registry

import (
	"testing"
	"time"
)

func TestBreakerIgnoresStaleCalls(t *testing.T) {
	clk := newFakeClock()
	b := &breaker{threshold: 1, cooldown: time.Second, now: clk.Now}
	stale, ok := b.allow() // let through while closed, ends late
	if !ok {
		t.Fatal("closed breaker refused")
	}
	opener, _ := b.allow()
	b.failure(opener)
	if b.current() != breakerOpen {
		t.Fatalf("state = %s, want open", b.current())
	}
	b.success(stale) // a call from before the opening does not close it
	if b.current() != breakerOpen {
		t.Fatalf("stale success: state = %s, want open", b.current())
	}
	clk.Advance(time.Second)
	probe, ok := b.allow()
	if !ok || !probe.probe || b.current() != breakerHalfOpen {
		t.Fatalf("after cool-down: permit %+v ok %v state %s, want a half-open probe", probe, ok, b.current())
	}
	b.release(stale) // does not free the probe slot
	if _, ok := b.allow(); ok {
		t.Fatal("a second probe was allowed")
	}
	b.release(probe) // the probe was cancelled: the next call probes
	next, ok := b.allow()
	if !ok || !next.probe {
		t.Fatal("no probe after the first one was released")
	}
	b.success(next)
	if b.current() != breakerClosed {
		t.Fatalf("state = %s, want closed", b.current())
	}
}
