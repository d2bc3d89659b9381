package stream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// memTable is the in-memory Table of a StatefulRunner: one map per owned partition.
// Safe for concurrent use.
type memTable struct {
	mu    sync.RWMutex
	parts map[int32]map[string][]byte
}

func newMemTable() *memTable { return &memTable{parts: make(map[int32]map[string][]byte)} }

// Get implements Table.
func (t *memTable) Get(key []byte) ([]byte, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, m := range t.parts {
		if v, ok := m[string(key)]; ok {
			return v, true
		}
	}
	return nil, false
}

// Range implements Table.
func (t *memTable) Range(fn func(key, value []byte) bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, m := range t.parts {
		for k, v := range m {
			if !fn([]byte(k), v) {
				return
			}
		}
	}
}

// put applies one table write (nil value: delete) to partition p.
func (t *memTable) put(p int32, key, value []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.parts[p]
	if m == nil {
		m = make(map[string][]byte)
		t.parts[p] = m
	}
	if value == nil {
		delete(m, string(key))
		return
	}
	m[string(key)] = value
}

func (t *memTable) setPartition(p int32, m map[string][]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.parts[p] = m
}

func (t *memTable) drop(p int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.parts, p)
}

// restoreTable reads partitions parts of topic from their log start, read_committed, and
// returns the latest value per key (tombstones delete). It returns once, for every
// partition, the position (next offset to fetch) has reached the partition's last stable
// offset and no transaction is open on it (last stable offset == high watermark): then
// every transaction of a previous owner of the partition has been committed or aborted, and
// its outcome is in the result. A killed owner's open transaction therefore delays the
// restore until the broker aborts it (the transaction timeout) or a producer with the same
// transactional id fences it. It returns ctx's error as soon as ctx ends.
func restoreTable(ctx context.Context, cfg *config, topic string, parts []int32) (map[int32]map[string][]byte, error) {
	out := make(map[int32]map[string][]byte, len(parts))
	for _, p := range parts {
		out[p] = make(map[string][]byte)
	}
	if len(parts) == 0 {
		return out, nil
	}
	cl, err := kgo.NewClient(cfg.baseOpts()...)
	if err != nil {
		return nil, fmt.Errorf("restore %s: %w", topic, err)
	}
	defer cl.Close()
	lr, err := newLogReader(ctx, cl, topic, parts)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	apply := func(rec *kgo.Record) {
		if rec.Value == nil {
			delete(out[rec.Partition], string(rec.Key))
		} else {
			out[rec.Partition][string(rec.Key)] = rec.Value
		}
	}
	pending := append([]int32(nil), parts...)
	var wait time.Duration // first round: answer at once, even for empty partitions
	for len(pending) > 0 {
		progress, err := lr.fetch(ctx, pending, wait, apply)
		if err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
		left := pending[:0]
		for _, p := range pending {
			if !lr.quiet(p) {
				left = append(left, p)
			}
		}
		pending = left
		if len(pending) > 0 && !progress {
			// Caught up but a transaction is still open on the partition (or the broker
			// answered early without data): wait for it without spinning.
			wait = restorePollWait
			if err := sleepCtx(ctx, restoreIdleBackoff); err != nil {
				return nil, fmt.Errorf("restore %s: %w", topic, err)
			}
		}
	}
	return out, nil
}

// Pacing of restoreTable while it waits for an open transaction to end.
const (
	restorePollWait    = 250 * time.Millisecond
	restoreIdleBackoff = 20 * time.Millisecond
)

type offsetRange struct{ start, end int64 }

// stableTargets returns, per partition of topic, the log start offset and the last stable
// offset (what a read_committed consumer can read).
func stableTargets(ctx context.Context, adm *kadm.Client, topic string) (map[int32]offsetRange, error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list stable offsets of %s: %w", topic, err)
	}
	out := make(map[int32]offsetRange)
	ends.Each(func(o kadm.ListedOffset) {
		r := offsetRange{end: o.Offset}
		if s, ok := starts.Lookup(topic, o.Partition); ok {
			r.start = s.Offset
		}
		out[o.Partition] = r
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("list offsets of %s: topic has no partitions", topic)
	}
	return out, nil
}
