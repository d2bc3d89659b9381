package stream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Backlog estimates, for consumer groups of the runtime, how long a record produced now to
// a group's inputs waits before the group has handled it: the group's lag (records on its
// inputs not yet committed) over the rate at which it has been getting through them while it
// had work. A group that has work but has made no progress since it got it is estimated at
// the time it has been stuck. It reads the groups' committed offsets and the inputs' end
// offsets with one admin client every interval; what it measures is what every member of the
// group did, in whatever process. It is the signal the edge sheds load on.
//
// The lag is counted in offsets, so a group's inputs must be written without transactions:
// a transaction's commit marker takes an offset that no consumer commits past, which would
// read as a record waiting for ever. Safe for concurrent use; Run once.
type Backlog struct {
	cfg      config
	groups   []string
	interval time.Duration
	now      func() time.Time

	mu  sync.Mutex
	est map[string]*groupRate
}

// groupRate is what Backlog knows of one group.
type groupRate struct {
	sampled   bool
	ends      map[string]map[int32]int64 // end offset per topic and partition, last sample
	lag       int64                      // records waiting at the last sample
	at        time.Time                  // when the last sample was taken
	rate      float64                    // records handled per second while busy (EWMA), 0 unknown
	busySince time.Time                  // since when the group has had work without progress
	expected  []expectation              // records announced by Expect, not yet arrived
}

// expectation is a number of records announced at a time.
type expectation struct {
	at time.Time
	n  int64
}

// expectTTL bounds how long announced records count before they arrive: work announced for
// a session its person abandons must not hold the estimate up for ever.
const expectTTL = 30 * time.Second

// backlogSmoothing weighs a new busy interval's rate against the estimate so far.
const backlogSmoothing = 0.3

// NewBacklog creates the estimator of groups' backlogs, sampled every interval (a second
// when interval ≤ 0); opts are the runtime's client options. It returns an error when no
// brokers are configured or no group is named.
func NewBacklog(groups []string, interval time.Duration, opts ...Option) (*Backlog, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("backlog: %w", err)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("backlog: no groups")
	}
	if interval <= 0 {
		interval = time.Second
	}
	est := make(map[string]*groupRate, len(groups))
	for _, g := range groups {
		est[g] = &groupRate{}
	}
	return &Backlog{cfg: cfg, groups: append([]string(nil), groups...), interval: interval, now: time.Now, est: est}, nil
}

// Run samples until ctx ends and returns nil then. A failed sample is logged and the last
// estimates are kept (they age: a group that stays stuck is estimated at the time it has).
func (b *Backlog) Run(ctx context.Context) error {
	cl, err := kgo.NewClient(b.cfg.baseOpts()...)
	if err != nil {
		return fmt.Errorf("backlog: client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		lags, err := adm.Lag(ctx, b.groups...)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			b.cfg.logger.Warn("backlog: lag of groups", "err", err)
		} else {
			b.sample(lags, b.now())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sample folds one reading of the groups' lags in.
func (b *Backlog) sample(lags kadm.DescribedGroupLags, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for group, g := range b.est {
		l, ok := lags[group]
		if !ok || l.Error() != nil {
			continue
		}
		var lag int64
		ends := map[string]map[int32]int64{}
		var grown int64 // records added to the inputs since the last sample
		for topic, parts := range l.Lag {
			ends[topic] = map[int32]int64{}
			for p, ml := range parts {
				if ml.Err != nil {
					continue
				}
				ends[topic][p] = ml.End.Offset
				if prev, ok := g.ends[topic][p]; ok && ml.End.Offset > prev {
					grown += ml.End.Offset - prev
				}
				if ml.Lag > 0 {
					lag += ml.Lag
				}
			}
		}
		if g.sampled {
			handled := grown - (lag - g.lag) // what arrived, less what still waits in addition
			if dt := now.Sub(g.at).Seconds(); dt > 0 && g.lag > 0 && handled > 0 {
				r := float64(handled) / dt
				if g.rate == 0 {
					g.rate = r
				} else {
					g.rate = backlogSmoothing*r + (1-backlogSmoothing)*g.rate
				}
			}
			switch {
			case lag == 0 || handled > 0:
				g.busySince = time.Time{}
			case g.busySince.IsZero():
				g.busySince = g.at
			}
		}
		g.sampled, g.ends, g.lag, g.at = true, ends, lag, now
		g.arrived(grown, now)
	}
}

// arrived settles the oldest expectations against n records that arrived, and drops those
// older than expectTTL.
func (g *groupRate) arrived(n int64, now time.Time) {
	for len(g.expected) > 0 && (n > 0 || now.Sub(g.expected[0].at) > expectTTL) {
		e := &g.expected[0]
		take := min(n, e.n)
		e.n -= take
		n -= take
		if e.n == 0 || now.Sub(e.at) > expectTTL {
			g.expected = g.expected[1:]
		}
	}
}

// Expect announces records about to be produced to group's inputs (the captures of a
// session just admitted): they count in its estimate at once, until they arrive (or
// expectTTL passes). Without it, everything admitted between two samples would see the
// same, too low, estimate. An unknown group is ignored.
func (b *Backlog) Expect(group string, records int) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if g, ok := b.est[group]; ok && records > 0 {
		g.expected = append(g.expected, expectation{at: now, n: int64(records)})
	}
}

// Wait is the estimated wait of a record produced now to group's inputs: 0 when the group has
// no backlog (or is unknown, or not sampled yet); otherwise its lag and the records announced
// by Expect over its rate (one interval while the rate is not measured yet), or the time it
// has had work without progress when that is longer.
func (b *Backlog) Wait(group string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	g, ok := b.est[group]
	if !ok {
		return 0
	}
	work := g.lag
	for _, e := range g.expected {
		work += e.n
	}
	if work == 0 {
		return 0
	}
	w := b.interval
	if g.rate > 0 {
		w = time.Duration(float64(work) / g.rate * float64(time.Second))
	}
	if !g.busySince.IsZero() {
		w = max(w, b.now().Sub(g.busySince))
	}
	return w
}
