package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultAsyncCommitInterval is how often an AsyncRunner commits when its group says nothing.
const DefaultAsyncCommitInterval = time.Second

// AsyncGroup declares an at-least-once consumer group whose records finish out of order:
// the runner hands each record over (Take) and the group finishes it later (Done), possibly
// after records behind it. For work that waits without holding back the records behind it:
// a webhook retry due in an hour. The committed offset of a partition stays at its lowest
// unfinished record, so a restart or a rebalance hands every unfinished record over again.
type AsyncGroup struct {
	Name  string // consumer group id, e.g. "webhook-delivery"
	Input string // the one topic consumed

	// Take receives each record, from Run's poll loop, in offset order per partition; it
	// must not block. The record stays unfinished until Done is called with it.
	Take func(rec *Record)

	// Release is called when partitions this member took records of leave it: on a
	// rebalance, when Run ends, and when they are lost (a fatal group error: taken away
	// without a clean handover). It must forget their records not started and, unless lost,
	// return once the work already started on them has ended (finished or not); the runner
	// then commits the partitions' finished prefix, and nothing of lost ones.
	Release func(parts []int32, lost bool)

	CommitInterval time.Duration // how often finished offsets are committed (0: 1s)
}

// AsyncRunner runs an AsyncGroup. Done may be called from any goroutine; Run once.
type AsyncRunner struct {
	g   AsyncGroup
	cfg config
	cl  *kgo.Client

	releasing  sync.Mutex // one release at a time (a rebalance may meet Run's own at shutdown)
	committing sync.Mutex // one commit at a time, its offsets read under it: none rewinds another
	mu         sync.Mutex
	parts      map[int32]*asyncPartition
}

// asyncPartition is what the runner holds of one partition it took records of.
type asyncPartition struct {
	pending   map[int64]*Record // taken, not finished, by offset
	next      int64             // offset after the last record taken
	committed int64             // last offset committed
}

// low is the offset below which every record taken is finished.
func (p *asyncPartition) low() int64 {
	low := p.next
	for off := range p.pending {
		low = min(low, off)
	}
	return low
}

// NewAsyncRunner validates g and creates its consumer-group client. Returns an error when
// the group has no name, input, Take or Release, the interval is negative, or no brokers
// are configured.
func NewAsyncRunner(g AsyncGroup, opts ...Option) (*AsyncRunner, error) {
	if g.Name == "" || g.Input == "" || g.Take == nil || g.Release == nil {
		return nil, errors.New("new async runner: group needs a name, an input, Take and Release")
	}
	if g.CommitInterval < 0 {
		return nil, fmt.Errorf("new async runner %s: negative commit interval", g.Name)
	}
	if g.CommitInterval == 0 {
		g.CommitInterval = DefaultAsyncCommitInterval
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("new async runner %s: %w", g.Name, err)
	}
	r := &AsyncRunner{g: g, cfg: cfg, parts: make(map[int32]*asyncPartition)}
	r.cl, err = kgo.NewClient(cfg.baseOpts(append(append(groupLiveness(),
		kgo.ConsumerGroup(g.Name),
		kgo.ConsumeTopics(g.Input),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(), // Release never races a record being taken
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	), cfg.rebalanceOpts(g.Name, rebalance{
		revoked: func(ctx context.Context, _ *kgo.Client, m map[string][]int32) { r.release(ctx, m[g.Input], false) },
		lost:    func(ctx context.Context, _ *kgo.Client, m map[string][]int32) { r.release(ctx, m[g.Input], true) },
	})...)...)...)
	if err != nil {
		return nil, fmt.Errorf("new async runner %s: %w", g.Name, err)
	}
	cfg.health.member(g.Name, r.cl)
	return r, nil
}

// Done finishes rec, a record handed to Take. A record of a partition released meanwhile
// (or handed over again since) is ignored.
func (r *AsyncRunner) Done(rec *Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.parts[rec.Partition]; p != nil && p.pending[rec.Offset] == rec {
		delete(p.pending, rec.Offset)
		r.cfg.metrics.recordDone(r.g.Name, rec.Topic)
	}
}

// Run consumes until ctx ends, committing finished offsets every CommitInterval. When ctx
// ends it releases every partition (Release waits for the work started), commits what is
// finished, leaves the group and returns nil; unfinished records are handed over again
// later. It returns an error when the client is closed under it.
func (r *AsyncRunner) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var loops sync.WaitGroup
	loops.Go(func() { r.commitLoop(ctx) })
	var err error
	for ctx.Err() == nil {
		fetches := r.cl.PollFetches(ctx)
		if fetches.IsClientClosed() {
			err = fmt.Errorf("async runner %s: client closed", r.g.Name)
			break
		}
		r.cfg.fetched(r.g.Name, fetches)
		fetches.EachRecord(func(kr *kgo.Record) {
			rec := fromKgoRecord(kr)
			r.mu.Lock()
			p := r.parts[rec.Partition]
			if p == nil {
				p = &asyncPartition{pending: make(map[int64]*Record)}
				r.parts[rec.Partition] = p
			}
			p.next = rec.Offset + 1
			p.pending[rec.Offset] = rec
			r.mu.Unlock()
			r.g.Take(rec)
		})
		r.cl.AllowRebalance()
	}
	cancel()
	loops.Wait()
	r.mu.Lock()
	owned := make([]int32, 0, len(r.parts))
	for p := range r.parts {
		owned = append(owned, p)
	}
	r.mu.Unlock()
	r.release(context.Background(), owned, false)
	r.cl.AllowRebalance()
	r.cl.Close()
	return err
}

// commitLoop commits every CommitInterval until ctx ends.
func (r *AsyncRunner) commitLoop(ctx context.Context) {
	t := time.NewTicker(r.g.CommitInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.commit(ctx, nil)
		}
	}
}

// commit commits the finished prefix of parts (every partition held when parts is nil).
func (r *AsyncRunner) commit(ctx context.Context, parts []int32) {
	r.committing.Lock()
	defer r.committing.Unlock()
	offsets := map[int32]kgo.EpochOffset{}
	r.mu.Lock()
	for n, p := range r.parts {
		if parts != nil && !slices.Contains(parts, n) {
			continue
		}
		if off := p.low(); off > p.committed {
			offsets[n] = kgo.EpochOffset{Epoch: -1, Offset: off}
		}
	}
	r.mu.Unlock()
	if len(offsets) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := commitSync(cctx, r.cl, map[string]map[int32]kgo.EpochOffset{r.g.Input: offsets}); err != nil {
		r.cfg.logger.Warn("commit failed; the records are handed over again", "group", r.g.Name, "err", err)
		return
	}
	r.mu.Lock()
	for n, o := range offsets {
		if p := r.parts[n]; p != nil && o.Offset > p.committed {
			p.committed = o.Offset
		}
	}
	r.mu.Unlock()
}

// release hands parts over: the group forgets them (waiting for the work started unless
// lost), the finished prefix is committed unless lost, and the runner drops them. Only
// partitions the runner took records of are released.
func (r *AsyncRunner) release(ctx context.Context, parts []int32, lost bool) {
	r.releasing.Lock()
	defer r.releasing.Unlock()
	r.mu.Lock()
	parts = slices.DeleteFunc(slices.Clone(parts), func(n int32) bool { return r.parts[n] == nil })
	r.mu.Unlock()
	if len(parts) == 0 {
		return
	}
	r.g.Release(parts, lost)
	if !lost {
		r.commit(ctx, parts)
	}
	r.mu.Lock()
	for _, n := range parts {
		delete(r.parts, n)
	}
	r.mu.Unlock()
}
