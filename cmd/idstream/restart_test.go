package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idstream/idstream/stream"
)

// TestRunnerStartedAgain: a group's runner that fails is started again in the process
// (found by idstream chaos: the session group exited when its broker restarted under an end
// of transaction); past the budget the failure stops the service.
func TestRunnerStartedAgain(t *testing.T) {
	newService := func() *Service {
		s := &Service{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		s.ctx, s.cancel = context.WithCancel(context.Background())
		return s
	}
	s := newService()
	var runs atomic.Int64
	failTwice := func(ctx context.Context) error {
		if runs.Add(1) <= 2 {
			return errors.New("end transaction: broker gone")
		}
		<-ctx.Done()
		return nil
	}
	if err := s.spawnRestarting("group g", func() (func(context.Context) error, error) { return failTwice, nil }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for runs.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if runs.Load() != 3 || s.ctx.Err() != nil {
		t.Fatalf("%d runs, service stopped: %v", runs.Load(), s.Err())
	}
	s.cancel()
	s.wg.Wait()

	s = newService()
	runs.Store(0)
	always := func(context.Context) error { runs.Add(1); return errors.New("broken for good") }
	if err := s.spawnRestarting("group h", func() (func(context.Context) error, error) { return always, nil }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("a runner failing for good never stopped the service")
	}
	s.wg.Wait()
	if runs.Load() != restartBudget+1 || s.Err() == nil {
		t.Fatalf("%d runs, err %v; want %d runs and the failure", runs.Load(), s.Err(), restartBudget+1)
	}
}

// TestStartWaitsForTheBroker: a process started before its broker (a broker restarting)
// creates the topics once the broker answers instead of exiting (found by idstream chaos).
func TestStartWaitsForTheBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there yet
	done := make(chan error, 1)
	go func() {
		done <- ensureTopics(context.Background(), []string{addr}, topicSpecs(Config{Partitions: 2}), slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("ensureTopics returned before the broker started: %v", err)
	default:
	}
	b, err := stream.StartEmbedded(stream.WithListenAddr(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ensureTopics did not notice the broker")
	}
}
