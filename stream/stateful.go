package stream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// StatefulRunner runs a StatefulGroup exactly once: per poll batch, outputs, table writes
// and input offsets are committed in one Kafka transaction. Run once per runner; Kill may
// be called from any goroutine.
type StatefulRunner struct {
	g     StatefulGroup
	cfg   config
	sess  *kgo.GroupTransactSession
	ks    *killSwitch
	proc  context.Context
	stop  context.CancelFunc
	table *memTable
	part  kgo.TopicPartitioner // partitions table writes like the producer does
	txnID string

	mu     sync.Mutex
	owned  map[int32]partState // partitions of the inputs (and table) the member owns
	epoch  uint64              // bumped on every assignment or invalidation of a partition
	wake   context.CancelFunc  // ends the poll in progress, nil when not polling
	nParts int
}

// partState tracks one owned partition: whether its table partition is restored, and the
// epoch of its assignment (a restore applies only if the epoch did not change meanwhile).
type partState struct {
	restored bool
	epoch    uint64
}

// NewStatefulRunner validates g and creates its transactional group client. The
// transactional id is the one given with WithTransactionalID, or else the group name and a
// random suffix (unique to this member). Returns an error when the group lacks a name,
// inputs, table or handler, when Tick > 0 without OnTick, or when no brokers are configured.
func NewStatefulRunner(g StatefulGroup, opts ...Option) (*StatefulRunner, error) {
	if g.Name == "" || len(g.Inputs) == 0 || g.Table == "" || g.Handler == nil {
		return nil, errors.New("new stateful runner: group needs a name, inputs, a table and a handler")
	}
	if g.Tick > 0 && g.OnTick == nil {
		return nil, fmt.Errorf("new stateful runner %s: Tick set without OnTick", g.Name)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("new stateful runner %s: %w", g.Name, err)
	}
	txnID := cfg.txnID
	if txnID == "" {
		var suffix [6]byte
		if _, err := rand.Read(suffix[:]); err != nil {
			return nil, fmt.Errorf("new stateful runner %s: transactional id: %w", g.Name, err)
		}
		txnID = g.Name + "-" + hex.EncodeToString(suffix[:])
	}
	r := &StatefulRunner{
		g:     g,
		cfg:   cfg,
		ks:    newKillSwitch(cfg.dial),
		table: newMemTable(),
		part:  KeyPartitioner().ForTopic(g.Table),
		txnID: txnID,
		owned: make(map[int32]partState),
	}
	r.proc, r.stop = context.WithCancel(context.Background())
	sess, err := kgo.NewGroupTransactSession(cfg.baseOpts(append(append(groupLiveness(),
		kgo.WithContext(r.proc),
		kgo.Dialer(r.ks.dial),
		kgo.TransactionalID(txnID),
		kgo.ConsumerGroup(g.Name),
		kgo.ConsumeTopics(g.Inputs...),
		// Range assigns partition p of every input to the same member: the member that
		// owns p of the inputs owns p of the table.
		kgo.Balancers(kgo.RangeBalancer()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
	), cfg.rebalanceOpts(g.Name, rebalance{assigned: r.onAssigned, revoked: r.onRevoked, lost: r.onRevoked})...)...)...)
	if err != nil {
		r.stop()
		return nil, fmt.Errorf("new stateful runner %s: %w", g.Name, err)
	}
	r.sess = sess
	cfg.health.member(g.Name, sess.Client())
	cfg.health.tables(g.Name, r.unrestored)
	return r, nil
}

// onAssigned marks newly assigned partitions for a restore and wakes Run's poll so that
// the restore starts at once, even when no record of them is ever fetched.
func (r *StatefulRunner) onAssigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ps := range m {
		for _, p := range ps {
			if _, ok := r.owned[p]; !ok {
				r.epoch++
				r.owned[p] = partState{epoch: r.epoch}
			}
		}
	}
	if r.wake != nil {
		r.wake()
	}
}

func (r *StatefulRunner) onRevoked(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ps := range m {
		for _, p := range ps {
			delete(r.owned, p)
			r.table.drop(p)
		}
	}
}

// needRestore marks owned partitions ps for a restore before their next use.
func (r *StatefulRunner) needRestore(ps map[int32]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range ps {
		if _, ok := r.owned[p]; ok {
			r.epoch++
			r.owned[p] = partState{epoch: r.epoch}
		}
	}
}

// pendingLocked returns the owned partitions not restored, with their epochs. r.mu held.
func (r *StatefulRunner) pendingLocked() map[int32]uint64 {
	var pending map[int32]uint64
	for p, st := range r.owned {
		if !st.restored {
			if pending == nil {
				pending = make(map[int32]uint64)
			}
			pending[p] = st.epoch
		}
	}
	return pending
}

// unrestored returns how many owned partitions wait for their table to be restored.
func (r *StatefulRunner) unrestored() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pendingLocked())
}

// restorePending restores every owned partition not yet restored, until none is left (a
// partition assigned again meanwhile is restored again). It returns ctx's error as soon as
// ctx ends.
func (r *StatefulRunner) restorePending(ctx context.Context) error {
	for {
		r.mu.Lock()
		pending := r.pendingLocked()
		r.mu.Unlock()
		if len(pending) == 0 {
			return nil
		}
		parts := make([]int32, 0, len(pending))
		for p := range pending {
			parts = append(parts, p)
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		start := time.Now()
		r.cfg.logger.Debug("restoring table partitions", "group", r.g.Name, "partitions", parts)
		data, err := restoreTable(ctx, &r.cfg, r.g.Table, parts)
		if err != nil {
			return fmt.Errorf("stateful %s: %w", r.g.Name, err)
		}
		r.mu.Lock()
		for _, p := range parts {
			if st, ok := r.owned[p]; ok && !st.restored && st.epoch == pending[p] {
				r.table.setPartition(p, data[p])
				r.owned[p] = partState{restored: true, epoch: st.epoch}
			}
		}
		r.mu.Unlock()
		r.cfg.logger.Info("table partitions restored", "group", r.g.Name, "partitions", parts,
			"took", time.Since(start))
	}
}

func (r *StatefulRunner) ready(p int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.owned[p].restored
}

// tablePartitions returns the table topic's partition count (looked up once).
func (r *StatefulRunner) tablePartitions(ctx context.Context) (int, error) {
	if r.nParts > 0 {
		return r.nParts, nil
	}
	tds, err := kadm.NewClient(r.sess.Client()).ListTopics(ctx, r.g.Table)
	if err != nil {
		return 0, fmt.Errorf("stateful %s: describe table %s: %w", r.g.Name, r.g.Table, err)
	}
	td, ok := tds[r.g.Table]
	if !ok || td.Err != nil || len(td.Partitions) == 0 {
		return 0, fmt.Errorf("stateful %s: table topic %s is missing (create it with EnsureTopics)", r.g.Name, r.g.Table)
	}
	r.nParts = len(td.Partitions)
	return r.nParts, nil
}

// Run consumes until ctx ends (then it ends the transaction in hand with a commit and
// leaves the group, returning nil) or a fatal error (a transaction that cannot be ended, a
// restore that fails). After Kill it returns ErrKilled.
//
// Before handling any record of a newly assigned partition, and as soon as the partition is
// assigned (whether or not records are waiting), Run restores the table partition: see
// restoreTable. A restore in progress ends as soon as ctx ends or Kill is called. At start
// Run initialises the transactional producer id, which fences (aborts at once) an open
// transaction of a previous member that used the same transactional id.
func (r *StatefulRunner) Run(ctx context.Context) error {
	defer r.stop()
	// work ends with ctx (shutdown) or with Kill (r.proc).
	work, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	stopAfter := context.AfterFunc(r.proc, cancelWork)
	defer stopAfter()
	if _, err := r.tablePartitions(work); err != nil {
		return r.fail(ctx, err)
	}
	if _, _, err := r.sess.Client().ProducerID(work); err != nil {
		return r.fail(ctx, fmt.Errorf("stateful %s: init producer id: %w", r.g.Name, err))
	}
	nextTick := time.Now().Add(r.g.Tick)
	for {
		if ctx.Err() != nil {
			return r.fail(ctx, nil)
		}
		if err := r.restorePending(work); err != nil {
			return r.fail(ctx, err)
		}
		var (
			pollCtx context.Context
			cancel  context.CancelFunc
		)
		if r.g.Tick > 0 {
			pollCtx, cancel = context.WithDeadline(work, nextTick)
		} else {
			pollCtx, cancel = context.WithCancel(work)
		}
		r.mu.Lock()
		if len(r.pendingLocked()) > 0 { // assigned since restorePending returned
			r.mu.Unlock()
			cancel()
			continue
		}
		r.wake = cancel
		r.mu.Unlock()
		fetches := r.sess.PollRecords(pollCtx, 5000)
		r.mu.Lock()
		r.wake = nil
		r.mu.Unlock()
		cancel()
		if r.ks.isKilled() {
			return ErrKilled
		}
		if fetches.IsClientClosed() {
			return fmt.Errorf("stateful %s: client closed", r.g.Name)
		}
		r.cfg.fetched(r.g.Name, fetches)
		// Records of a partition assigned during the poll may be in hand: restore first.
		if err := r.restorePending(work); err != nil {
			return r.fail(ctx, err)
		}
		if fetches.NumRecords() > 0 {
			if err := r.runBatch(fetches); err != nil {
				return r.fail(ctx, err)
			}
		}
		if r.g.Tick > 0 && !time.Now().Before(nextTick) {
			nextTick = time.Now().Add(r.g.Tick)
			if err := r.runTick(); err != nil {
				return r.fail(ctx, err)
			}
		}
	}
}

// fail ends Run: ErrKilled after Kill; otherwise it closes the session (leaving the group)
// and returns err, or nil when err is nil or only reports that ctx ended.
func (r *StatefulRunner) fail(ctx context.Context, err error) error {
	if r.ks.isKilled() {
		return ErrKilled
	}
	r.sess.Close()
	if err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}

// txn collects what one transaction produced.
type txn struct {
	mu      sync.Mutex
	err     error
	touched map[int32]bool // table partitions written
}

func (t *txn) promise(_ *kgo.Record, err error) {
	if err != nil {
		t.mu.Lock()
		if t.err == nil {
			t.err = err
		}
		t.mu.Unlock()
	}
}

// emit produces outs inside the open transaction and applies table writes to memory.
func (r *StatefulRunner) emit(t *txn, outs []Output) error {
	for _, o := range outs {
		kr, err := toKgoRecord(o)
		if err != nil {
			return err
		}
		if o.Topic == r.g.Table {
			p := int32(r.part.Partition(kr, r.nParts))
			if r.ready(p) { // a partition we do not own is not kept in memory
				r.table.put(p, o.Key, o.Value)
				t.touched[p] = true
			}
		}
		r.sess.Produce(r.proc, kr, t.promise)
		r.cfg.metrics.countProducedOne(o.Topic)
	}
	return nil
}

// runBatch handles every record of fetches in one transaction.
func (r *StatefulRunner) runBatch(fetches kgo.Fetches) error {
	if err := r.sess.Begin(); err != nil {
		return fmt.Errorf("stateful %s: begin: %w", r.g.Name, err)
	}
	t := &txn{touched: make(map[int32]bool)}
	abort := false
	var handled []*Record
	var parts [][]*kgo.Record
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		if abort || len(fp.Records) == 0 {
			return
		}
		if !r.ready(fp.Partition) {
			// Fetched before a rebalance took the partition: the session aborts anyway.
			abort = true
			return
		}
		parts = append(parts, fp.Records)
	})
	if !abort {
		// On equal timestamps the topic listed first in Inputs goes first (the session group
		// lists sessions before captures before results: their causal order).
		slices.SortStableFunc(parts, func(a, b []*kgo.Record) int {
			return slices.Index(r.g.Inputs, a[0].Topic) - slices.Index(r.g.Inputs, b[0].Topic)
		})
		for _, kr := range mergeByTimestamp(parts) {
			if !r.ready(kr.Partition) {
				// Revoked or lost during the batch: its table partition is gone, and a handler
				// would see no state. The transaction aborts; the records come back after the
				// partition is restored (here or at its new owner).
				abort = true
				break
			}
			rec := fromKgoRecord(kr)
			outs, attempts, herr := callWithRetry(r.proc, &r.cfg, r.g.Name, rec, func(ctx context.Context) ([]Output, error) {
				return r.g.Handler(ctx, rec, r.table)
			})
			if r.proc.Err() != nil {
				abort = true
				break
			}
			if herr != nil {
				r.cfg.logger.Warn("record dead-lettered", "group", r.g.Name, "topic", rec.Topic,
					"partition", rec.Partition, "offset", rec.Offset, "attempts", attempts, "err", herr)
				r.sess.Produce(r.proc, deadLetter(r.g.Name, kr, attempts, herr), t.promise)
				r.cfg.metrics.deadLettered(r.g.Name, rec.Topic)
			} else if err := r.emit(t, outs); err != nil {
				r.cfg.logger.Warn("invalid handler output; record dead-lettered", "group", r.g.Name, "topic", rec.Topic, "err", err)
				r.sess.Produce(r.proc, deadLetter(r.g.Name, kr, attempts, err), t.promise)
			}
			handled = append(handled, rec)
		}
	}
	return r.end(t, abort, func() {
		for _, rec := range handled {
			r.cfg.metrics.recordDone(r.g.Name, rec.Topic)
		}
	})
}

// mergeByTimestamp interleaves the records of several topic-partitions in timestamp order,
// keeping each partition's own (offset) order: a k-way merge that takes, at each step, the
// head with the earliest timestamp (the earlier partition on a tie). A stateful group
// consumes several co-partitioned topics, and an event must not be handled before an
// earlier event of another topic fetched in the same poll (a session's result before the
// session itself), as Kafka Streams orders its inputs.
func mergeByTimestamp(parts [][]*kgo.Record) []*kgo.Record {
	if len(parts) == 1 {
		return parts[0]
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]*kgo.Record, 0, n)
	heads := make([]int, len(parts))
	for len(out) < n {
		best := -1
		for i, p := range parts {
			if heads[i] == len(p) {
				continue
			}
			if best < 0 || p[heads[i]].Timestamp.Before(parts[best][heads[best]].Timestamp) {
				best = i
			}
		}
		out = append(out, parts[best][heads[best]])
		heads[best]++
	}
	return out
}

// end ends the open transaction, committing unless abort or a produce failed; on an abort
// the partitions it wrote are restored from the topic before their next use.
func (r *StatefulRunner) end(t *txn, abort bool, onCommit func()) error {
	if r.ks.isKilled() {
		return ErrKilled
	}
	ctx, cancel := context.WithTimeout(r.proc, time.Minute)
	defer cancel()
	if err := r.sess.Client().Flush(ctx); err != nil {
		abort = true
	}
	t.mu.Lock()
	if t.err != nil {
		r.cfg.logger.Warn("produce in transaction failed; aborting", "group", r.g.Name, "err", t.err)
		abort = true
	}
	t.mu.Unlock()
	try := kgo.TryCommit
	if abort {
		try = kgo.TryAbort
	}
	committed, err := r.sess.End(ctx, try)
	r.cfg.metrics.transaction(r.g.Name, committed)
	if !committed {
		r.needRestore(t.touched)
	} else if onCommit != nil {
		onCommit()
	}
	if err != nil {
		return fmt.Errorf("stateful %s: end transaction: %w", r.g.Name, err)
	}
	return nil
}

// runTick calls OnTick and produces its outputs in a transaction of their own.
func (r *StatefulRunner) runTick() error {
	if err := r.sess.Begin(); err != nil {
		return fmt.Errorf("stateful %s: begin tick: %w", r.g.Name, err)
	}
	t := &txn{touched: make(map[int32]bool)}
	outs, err := safeCall(r.proc, func(ctx context.Context) ([]Output, error) {
		return r.g.OnTick(ctx, time.Now(), r.table)
	})
	abort := false
	if err != nil {
		r.cfg.logger.Warn("tick failed", "group", r.g.Name, "err", err)
		abort = true
	} else if err := r.emit(t, outs); err != nil {
		r.cfg.logger.Warn("invalid tick output", "group", r.g.Name, "err", err)
		abort = true
	}
	return r.end(t, abort, nil)
}

// Table returns the member's in-memory table (the partitions it owns). Reads are safe for
// concurrent use; contents change as records are handled.
func (r *StatefulRunner) Table() Table { return r.table }

// Kill simulates a crash: every connection is severed at once; the open transaction is
// neither committed nor aborted and the group is not left. Run returns ErrKilled.
//
// What a successor waits for: the group hands the killed member's partitions over when its
// session times out (kgo.SessionTimeout; a join in progress waits at most the rebalance
// timeout, kgo.RebalanceTimeout). The successor then neither reads the input offsets
// (require-stable offset fetch) nor finishes restoring the table (see restoreTable) until
// the killed member's open transaction has ended: the broker aborts it when the transaction
// timeout (kgo.TransactionTimeout, counted from the transaction's first write) passes, or at
// once when a member started with the same WithTransactionalID initialises its producer id
// (which Run does first). Tests set a session timeout of 1.5s, a rebalance timeout of 3s and
// a transaction timeout of 2s so that a takeover is done within a few seconds.
func (r *StatefulRunner) Kill() {
	r.ks.kill()
	r.stop()
	r.sess.Close()
}
