package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults of a BatchGroup whose MaxRecords or MaxWait is zero.
const (
	DefaultBatchMaxRecords = 10000
	DefaultBatchMaxWait    = time.Second
)

// shutdownFlushTimeout bounds the one last handler call a BatchRunner makes for the records
// in hand when its context ends.
const shutdownFlushTimeout = 10 * time.Second

// BatchHandler handles one batch of records, in offset order per partition (partitions are
// interleaved). It must be idempotent: after a crash, a failed commit or a rebalance the
// same records, or a batch overlapping them, are handed to it again. It must not keep recs.
type BatchHandler func(ctx context.Context, recs []*Record) error

// BatchGroup declares an at-least-once consumer group that hands records to its handler in
// batches (sinks: ClickHouse). A batch is handed over once it holds MaxRecords records or
// MaxWait has passed since its first record arrived, whichever comes first.
type BatchGroup struct {
	Name       string   // consumer group id, e.g. "clickhouse-sink"
	Inputs     []string // topics consumed
	MaxRecords int      // at most this many records per batch (0: DefaultBatchMaxRecords)
	MaxWait    time.Duration
	Handler    BatchHandler
}

// BatchRunner runs a BatchGroup at least once: the offsets of a batch are committed only
// after the handler returned nil for the whole batch. When the handler fails, the runner
// stops consuming and retries the same batch with backoff (WithRetry's initial backoff,
// doubling, capped at 32× it and at 10s; WithRetry's attempt count does not apply) until it
// succeeds or the context ends: it never commits past, skips or dead-letters a record.
// Rebalances wait while a batch is in hand (kgo.BlockRebalanceOnPoll), so keep MaxWait and
// outages shorter than the group's rebalance timeout when several members run; a member
// kicked out meanwhile fails its commit, and the records are handled again by their new
// owner. Run once per BatchRunner; Kill may be called from any goroutine.
type BatchRunner struct {
	g    BatchGroup
	cfg  config
	cl   *kgo.Client
	ks   *killSwitch
	stop context.CancelFunc // cancels the processing context (Kill)
	proc context.Context
}

// NewBatchRunner validates g and creates its consumer-group client. Returns an error when
// the group has no name, inputs or handler, MaxRecords or MaxWait is negative, or no
// brokers are configured.
func NewBatchRunner(g BatchGroup, opts ...Option) (*BatchRunner, error) {
	if g.Name == "" || len(g.Inputs) == 0 || g.Handler == nil {
		return nil, errors.New("new batch runner: group needs a name, inputs and a handler")
	}
	if g.MaxRecords < 0 || g.MaxWait < 0 {
		return nil, fmt.Errorf("new batch runner %s: MaxRecords and MaxWait must be >= 0", g.Name)
	}
	if g.MaxRecords == 0 {
		g.MaxRecords = DefaultBatchMaxRecords
	}
	if g.MaxWait == 0 {
		g.MaxWait = DefaultBatchMaxWait
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("new batch runner %s: %w", g.Name, err)
	}
	cl, ks, proc, stop, err := newGroupClient(cfg, g.Name, g.Inputs, rebalance{})
	if err != nil {
		return nil, fmt.Errorf("new batch runner %s: %w", g.Name, err)
	}
	return &BatchRunner{g: g, cfg: cfg, cl: cl, ks: ks, stop: stop, proc: proc}, nil
}

// Run consumes until ctx ends or a fatal error. When ctx ends it makes one last attempt
// (bounded by 10s) to hand over and commit the records in hand, then leaves the group and
// returns nil; records not committed are handed to the group again later. After Kill it
// returns ErrKilled. A failed commit is logged, not fatal: the records are handled again.
func (r *BatchRunner) Run(ctx context.Context) error {
	defer r.stop()
	var (
		batch    []*kgo.Record
		deadline time.Time // when the batch in hand must be handed over
	)
	for {
		if r.ks.isKilled() {
			return ErrKilled
		}
		if ctx.Err() != nil {
			if len(batch) > 0 {
				fctx, cancel := context.WithTimeout(r.proc, shutdownFlushTimeout)
				if err := r.callHandler(fctx, batch); err == nil {
					r.commit(batch)
				} else {
					r.cfg.logger.Warn("batch not flushed at shutdown; it will be handled again", "group", r.g.Name, "records", len(batch), "err", err)
				}
				cancel()
			}
			if r.ks.isKilled() {
				return ErrKilled
			}
			// Close leaves the group, which waits for a rebalance blocked by the last poll.
			r.cl.AllowRebalance()
			r.cl.Close()
			return nil
		}
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if len(batch) > 0 {
			pctx, cancel = context.WithDeadline(ctx, deadline)
		}
		fetches := r.cl.PollRecords(pctx, r.g.MaxRecords-len(batch))
		cancel()
		if r.ks.isKilled() {
			return ErrKilled
		}
		if fetches.IsClientClosed() {
			return fmt.Errorf("batch runner %s: client closed", r.g.Name)
		}
		r.cfg.fetched(r.g.Name, fetches)
		fetches.EachRecord(func(kr *kgo.Record) {
			if len(batch) == 0 {
				deadline = time.Now().Add(r.g.MaxWait)
			}
			batch = append(batch, kr)
		})
		if len(batch) == 0 {
			r.cl.AllowRebalance()
			continue
		}
		if len(batch) < r.g.MaxRecords && time.Now().Before(deadline) {
			continue // keep filling; rebalances wait for this batch
		}
		if err := r.handleBatch(ctx, batch); err != nil {
			if r.ks.isKilled() {
				return ErrKilled
			}
			// ctx ended while retrying: the loop's shutdown path tries once more.
			continue
		}
		r.commit(batch)
		batch = batch[:0]
		r.cl.AllowRebalance()
	}
}

// handleBatch calls the handler until it succeeds, backing off between tries; it returns
// an error only when ctx ends or the runner is killed first.
func (r *BatchRunner) handleBatch(ctx context.Context, batch []*kgo.Record) error {
	hctx, cancel := mergeCancel(ctx, r.proc)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := r.callHandler(hctx, batch)
		if err == nil {
			return nil
		}
		if hctx.Err() != nil {
			return hctx.Err()
		}
		wait := r.cfg.backoffFor(attempt)
		r.cfg.logger.Warn("batch handler failed; retrying the same batch", "group", r.g.Name,
			"records", len(batch), "attempt", attempt, "retry_in", wait, "err", err)
		if err := sleepCtx(hctx, wait); err != nil {
			return err
		}
	}
}

// callHandler makes one try, turning a panic into an error and recording metrics.
func (r *BatchRunner) callHandler(ctx context.Context, batch []*kgo.Record) (err error) {
	recs := make([]*Record, len(batch))
	topics := make(map[string]struct{}, 2)
	for i, kr := range batch {
		recs[i] = fromKgoRecord(kr)
		topics[kr.Topic] = struct{}{}
	}
	_, use, err := measuredCall(ctx, r.g.Name, func(ctx context.Context) ([]Output, error) {
		return nil, r.g.Handler(ctx, recs)
	}, r.cfg.background)
	if errors.Is(err, ErrNoTurn) {
		return err // ended before its turn came: no try was made
	}
	r.cfg.metrics.usedCPU(r.g.Name, use.cpu)
	for t := range topics {
		r.cfg.metrics.handled(r.g.Name, t, use.took, err)
	}
	return err
}

// commit commits one past the last offset of every partition in batch and counts the
// records done. A failure is logged: the records are handled again by whoever owns their
// partitions next.
func (r *BatchRunner) commit(batch []*kgo.Record) {
	offsets := make(map[string]map[int32]kgo.EpochOffset)
	for _, kr := range batch {
		if offsets[kr.Topic] == nil {
			offsets[kr.Topic] = make(map[int32]kgo.EpochOffset)
		}
		if cur, ok := offsets[kr.Topic][kr.Partition]; !ok || kr.Offset+1 > cur.Offset {
			offsets[kr.Topic][kr.Partition] = kgo.EpochOffset{Epoch: kr.LeaderEpoch, Offset: kr.Offset + 1}
		}
	}
	cctx, cancel := context.WithTimeout(r.proc, 30*time.Second)
	defer cancel()
	if err := commitSync(cctx, r.cl, offsets); err != nil {
		r.cfg.logger.Warn("batch commit failed; its records will be handled again", "group", r.g.Name, "records", len(batch), "err", err)
		return
	}
	for _, kr := range batch {
		r.cfg.metrics.recordDone(r.g.Name, kr.Topic)
	}
}

// Kill simulates a crash: every connection is severed at once, nothing more is handled or
// committed, and the group is not left. Run returns ErrKilled.
func (r *BatchRunner) Kill() {
	r.ks.kill()
	r.stop()
	r.cl.AllowRebalance() // Close would otherwise wait for a batch that is never finished
	r.cl.Close()
}

// mergeCancel returns a context that has a's values and ends when a or b ends.
func mergeCancel(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(a)
	stop := context.AfterFunc(b, cancel)
	return ctx, func() { stop(); cancel() }
}
