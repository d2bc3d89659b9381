package stream

import (
	"runtime"
	"sync"
)

// nicedThreads runs calls on OS threads at a lowered priority (WithNice). Each worker locks
// its goroutine to its thread for life and sets the thread's nice value once, so the priority
// never reaches other work: no other goroutine runs on that thread. Workers are made as calls
// come in at once (a group handles its partitions concurrently) and reused; close ends them,
// and their threads with them. Safe for concurrent use.
type nicedThreads struct {
	nice   int
	mu     sync.Mutex
	idle   []chan func()
	all    []chan func()
	closed bool
}

func newNicedThreads(nice int) *nicedThreads { return &nicedThreads{nice: nice} }

// run calls fn on one of the threads and returns when it has returned; after close, on the
// caller's thread.
func (n *nicedThreads) run(fn func()) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		fn()
		return
	}
	var w chan func()
	if k := len(n.idle); k > 0 {
		w, n.idle = n.idle[k-1], n.idle[:k-1]
	} else {
		w = make(chan func(), 1) // a call is handed over under the lock, without waiting
		n.all = append(n.all, w)
		go n.work(w)
	}
	done := make(chan struct{})
	w <- func() { defer close(done); fn() }
	n.mu.Unlock()
	<-done
	n.mu.Lock()
	if !n.closed {
		n.idle = append(n.idle, w)
	}
	n.mu.Unlock()
}

// work runs the calls sent to w on a thread of its own at n's priority. It does not keep the
// process's main thread, which Go never ends (it would stay niced): it hands over to a new
// goroutine, which the scheduler puts on another thread.
func (n *nicedThreads) work(w chan func()) {
	runtime.LockOSThread() // never unlocked: the thread ends with the worker
	if isMainThread() {
		runtime.UnlockOSThread()
		go n.work(w)
		return
	}
	setThreadNice(n.nice)
	for f := range w {
		f()
	}
}

// close ends the workers (a busy one after its call); later calls run on their caller's
// thread.
func (n *nicedThreads) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, w := range n.all {
		close(w)
	}
	n.all, n.idle, n.closed = nil, nil, true
}

// startNiced gives a runner's calls their threads when it runs niced (WithNice), and returns
// what ends them when the runner stops.
func (c *config) startNiced() func() {
	if c.nice <= 0 {
		return func() {}
	}
	c.niced = newNicedThreads(c.nice)
	return c.niced.close
}
