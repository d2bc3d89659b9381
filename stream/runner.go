package stream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DLQSuffix is appended to a topic's name to form its dead-letter topic.
const DLQSuffix = ".dlq"

// Dead-letter headers added to a record sent to "<topic>.dlq".
const (
	HeaderError             = "error"
	HeaderGroup             = "group"
	HeaderAttempts          = "attempts"
	HeaderOriginalTopic     = "original-topic"
	HeaderOriginalPartition = "original-partition"
	HeaderOriginalOffset    = "original-offset"
)

// Runner runs a stateless Group at least once: a record's outputs are acknowledged before
// its offset is committed; records of one partition are handled in order, partitions of a
// poll concurrently (or, WithUnordered, up to n records at once in any order). Run once per
// Runner; Kill may be called from any goroutine.
type Runner struct {
	g    Group
	cfg  config
	cl   *kgo.Client
	ks   *killSwitch
	stop context.CancelFunc // cancels the processing context (Kill)
	proc context.Context

	unordered *unordered // WithUnordered's state; nil: records of a partition in order
}

// NewRunner validates g and creates its consumer-group client. Returns an error when the
// group has no name, inputs or handler, or when no brokers are configured.
func NewRunner(g Group, opts ...Option) (*Runner, error) {
	if g.Name == "" || len(g.Inputs) == 0 || g.Handler == nil {
		return nil, errors.New("new runner: group needs a name, inputs and a handler")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("new runner %s: %w", g.Name, err)
	}
	r := &Runner{g: g, cfg: cfg}
	var rb rebalance
	if cfg.unordered > 0 {
		rb = r.unorderedRebalance()
	}
	r.cl, r.ks, r.proc, r.stop, err = newGroupClient(cfg, g.Name, g.Inputs, rb, kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return nil, fmt.Errorf("new runner %s: %w", g.Name, err)
	}
	if cfg.unordered > 0 {
		r.unordered = newUnordered(cfg.unordered, r.proc) // before Run: the callbacks only run once it polls
	}
	return r, nil
}

// newGroupClient creates the consumer-group client of a runner: inputs read_committed,
// offsets committed by the runner, rebalances held while polled records are in hand, rb's
// callbacks, and connections a killSwitch can cut. proc is the client's context; stop
// cancels it.
func newGroupClient(cfg config, group string, inputs []string, rb rebalance, extra ...kgo.Opt) (cl *kgo.Client, ks *killSwitch, proc context.Context, stop context.CancelFunc, err error) {
	ks = newKillSwitch(cfg.dial)
	proc, stop = context.WithCancel(context.Background())
	extra = append(cfg.rebalanceOpts(group, rb), extra...)
	cl, err = kgo.NewClient(cfg.baseOpts(append(append(groupLiveness(),
		kgo.WithContext(proc),
		kgo.Dialer(ks.dial),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(inputs...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	), extra...)...)...)
	if err != nil {
		stop()
		return nil, nil, nil, nil, err
	}
	cfg.health.member(group, cl)
	return cl, ks, proc, stop, nil
}

// Run consumes until ctx ends (then it finishes the records in hand, commits them and leaves
// the group, returning nil) or a fatal error (an output or dead letter that cannot be
// produced). A commit that fails is logged, not fatal: the next commit covers its records,
// or the partition's next owner handles them again.
// After Kill it returns ErrKilled.
func (r *Runner) Run(ctx context.Context) error {
	if r.unordered != nil {
		return r.runUnordered(ctx)
	}
	defer r.stop()
	for {
		if ctx.Err() != nil {
			return r.shutdown()
		}
		fetches := r.cl.PollRecords(ctx, 10000)
		if r.ks.isKilled() {
			return ErrKilled
		}
		if fetches.IsClientClosed() {
			return fmt.Errorf("runner %s: client closed", r.g.Name)
		}
		r.cfg.fetched(r.g.Name, fetches)
		offsets, err := r.processBatch(fetches)
		if r.ks.isKilled() {
			return ErrKilled
		}
		if len(offsets) > 0 {
			// Commit with a context of our own: a shutdown must still commit what was done.
			cctx, cancel := context.WithTimeout(r.proc, 30*time.Second)
			// A commit that fails (the broker restarting, the group rebalancing) is no reason
			// to stop: the next commit, cumulative, covers these records too, or the
			// partition's next owner handles them again (handlers of a plain Runner are
			// idempotent).
			if cerr := commitSync(cctx, r.cl, offsets); cerr != nil {
				r.cfg.logger.Warn("commit failed; the records are handed over again", "group", r.g.Name, "err", cerr)
			}
			cancel()
		}
		r.cl.AllowRebalance()
		if err != nil {
			if r.ks.isKilled() {
				return ErrKilled
			}
			r.cl.Close()
			return err
		}
	}
}

// shutdown leaves the group cleanly.
func (r *Runner) shutdown() error {
	if r.ks.isKilled() {
		return ErrKilled
	}
	r.cl.Close()
	return nil
}

// processBatch handles every record of fetches, partitions concurrently, and returns the
// offsets to commit (one past the last record done per partition).
func (r *Runner) processBatch(fetches kgo.Fetches) (map[string]map[int32]kgo.EpochOffset, error) {
	type result struct {
		topic string
		part  int32
		off   kgo.EpochOffset
		done  bool
		err   error
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []result
	)
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		wg.Add(1)
		go func(p kgo.FetchTopicPartition) {
			defer wg.Done()
			res := result{topic: p.Topic, part: p.Partition}
			for _, kr := range p.Records {
				if err := r.handleOne(kr); err != nil {
					res.err = err
					break
				}
				res.off = kgo.EpochOffset{Epoch: kr.LeaderEpoch, Offset: kr.Offset + 1}
				res.done = true
			}
			mu.Lock()
			results = append(results, res)
			mu.Unlock()
		}(p)
	})
	wg.Wait()
	offsets := make(map[string]map[int32]kgo.EpochOffset)
	var errs []error
	for _, res := range results {
		if res.err != nil {
			errs = append(errs, res.err)
		}
		if !res.done {
			continue
		}
		if offsets[res.topic] == nil {
			offsets[res.topic] = make(map[int32]kgo.EpochOffset)
		}
		offsets[res.topic][res.part] = res.off
	}
	return offsets, errors.Join(errs...)
}

// handleOne runs the handler with retries and produces its outputs, or the dead letter.
// It returns an error only when producing fails (fatal) or the runner was killed.
func (r *Runner) handleOne(kr *kgo.Record) error {
	rec := fromKgoRecord(kr)
	outs, attempts, herr := callWithRetry(r.proc, &r.cfg, r.g.Name, rec, func(ctx context.Context) ([]Output, error) {
		return r.g.Handler(ctx, rec)
	})
	if r.proc.Err() != nil {
		return ErrKilled
	}
	var recs []*kgo.Record
	if herr != nil {
		r.cfg.logger.Warn("record dead-lettered", "group", r.g.Name, "topic", rec.Topic,
			"partition", rec.Partition, "offset", rec.Offset, "attempts", attempts, "err", herr)
		recs = []*kgo.Record{deadLetter(r.g.Name, kr, attempts, herr)}
	} else {
		for _, o := range outs {
			kr, err := toKgoRecord(o)
			if err != nil {
				return fmt.Errorf("runner %s: handler output for %s/%d@%d: %w", r.g.Name, rec.Topic, rec.Partition, rec.Offset, err)
			}
			recs = append(recs, kr)
		}
	}
	if len(recs) > 0 {
		if err := r.cl.ProduceSync(r.proc, recs...).FirstErr(); err != nil {
			return fmt.Errorf("runner %s: produce outputs of %s/%d@%d: %w", r.g.Name, rec.Topic, rec.Partition, rec.Offset, err)
		}
		r.cfg.metrics.countProduced(recs)
	}
	if herr != nil {
		r.cfg.metrics.deadLettered(r.g.Name, rec.Topic)
	}
	r.cfg.metrics.recordDone(r.g.Name, rec.Topic)
	return nil
}

// Kill simulates a crash: every connection is severed at once, nothing more is produced or
// committed, and the group is not left (the broker notices the member is gone only when its
// session times out). Run returns ErrKilled.
func (r *Runner) Kill() {
	r.ks.kill()
	r.stop()
	r.cl.AllowRebalance() // Close would otherwise wait for a batch that is never finished
	r.cl.Close()
}

// callWithRetry calls fn up to cfg.attempts times with backoff, recording metrics. It
// returns the outputs, the number of tries made and the last error.
func callWithRetry(ctx context.Context, cfg *config, group string, rec *Record, fn func(context.Context) ([]Output, error)) ([]Output, int, error) {
	var err error
	for attempt := 1; attempt <= cfg.attempts; attempt++ {
		var (
			outs []Output
			use  callUse
		)
		outs, use, err = measuredCall(ctx, group, fn, cfg.background)
		if errors.Is(err, ErrNoTurn) {
			return nil, attempt, err // ended (killed) before its turn came: no try was made
		}
		cfg.metrics.handled(group, rec.Topic, use.took, err)
		cfg.metrics.usedCPU(group, use.cpu)
		if err == nil {
			return outs, attempt, nil
		}
		if attempt == cfg.attempts {
			return nil, attempt, err
		}
		if sleepCtx(ctx, cfg.backoffFor(attempt)) != nil {
			return nil, attempt, err
		}
	}
	return nil, cfg.attempts, err
}

// callUse is what a handler call used: the CPU time of its thread, in seconds, and the time
// it took from its start.
type callUse struct {
	cpu  float64
	took time.Duration
}

// measuredCall is safeCall on a goroutine locked to its OS thread, which also returns what
// the call used: the CPU time the thread spent in fn is a group's own CPU, what `idstream
// bench` divides among the groups. Work fn hands to other goroutines, and threads a C library
// starts (OpenCV's parallel loops), are not counted. With bg (WithBackground) fn runs on one
// of its threads, a call of group that takes its turn with Compute.
func measuredCall(ctx context.Context, group string, fn func(context.Context) ([]Output, error), bg *Background) (outs []Output, use callUse, err error) {
	call := func(ctx context.Context) {
		start, before := time.Now(), threadCPU()
		outs, err = safeCall(ctx, fn)
		use = callUse{cpu: max(0, threadCPU()-before), took: time.Since(start)}
	}
	if bg != nil {
		bg.run(ctx, group, call)
		return outs, use, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	call(ctx)
	return outs, use, err
}

// safeCall turns a handler panic into an error so one bad record cannot crash the process.
func safeCall(ctx context.Context, fn func(context.Context) ([]Output, error)) (outs []Output, err error) {
	defer func() {
		if p := recover(); p != nil {
			outs, err = nil, fmt.Errorf("handler panic: %v", p)
		}
	}()
	return fn(ctx)
}

// deadLetter builds the "<topic>.dlq" record for kr.
func deadLetter(group string, kr *kgo.Record, attempts int, herr error) *kgo.Record {
	hs := append([]kgo.RecordHeader(nil), kr.Headers...)
	hs = append(hs,
		kgo.RecordHeader{Key: HeaderError, Value: []byte(herr.Error())},
		kgo.RecordHeader{Key: HeaderGroup, Value: []byte(group)},
		kgo.RecordHeader{Key: HeaderAttempts, Value: []byte(strconv.Itoa(attempts))},
		kgo.RecordHeader{Key: HeaderOriginalTopic, Value: []byte(kr.Topic)},
		kgo.RecordHeader{Key: HeaderOriginalPartition, Value: []byte(strconv.Itoa(int(kr.Partition)))},
		kgo.RecordHeader{Key: HeaderOriginalOffset, Value: []byte(strconv.FormatInt(kr.Offset, 10))},
	)
	return &kgo.Record{Topic: kr.Topic + DLQSuffix, Key: kr.Key, Value: kr.Value, Headers: hs}
}
