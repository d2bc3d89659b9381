package stream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Background runs the handler calls of the groups given it (WithBackground) on OS threads at
// a lowered priority, and lets no more of them compute at once than it has turns; the others
// wait for a turn. A call takes its turn when its work begins (Compute), not for a record it
// only glances at (a step it does not read, a snapshot with nothing new), and gives it back
// while it waits on the network (Blocking). Each thread's goroutine is locked to it for life
// and the thread is niced once, so the priority never reaches other work; threads are made
// as calls need them and kept.
//
// Both halves matter where groups that a person waits for (the quality gate, the edge) share
// a process with batch groups (OCR, face work, fraud). The nice value makes the kernel give a
// core to the gate's threads first. The turns keep the batch calls' Go code from holding
// every processor of the Go runtime: in a process given one processor more than the turns
// (GOMAXPROCS, as `idstream dev` is) the gate's goroutines and the broker's find one free
// (but for goroutines a call starts and that compute, which the turns do not count) instead
// of waiting out the scheduler's 10 ms slices behind batch code at every hop of a capture's
// way to its answer.
//
// A free turn goes to the waiting call that would finish first were the calls run one after
// another in the order they came: the one whose arrival plus its group's usual time holding
// a turn (a moving average) is earliest. A face match that came just after an OCR call goes
// first, as the kernel sharing the cores between them would have finished it first (the
// decision waits for the last of a session's checks, mostly the short ones); an OCR call
// waits at most its own length behind later ones.
//
// Safe for concurrent use.
type Background struct {
	nice int

	mu      sync.Mutex
	free    int                      // turns no call holds
	waiting []*waiter                // calls waiting for a turn
	usual   map[string]time.Duration // per group, the moving average of a call's time holding its turn
	idle    []chan func()            // threads waiting for a call
	all     []chan func()            // every thread
	closed  bool
}

// waiter is a call waiting for a turn: its place in the line and how it is told.
type waiter struct {
	at    time.Time
	given chan struct{}
}

// NewBackground makes a Background of turns turns (at least one) whose threads run at nice
// (0 to 19; Linux, elsewhere they keep the process's priority). Close ends its threads.
func NewBackground(turns, nice int) *Background {
	return &Background{nice: min(max(nice, 0), 19), free: max(turns, 1), usual: make(map[string]time.Duration)}
}

// take waits for a turn for a call of group and returns when the call has one, or with
// ctx.Err() when ctx ends first. A call with no usual time (resumed, Blocking) lines up at
// its arrival.
func (b *Background) take(ctx context.Context, group string) error {
	b.mu.Lock()
	if b.free > 0 {
		b.free--
		b.mu.Unlock()
		return nil
	}
	w := &waiter{at: time.Now().Add(b.usual[group]), given: make(chan struct{})}
	b.waiting = append(b.waiting, w)
	b.mu.Unlock()
	select {
	case <-w.given:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	for i, o := range b.waiting {
		if o == w {
			b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
			b.mu.Unlock()
			return ctx.Err()
		}
	}
	b.mu.Unlock()
	b.give() // given meanwhile: pass it on
	return ctx.Err()
}

// give hands a turn back: to the waiting call first in line, or to the free ones.
func (b *Background) give() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiting) == 0 {
		b.free++
		return
	}
	first := 0
	for i, w := range b.waiting {
		if w.at.Before(b.waiting[first].at) {
			first = i
		}
	}
	w := b.waiting[first]
	b.waiting = append(b.waiting[:first], b.waiting[first+1:]...)
	close(w.given)
}

// learn folds a call of group that held its turn for held into the group's usual time.
func (b *Background) learn(group string, held time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u, ok := b.usual[group]; ok {
		b.usual[group] = (4*u + held) / 5
	} else {
		b.usual[group] = held
	}
}

// turn is a call's hold on a turn of its Background: taken by Compute, given back for a while
// by Blocking.
type turn struct {
	b     *Background
	group string
	mu    sync.Mutex
	taken bool          // whether the call has taken its turn (Compute)
	away  int           // Blocking sections running
	held  bool          // whether the call holds its turn
	done  bool          // whether the call has returned (a Blocking section still running takes no turn)
	since time.Time     // when it took the turn it holds
	total time.Duration // the time it held turns before that
}

type turnKey struct{}

// run calls fn on one of b's threads with ctx carrying the call's turn, not yet taken (fn
// takes it with Compute before its heavy work), and returns when fn has returned. After
// Close fn runs on the caller's thread, without a turn.
func (b *Background) run(ctx context.Context, group string, fn func(context.Context)) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		fn(ctx)
		return
	}
	t := &turn{b: b, group: group}
	b.onThread(func() { fn(context.WithValue(ctx, turnKey{}, t)) })
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if t.held {
		t.total += time.Since(t.since)
		t.held = false
		b.give()
	}
	if t.taken {
		b.learn(group, t.total)
	}
}

// ErrNoTurn is what Compute returns when its context ends while the call waits for a turn:
// the call's work was not done (its runner was killed or is stopping), and the runner
// neither counts it as a try nor settles its record.
var ErrNoTurn = errors.New("stream: no background turn: the context ended while the call waited for one")

// Compute takes the turn of ctx's Background call (WithBackground), waiting in line for one,
// unless it has it or ctx is not such a call's: a background group's handler calls it before
// its heavy work. Handle and HandleTable call it before an input's function, but for a Lazy
// input, whose function calls it itself once it knows the record is worth its work. It
// returns an error wrapping ErrNoTurn and ctx's when ctx ends first.
func Compute(ctx context.Context) error {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.taken || t.done {
		return nil
	}
	if err := t.b.take(ctx, t.group); err != nil {
		return fmt.Errorf("%w: %w", ErrNoTurn, err)
	}
	t.taken, t.held, t.since = true, true, time.Now()
	return nil
}

// onThread calls fn on one of b's threads, made if none is idle, and returns when fn has
// returned; after Close, on the caller's thread.
func (b *Background) onThread(fn func()) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		fn()
		return
	}
	var w chan func()
	if k := len(b.idle); k > 0 {
		w, b.idle = b.idle[k-1], b.idle[:k-1]
	} else {
		w = make(chan func(), 1) // a call is handed over under the lock, without waiting
		b.all = append(b.all, w)
		go b.work(w)
	}
	done := make(chan struct{})
	w <- func() { defer close(done); fn() }
	b.mu.Unlock()
	<-done
	b.mu.Lock()
	if !b.closed {
		b.idle = append(b.idle, w)
	}
	b.mu.Unlock()
}

// work runs the calls sent to w on a thread of its own at b's priority. It does not keep the
// process's main thread, which Go never ends (it would stay niced): it hands over to a new
// goroutine, which the scheduler puts on another thread.
func (b *Background) work(w chan func()) {
	runtime.LockOSThread() // never unlocked: the thread ends with the worker
	if isMainThread() {
		runtime.UnlockOSThread()
		go b.work(w)
		return
	}
	if b.nice > 0 {
		setThreadNice(b.nice)
	}
	for f := range w {
		f()
	}
}

// Close ends b's threads, a busy one after its call; calls made afterwards run on their
// callers' threads. Close it after the runners using it have stopped.
func (b *Background) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for _, w := range b.all {
		close(w)
	}
	b.all, b.idle, b.closed = nil, nil, true
}

// Blocking calls fn, which waits (on the network, another process, a view catching up)
// rather than computes: when ctx is a Background call's, the call gives its turn back while
// fn runs, so a registry that answers slowly does not keep the cores from other work, and
// while the call runs it waits for a turn again afterwards, in line by the time it comes back
// (or, if ctx ends first, goes on without one). Elsewhere it just calls fn. Safe for
// concurrent use by the goroutines of one call.
func Blocking(ctx context.Context, fn func()) {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil {
		fn()
		return
	}
	t.mu.Lock()
	if t.away == 0 && t.held {
		t.total += time.Since(t.since)
		t.held = false
		t.b.give()
	}
	t.away++
	t.mu.Unlock()
	defer t.back(ctx)
	fn()
}

// back ends a Blocking section of t's call: the last one out takes a turn again, unless the
// call has returned.
func (t *turn) back(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.away--
	if t.away > 0 || t.held || t.done || !t.taken {
		return
	}
	if t.b.take(ctx, "") == nil {
		t.held, t.since = true, time.Now()
	}
}
