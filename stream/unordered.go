package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// WithUnordered makes a Runner handle up to n records at once, each as soon as one of them
// is done, in any order: records of one partition, and of one key, too. The runner polls only
// what it has room for, so a record waits in Kafka (where Backlog sees it), not in the
// runner, and no record waits for the slowest of a poll. The committed offset of a partition
// is its finished prefix, committed as records finish, so a crash or a rebalance hands every
// unfinished record over again (at least once, as ever). A failed commit is logged and made
// again with the next record finished (not fatal, unlike the default mode's). A partition
// taken away waits for its records in hand, however long they take: a handler slower than
// the group's rebalance timeout gets its member expelled and its records handled again.
//
// For a stateless group whose outputs do not depend on the order of its inputs and whose
// consumers fold results by what they are about, not by when they come: the quality gate,
// OCR and liveness, whose results the session group files under their capture and drops when
// the capture was replaced. A session's front and back are then read side by side, on two
// cores, and a capture that takes long holds back no other. n < 1 keeps the default: records
// of a partition in order, partitions of a poll side by side.
func WithUnordered(n int) Option { return func(c *config) { c.unordered = n } }

// unorderedPartition is what an unordered runner holds of one partition it took records of.
type unorderedPartition struct {
	pending   map[int64]*kgo.Record // taken, not finished, by offset
	next      int64                 // offset after the last record taken
	committed int64                 // the last offset committed, -1 before any
}

// low is the offset below which every record taken is finished.
func (p *unorderedPartition) low() int64 {
	low := p.next
	for off := range p.pending {
		low = min(low, off)
	}
	return low
}

// unordered is the state of a Runner run WithUnordered.
type unordered struct {
	slots      chan struct{} // one token per record in hand
	committing sync.Mutex    // one commit at a time, its offsets read under it: none rewinds another
	mu         sync.Mutex
	finished   *sync.Cond // signalled under mu whenever a record is finished
	parts      map[topicPartition]*unorderedPartition
	dirty      chan struct{} // a record was finished: something may be committed
	fatal      error         // the first fatal error of a record, under mu
	stopPoll   context.CancelFunc
}

type topicPartition struct {
	topic string
	part  int32
}

// newUnordered makes the state of a runner handling n records at once; killed is the
// runner's processing context, whose end (Kill) wakes a release waiting for records.
func newUnordered(n int, killed context.Context) *unordered {
	u := &unordered{
		slots: make(chan struct{}, n),
		parts: make(map[topicPartition]*unorderedPartition),
		dirty: make(chan struct{}, 1),
	}
	u.finished = sync.NewCond(&u.mu)
	context.AfterFunc(killed, func() {
		u.mu.Lock()
		u.finished.Broadcast()
		u.mu.Unlock()
	})
	return u
}

// unorderedRebalance is the rebalance callbacks of an unordered runner: a partition taken
// away is released first (its records in hand finished, their prefix committed), a
// partition lost is forgotten.
func (r *Runner) unorderedRebalance() rebalance {
	return rebalance{
		revoked: func(ctx context.Context, _ *kgo.Client, m map[string][]int32) { r.release(ctx, m, false) },
		lost:    func(ctx context.Context, _ *kgo.Client, m map[string][]int32) { r.release(ctx, m, true) },
	}
}

// runUnordered is Run for a runner WithUnordered.
func (r *Runner) runUnordered(ctx context.Context) error {
	defer r.stop()
	u := r.unordered
	commits, stopCommits := context.WithCancel(r.proc)
	var loops, workers sync.WaitGroup
	loops.Go(func() { r.commitLoop(commits) })
	err := r.takeUnordered(ctx, &workers)
	workers.Wait()
	stopCommits()
	loops.Wait()
	if r.ks.isKilled() {
		return ErrKilled
	}
	u.mu.Lock()
	if err == nil {
		err = u.fatal
	}
	u.mu.Unlock()
	r.commitFinished(nil)
	r.cl.AllowRebalance()
	r.cl.Close() // leaves the group: release commits nothing more, every record being finished
	return err
}

// takeUnordered polls as many records as there are free slots and hands each to a worker,
// until ctx ends, the runner is killed or a record fails fatally.
func (r *Runner) takeUnordered(ctx context.Context, workers *sync.WaitGroup) error {
	u := r.unordered
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u.mu.Lock()
	u.stopPoll = cancel // a fatal error ends a poll waiting for records
	u.mu.Unlock()
	for {
		select { // wait for room: one slot at least
		case u.slots <- struct{}{}:
			<-u.slots
		case <-ctx.Done():
			return nil
		case <-r.proc.Done():
			return nil
		}
		if ctx.Err() != nil || r.failed() {
			return nil
		}
		fetches := r.cl.PollRecords(ctx, cap(u.slots)-len(u.slots))
		if r.ks.isKilled() || r.failed() || ctx.Err() != nil && fetches.Empty() {
			r.cl.AllowRebalance() // what was polled is not registered: it is handed over again
			return nil
		}
		if fetches.IsClientClosed() {
			return fmt.Errorf("runner %s: client closed", r.g.Name)
		}
		r.cfg.fetched(r.g.Name, fetches)
		fetches.EachRecord(func(kr *kgo.Record) {
			u.slots <- struct{}{} // never blocks: the poll took no more than the free slots
			tp := topicPartition{kr.Topic, kr.Partition}
			u.mu.Lock()
			p := u.parts[tp]
			if p == nil {
				p = &unorderedPartition{pending: make(map[int64]*kgo.Record), committed: -1}
				u.parts[tp] = p
			}
			p.pending[kr.Offset] = kr
			p.next = kr.Offset + 1
			u.mu.Unlock()
			workers.Go(func() {
				defer func() { <-u.slots }()
				r.finish(tp, kr, r.handleOne(kr))
			})
		})
		r.cl.AllowRebalance() // every record polled is registered: a revocation waits for it
	}
}

// finish marks kr finished, or keeps the first fatal error (the record stays unfinished and
// is handed over again), and signals the commit loop.
func (r *Runner) finish(tp topicPartition, kr *kgo.Record, err error) {
	u := r.unordered
	u.mu.Lock()
	if err != nil {
		if u.fatal == nil && !errors.Is(err, ErrKilled) {
			u.fatal = err
			if u.stopPoll != nil {
				u.stopPoll()
			}
		}
	} else if p := u.parts[tp]; p != nil && p.pending[kr.Offset] == kr {
		delete(p.pending, kr.Offset)
	}
	u.finished.Broadcast()
	u.mu.Unlock()
	select {
	case u.dirty <- struct{}{}:
	default:
	}
}

// failed reports whether a record failed fatally.
func (r *Runner) failed() bool {
	r.unordered.mu.Lock()
	defer r.unordered.mu.Unlock()
	return r.unordered.fatal != nil
}

// commitLoop commits the finished prefixes whenever a record is finished, until ctx ends.
func (r *Runner) commitLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.unordered.dirty:
			r.commitFinished(nil)
		}
	}
}

// commitFinished commits the finished prefix of the partitions in only (every partition
// held when only is nil) where it moved. A failed commit is logged: its records are handed
// over again after a crash or a rebalance.
func (r *Runner) commitFinished(only map[topicPartition]bool) {
	u := r.unordered
	u.committing.Lock()
	defer u.committing.Unlock()
	if r.ks.isKilled() {
		return
	}
	offsets := map[string]map[int32]kgo.EpochOffset{}
	u.mu.Lock()
	for tp, p := range u.parts {
		if only != nil && !only[tp] {
			continue
		}
		if off := p.low(); off > p.committed {
			if offsets[tp.topic] == nil {
				offsets[tp.topic] = map[int32]kgo.EpochOffset{}
			}
			offsets[tp.topic][tp.part] = kgo.EpochOffset{Epoch: -1, Offset: off}
		}
	}
	u.mu.Unlock()
	if len(offsets) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := commitSync(ctx, r.cl, offsets); err != nil {
		r.cfg.logger.Warn("commit failed; the records are handed over again", "group", r.g.Name, "err", err)
		return
	}
	u.mu.Lock()
	for t, parts := range offsets {
		for n, o := range parts {
			if p := u.parts[topicPartition{t, n}]; p != nil && o.Offset > p.committed {
				p.committed = o.Offset
			}
		}
	}
	u.mu.Unlock()
}

// release hands partitions over: unless lost, it waits for their records in hand (not once
// the runner is killed: Kill wakes it) and commits their finished prefix; then the runner
// forgets them.
func (r *Runner) release(_ context.Context, m map[string][]int32, lost bool) {
	u := r.unordered
	gone := map[topicPartition]bool{}
	for t, parts := range m {
		for _, n := range parts {
			gone[topicPartition{t, n}] = true
		}
	}
	if !lost {
		u.mu.Lock()
		for r.holds(gone) && !r.ks.isKilled() && u.fatal == nil {
			u.finished.Wait()
		}
		u.mu.Unlock()
		r.commitFinished(gone)
	}
	u.mu.Lock()
	for tp := range gone {
		delete(u.parts, tp)
	}
	u.mu.Unlock()
}

// holds reports, under mu, whether a record of a partition in tps is in hand.
func (r *Runner) holds(tps map[topicPartition]bool) bool {
	for tp := range tps {
		if p := r.unordered.parts[tp]; p != nil && len(p.pending) > 0 {
			return true
		}
	}
	return false
}
