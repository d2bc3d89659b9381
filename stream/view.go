package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// View materialises a (compacted) topic in memory: the latest value per key across every
// partition, read_committed, without a consumer group (a History kept as a map). Safe for
// concurrent use.
type View struct {
	topic    string
	history  *History
	onUpdate func(key string, value []byte)

	mu      sync.RWMutex
	data    map[string][]byte
	changed chan struct{} // closed and replaced on every update
	ready   chan struct{} // closed once caught up with the start-time end offsets
}

// WithOnUpdate sets a hook called (from Run's goroutine) after every update of a View, with
// a nil value for a deletion. It must not block for long.
func WithOnUpdate(fn func(key string, value []byte)) Option {
	return func(c *config) { c.onUpdate = fn }
}

// NewView creates a view of topic. Returns an error when topic is empty or no brokers are
// configured.
func NewView(topic string, opts ...Option) (*View, error) {
	if topic == "" {
		return nil, errors.New("new view: empty topic")
	}
	h, err := NewHistory(topic, opts...)
	if err != nil {
		return nil, fmt.Errorf("new view %s: %w", topic, err)
	}
	return &View{
		topic: topic, history: h, onUpdate: h.cfg.onUpdate,
		data: make(map[string][]byte), changed: make(chan struct{}), ready: make(chan struct{}),
	}, nil
}

// Run consumes the topic from its start until ctx ends (returning nil) or a fetch fails
// fatally; see History.Run. The view becomes Ready once it has caught up with the topic as
// it was when Run started. Run once per View.
func (v *View) Run(ctx context.Context) error {
	err := v.history.run(ctx, func(r *kgo.Record) { v.apply(string(r.Key), r.Value) }, func() { close(v.ready) })
	if err != nil {
		return fmt.Errorf("view: %w", err)
	}
	return nil
}

func (v *View) apply(key string, value []byte) {
	v.mu.Lock()
	if value == nil {
		delete(v.data, key)
	} else {
		v.data[key] = value
	}
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
	if v.onUpdate != nil {
		v.onUpdate(key, value)
	}
}

// Get returns the latest value of key, or false when there is none.
func (v *View) Get(key string) ([]byte, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	val, ok := v.data[key]
	return val, ok
}

// Wait blocks until pred holds for key's current value (checked at once, then after every
// update) and returns that value, or returns ctx's error when ctx ends first.
func (v *View) Wait(ctx context.Context, key string, pred func(value []byte, ok bool) bool) ([]byte, bool, error) {
	for {
		v.mu.RLock()
		val, ok := v.data[key]
		ch := v.changed
		v.mu.RUnlock()
		if pred(val, ok) {
			return val, ok, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, fmt.Errorf("view %s: wait: %w", v.topic, ctx.Err())
		case <-ch:
		}
	}
}

// Ready reports whether the view has caught up, on every partition, with the last stable
// offset that existed when Run started (use it for /readyz).
func (v *View) Ready() bool {
	select {
	case <-v.ready:
		return true
	default:
		return false
	}
}

// WaitReady blocks until Ready or ctx ends (returning ctx's error). A background call waiting
// gives its turn back meanwhile (Blocking).
func (v *View) WaitReady(ctx context.Context) error {
	return waitReady(ctx, v.ready, "view "+v.topic)
}

// waitReady waits for ready to be closed, or for ctx to end (an error naming what); a
// background call waiting gives its turn back meanwhile.
func waitReady(ctx context.Context, ready <-chan struct{}, what string) error {
	select {
	case <-ready:
		return nil
	default:
	}
	var err error
	Blocking(ctx, func() {
		select {
		case <-ready:
		case <-ctx.Done():
			err = fmt.Errorf("%s: wait ready: %w", what, ctx.Err())
		}
	})
	return err
}

// Len returns the number of keys held.
func (v *View) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.data)
}

// Range calls fn for every key until fn returns false. fn must not call the View's
// methods that write (none are exported) and should be quick: updates wait meanwhile.
func (v *View) Range(fn func(key string, value []byte) bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for k, val := range v.data {
		if !fn(k, val) {
			return
		}
	}
}

// Tail delivers the records appended to every partition of a topic after it started
// (read_committed, no consumer group), e.g. quality-gate replies for the edge.
type Tail struct {
	topic string
	fn    func(*Record)
	cfg   config
	ready chan struct{}
}

// NewTail creates a tail of topic calling fn, from Run's goroutine, for each new record.
// Returns an error when topic is empty, fn is nil or no brokers are configured.
func NewTail(topic string, fn func(*Record), opts ...Option) (*Tail, error) {
	if topic == "" || fn == nil {
		return nil, errors.New("new tail: topic and callback required")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("new tail %s: %w", topic, err)
	}
	return &Tail{topic: topic, fn: fn, cfg: cfg, ready: make(chan struct{})}, nil
}

// WaitReady blocks until the tail has fixed its start offsets (records produced afterwards
// are delivered) or ctx ends.
func (t *Tail) WaitReady(ctx context.Context) error {
	return waitReady(ctx, t.ready, "tail "+t.topic)
}

// Run consumes from the end offsets found at its start until ctx ends (returning nil).
func (t *Tail) Run(ctx context.Context) error {
	admCl, err := kgo.NewClient(t.cfg.baseOpts()...)
	if err != nil {
		return fmt.Errorf("tail %s: %w", t.topic, err)
	}
	ends, err := kadm.NewClient(admCl).ListEndOffsets(ctx, t.topic)
	if err == nil {
		err = ends.Error()
	}
	admCl.Close()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("tail %s: end offsets: %w", t.topic, err)
	}
	start := make(map[int32]kgo.Offset)
	ends.Each(func(o kadm.ListedOffset) { start[o.Partition] = kgo.NewOffset().At(o.Offset) })
	cl, err := kgo.NewClient(t.cfg.baseOpts(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{t.topic: start}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)...)
	if err != nil {
		return fmt.Errorf("tail %s: %w", t.topic, err)
	}
	defer cl.Close()
	close(t.ready)
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if fetches.IsClientClosed() {
			return fmt.Errorf("tail %s: client closed", t.topic)
		}
		fetches.EachRecord(func(r *kgo.Record) { t.fn(fromKgoRecord(r)) })
	}
}
