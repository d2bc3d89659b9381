// Package chaos runs idstream's production shape as separate OS processes and breaks it on
// purpose: a Fleet starts, kills (SIGKILL) and restarts the processes, a Receiver is a
// webhook endpoint that fails on demand, and Check reads what the pipeline left behind
// (the decision topic, Data Get, ClickHouse, the deliveries received, the dead-letter topics,
// the blob store) and states the invariants of exactly-once processing with their counts.
// `idstream chaos` wires them together.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Spec is one process of the fleet: what it is and how to start it.
type Spec struct {
	Name string   // unique in the fleet, e.g. "ocr-1"; names its log file
	Kind string   // what it is, for the report: broker, edge, consent, group, sink, registry
	Args []string // arguments of the binary
	Env  []string // added to the harness's environment
	// Ready returns nil once the started process serves (e.g. an HTTP health check); nil: a
	// process is ready when started.
	Ready func(ctx context.Context) error
}

// Fleet supervises the processes of one binary: it starts them, kills and restarts them on
// request, and restarts one that exits by itself (counted: a process of the service should
// not exit while it is not killed). Each process writes its output to <dir>/<name>.log,
// appended across restarts. Its methods are safe for concurrent use.
type Fleet struct {
	bin string
	dir string

	mu    sync.Mutex
	procs map[string]*Proc
	order []string
	done  bool
}

// Proc is one supervised process.
type Proc struct {
	spec Spec
	f    *Fleet

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current run ends
	killing bool          // the current run is being killed or stopped by the fleet
	down    bool          // held down by Kill until Start
	stats   ProcStats
}

// ProcStats counts what happened to one process.
type ProcStats struct {
	Starts          int             // runs started
	Kills           int             // SIGKILLs sent by the harness
	UnexpectedExits int             // runs that ended without the harness asking
	LastExit        string          // how the last unexpected exit ended
	Recoveries      []time.Duration // restart → ready, one per restart
}

// NewFleet returns a fleet running bin, logging under dir.
func NewFleet(bin, dir string) (*Fleet, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos fleet: %w", err)
	}
	return &Fleet{bin: bin, dir: dir, procs: map[string]*Proc{}}, nil
}

// Add registers spec and starts it, returning once it is ready or ctx ends. It returns an
// error when the name is taken, the process cannot start, or it is not ready in time.
func (f *Fleet) Add(ctx context.Context, spec Spec) (*Proc, error) {
	f.mu.Lock()
	if f.done {
		f.mu.Unlock()
		return nil, errors.New("chaos fleet: closed")
	}
	if _, ok := f.procs[spec.Name]; ok {
		f.mu.Unlock()
		return nil, fmt.Errorf("chaos fleet: %s twice", spec.Name)
	}
	p := &Proc{spec: spec, f: f}
	f.procs[spec.Name] = p
	f.order = append(f.order, spec.Name)
	f.mu.Unlock()
	return p, p.Start(ctx)
}

// Procs returns the processes in the order they were added.
func (f *Fleet) Procs() []*Proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*Proc, 0, len(f.order))
	for _, n := range f.order {
		out = append(out, f.procs[n])
	}
	return out
}

// Get returns the process named name, or nil.
func (f *Fleet) Get(name string) *Proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.procs[name]
}

// Close stops every process (SIGTERM, then SIGKILL after grace), latest added first.
func (f *Fleet) Close(grace time.Duration) {
	f.mu.Lock()
	f.done = true
	procs := make([]*Proc, 0, len(f.order))
	for i := len(f.order) - 1; i >= 0; i-- {
		procs = append(procs, f.procs[f.order[i]])
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.stop(syscall.SIGTERM, grace) }()
	}
	wg.Wait()
}

// Name returns the process's name.
func (p *Proc) Name() string { return p.spec.Name }

// Kind returns what the process is.
func (p *Proc) Kind() string { return p.spec.Kind }

// Stats returns a copy of the process's counts.
func (p *Proc) Stats() ProcStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Recoveries = append([]time.Duration(nil), s.Recoveries...)
	return s
}

// Start runs the process unless it runs, and waits until it is ready (or ctx ends). A
// process killed by Kill stays down until Start.
func (p *Proc) Start(ctx context.Context) error {
	p.f.mu.Lock()
	done := p.f.done
	p.f.mu.Unlock()
	if done {
		return errors.New("chaos fleet: closed")
	}
	p.mu.Lock()
	p.down = false
	if p.cmd != nil {
		p.mu.Unlock()
		return nil
	}
	begin := time.Now()
	err := p.launchLocked()
	restart := p.stats.Starts > 1
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if p.spec.Ready != nil {
		if err := waitReady(ctx, p.spec.Ready); err != nil {
			return fmt.Errorf("%s: not ready: %w", p.spec.Name, err)
		}
	}
	if restart {
		p.mu.Lock()
		p.stats.Recoveries = append(p.stats.Recoveries, time.Since(begin))
		p.mu.Unlock()
	}
	return nil
}

// Kill sends SIGKILL to the process and waits for it to end; it stays down until Start.
func (p *Proc) Kill() {
	p.mu.Lock()
	p.down = true
	if p.cmd != nil {
		p.stats.Kills++
	}
	p.mu.Unlock()
	p.stop(syscall.SIGKILL, 0)
}

// Running reports whether the process runs.
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// stop sends sig, and SIGKILL after grace, and waits for the run to end.
func (p *Proc) stop(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	if cmd == nil {
		p.mu.Unlock()
		return
	}
	p.killing = true
	p.mu.Unlock()
	_ = cmd.Process.Signal(sig)
	if sig != syscall.SIGKILL {
		select {
		case <-exited:
			return
		case <-time.After(grace):
			_ = cmd.Process.Kill()
		}
	}
	<-exited
}

// launchLocked starts a run and a goroutine that waits for its end: an end the fleet did
// not ask for is counted and the process restarted after a second (unless the fleet is
// closing or the process is held down).
func (p *Proc) launchLocked() error {
	logf, err := os.OpenFile(filepath.Join(p.f.dir, p.spec.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: log: %w", p.spec.Name, err)
	}
	fmt.Fprintf(logf, "\n=== chaos: start %s at %s\n", p.spec.Name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.f.bin, p.spec.Args...)
	cmd.Env = append(os.Environ(), p.spec.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("%s: start: %w", p.spec.Name, err)
	}
	p.cmd, p.exited, p.killing = cmd, make(chan struct{}), false
	p.stats.Starts++
	exited := p.exited
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		expected := p.killing
		p.cmd = nil
		close(exited)
		if !expected {
			p.stats.UnexpectedExits++
			p.stats.LastExit = exitString(err)
		}
		restart := !expected && !p.down
		p.mu.Unlock()
		if restart {
			p.restartLater()
		}
	}()
	return nil
}

// restartLater starts the process again a second after it exited by itself. It holds the
// fleet's lock while it launches, so that Close, which sets done under it, stops what it
// started.
func (p *Proc) restartLater() {
	time.Sleep(time.Second)
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	p.mu.Lock()
	if p.f.done || p.down || p.cmd != nil {
		p.mu.Unlock()
		return
	}
	err := p.launchLocked()
	p.mu.Unlock()
	if err != nil {
		go p.restartLater()
	}
}

func exitString(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

// waitReady polls ready every 100 ms until it returns nil or ctx ends.
func waitReady(ctx context.Context, ready func(context.Context) error) error {
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Tail returns the last n bytes of the process's log.
func (p *Proc) Tail(n int64) string {
	f, err := os.Open(filepath.Join(p.f.dir, p.spec.Name+".log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
