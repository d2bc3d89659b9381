package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	chsink "github.com/idstream/idstream/sinks/clickhouse"
)

// TestAnalyticsDialsOnce: requests that find no connection share one dial, and a failed
// dial is answered at once afterwards instead of dialing on every page load.
func TestAnalyticsDialsOnce(t *testing.T) {
	s := &Service{ctx: context.Background()}
	s.started.Store(true)
	var dials atomic.Int32
	release := make(chan struct{})
	c := &clickHouseAnalytics{s: s, connect: func() (driver.Conn, *chsink.Analyst, error) {
		dials.Add(1)
		<-release
		return nil, nil, errors.New("authentication failed")
	}}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Report(context.Background(), "acme", time.Now().Add(-time.Hour), time.Now())
			errs <- err
		}()
	}
	time.Sleep(100 * time.Millisecond) // the four are in: one dials, three wait for it
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil {
			t.Error("a report without a connection succeeded")
		}
	}
	if _, err := c.Report(context.Background(), "acme", time.Now().Add(-time.Hour), time.Now()); err == nil {
		t.Error("a report after a failed dial succeeded")
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d dials, want 1: concurrent requests share a dial, and a failure is answered for a while", n)
	}
	// A waiting request still honours its own deadline.
	c2 := &clickHouseAnalytics{s: s, connect: func() (driver.Conn, *chsink.Analyst, error) {
		time.Sleep(time.Second)
		return nil, nil, errors.New("slow")
	}}
	go func() { _, _ = c2.Report(context.Background(), "acme", time.Now(), time.Now()) }()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c2.Report(ctx, "acme", time.Now(), time.Now()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for another's dial: %v, want the deadline", err)
	}
	if time.Since(start) > 900*time.Millisecond {
		t.Error("a waiting request outlived its deadline")
	}
}
