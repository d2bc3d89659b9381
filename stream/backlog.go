package stream

import (
	"context"
	"fmt"
	"slices"
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
	parts     map[string]map[int32]partReading // per topic and partition, last sample
	lag       int64                            // records waiting at the last sample
	at        time.Time                        // when the last sample was taken
	rate      float64                          // records handled per second while busy (EWMA), 0 unknown
	busySince time.Time                        // since when the group has had work without progress
	expected  []expectation                    // records announced by Expect, not yet arrived
}

// partReading is one partition's end offset and lag at a sample.
type partReading struct{ end, lag int64 }

// expectation is a number of records announced at a time.
type expectation struct {
	at time.Time
	n  int64
}

// expectTTL bounds how long announced records count before they arrive. It covers the burst
// Expect is for (sessions admitted between two samples whose captures follow at once) and
// not a person's pace: captures that come tens of seconds after their session was admitted
// are counted when they arrive, and work announced for an abandoned session soon stops
// counting.
const expectTTL = 5 * time.Second

// backlogSampleTimeout bounds one reading: a broker that does not answer leaves the last
// estimates, which age (a stuck group's wait grows with the time it has been stuck).
const backlogSampleTimeout = 5 * time.Second

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
		// A clone: kadm reuses the slice it is given for the groups it could describe.
		sctx, cancel := context.WithTimeout(ctx, backlogSampleTimeout)
		lags, err := adm.Lag(sctx, slices.Clone(b.groups)...)
		cancel()
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

// sample folds one reading of the groups' lags in. What arrived and what was handled are
// counted on the partitions read both now and at the last sample (a partition missing from
// one reading, its leader moving, would otherwise read as records arriving or handled); the
// lag is every partition's read now. A group missing from the reading keeps its estimate,
// but what it was told to expect still expires.
func (b *Backlog) sample(lags kadm.DescribedGroupLags, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for group, g := range b.est {
		l, ok := lags[group]
		if !ok || l.Error() != nil {
			g.arrived(0, now)
			continue
		}
		var lag, grown, handled int64
		parts := map[string]map[int32]partReading{}
		for topic, ps := range l.Lag {
			parts[topic] = map[int32]partReading{}
			for p, ml := range ps {
				if ml.Err != nil {
					continue
				}
				cur := partReading{end: ml.End.Offset, lag: max(ml.Lag, 0)}
				parts[topic][p] = cur
				lag += cur.lag
				if prev, ok := g.parts[topic][p]; ok {
					arrived := max(cur.end-prev.end, 0)
					grown += arrived
					handled += arrived - (cur.lag - prev.lag) // what arrived, less what waits in addition
				}
			}
		}
		if g.sampled {
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
			case g.busySince.IsZero() && g.lag == 0:
				g.busySince = now // the work came since the last sample
			case g.busySince.IsZero():
				g.busySince = g.at
			}
		}
		g.sampled, g.parts, g.lag, g.at = true, parts, lag, now
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
