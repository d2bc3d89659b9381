package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// History reads every committed record of a topic from its start, on every partition,
// without a consumer group: what a component needs that rebuilds something in memory from a
// whole log (View keeps the latest value per key; the consent index keeps every record).
// It reads the partitions the topic has when Run starts: partitions are never added to a
// topic of the contract (co-partitioning fixes their count; EnsureTopics refuses a change).
type History struct {
	topic string
	cfg   config
}

// NewHistory creates a reader of topic's history. Returns an error when topic is empty or
// no brokers are configured.
func NewHistory(topic string, opts ...Option) (*History, error) {
	if topic == "" {
		return nil, errors.New("new history: empty topic")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("new history %s: %w", topic, err)
	}
	return &History{topic: topic, cfg: cfg}, nil
}

// Topic is the topic read.
func (h *History) Topic() string { return h.topic }

// Run reads the topic from its start until ctx ends (returning nil) or a fetch fails
// fatally (after about half a minute of retriable failures, or a non-retriable error),
// calling apply, from Run's goroutine, for every committed record in offset order per
// partition: records of aborted transactions never appear (read_committed). It calls
// caughtUp once (it may be nil), when on every partition its position (next offset to
// fetch) has reached the last stable offset listed when Run started; a partition ending in
// transaction markers or aborted records does not hold it back. Run once per History.
func (h *History) Run(ctx context.Context, apply func(*Record), caughtUp func()) error {
	return h.run(ctx, func(r *kgo.Record) { apply(fromKgoRecord(r)) }, caughtUp)
}

func (h *History) run(ctx context.Context, apply func(*kgo.Record), caughtUp func()) error {
	cl, err := kgo.NewClient(h.cfg.baseOpts()...)
	if err != nil {
		return fmt.Errorf("history %s: %w", h.topic, err)
	}
	defer cl.Close()
	stop := func(err error) error {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("history %s: %w", h.topic, err)
	}
	targets, err := stableTargets(ctx, kadm.NewClient(cl), h.topic)
	if err != nil {
		return stop(err)
	}
	lr, err := newLogReader(ctx, cl, h.topic, nil)
	if err != nil {
		return stop(err)
	}
	parts := lr.partitions()
	isCaughtUp := false
	check := func() {
		if isCaughtUp {
			return
		}
		for _, p := range parts {
			if tg, ok := targets[p]; ok && lr.pos[p] < tg.end {
				return
			}
		}
		isCaughtUp = true
		if caughtUp != nil {
			caughtUp()
		}
	}
	check()
	for {
		progress, err := lr.fetch(ctx, parts, historyPollWait, apply)
		if err != nil {
			return stop(err)
		}
		check()
		if !progress {
			// The broker answered before the wait without anything new (e.g. only an open
			// transaction above the position): do not spin.
			if sleepCtx(ctx, historyIdleBackoff) != nil {
				return nil
			}
		}
	}
}

// Pacing of History.Run once caught up: how long a fetch waits for new data, and the pause
// after an answer that brought nothing.
const (
	historyPollWait    = 500 * time.Millisecond
	historyIdleBackoff = 20 * time.Millisecond
)
