package stream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Health follows what the Kafka clients of a process see: when a broker last answered one
// of them, and whether each group's member in this process is in its group. Give it to
// every client with WithHealth; a readiness probe reads Status. Safe for concurrent use.
type Health struct {
	// answered is when a broker last answered a request (unix nanoseconds; 0: never), set on
	// every answer of every client without a lock.
	answered atomic.Int64
	mu       sync.Mutex
	members  map[string]*kgo.Client // group → the client of the process's current member
	// lostAt holds, for a member that lost its group (its session expired, the broker
	// fenced it), the generation it lost: kgo still reports it until the member joins again.
	lostAt map[*kgo.Client]int32
	// unrestored counts, for a stateful group's member, the partitions it owns whose table
	// is not restored yet.
	unrestored map[string]func() int
	now        func() time.Time
}

// NewHealth returns an empty Health.
func NewHealth() *Health {
	return &Health{members: map[string]*kgo.Client{}, lostAt: map[*kgo.Client]int32{}, unrestored: map[string]func() int{}, now: time.Now}
}

// WithHealth makes every client report to h: each broker answer, and each group member's
// client.
func WithHealth(h *Health) Option { return func(c *config) { c.health = h } }

// HealthStatus is what Status reports.
type HealthStatus struct {
	// BrokerAnswered is when a broker last answered a request of this process (zero: never).
	BrokerAnswered time.Time
	// Groups has an entry for every group with a member in this process.
	Groups map[string]GroupStatus
}

// GroupStatus is one group member's state in a HealthStatus: whether it is in its group
// (it has joined and not left or lost it since), the group generation it joined, and, for a
// stateful group, how many of its partitions still wait for their table to be restored.
type GroupStatus struct {
	Joined     bool  `json:"joined"`
	Generation int32 `json:"generation"`
	Restoring  int   `json:"restoring,omitempty"`
}

// Status returns the current state.
func (h *Health) Status() HealthStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := HealthStatus{Groups: map[string]GroupStatus{}}
	if ns := h.answered.Load(); ns != 0 {
		st.BrokerAnswered = time.Unix(0, ns)
	}
	for g, cl := range h.members {
		if cl == nil { // its runner ended; a new one may start
			st.Groups[g] = GroupStatus{Generation: -1}
			continue
		}
		id, gen := cl.GroupMetadata()
		lost, wasLost := h.lostAt[cl]
		gs := GroupStatus{Joined: id != "" && gen >= 0 && !(wasLost && gen == lost), Generation: gen}
		if n := h.unrestored[g]; n != nil {
			gs.Restoring = n()
		}
		st.Groups[g] = gs
	}
	return st
}

// OnBrokerE2E implements kgo.HookBrokerE2E: a request answered without error marks the
// brokers reachable.
func (h *Health) OnBrokerE2E(_ kgo.BrokerMetadata, _ int16, e2e kgo.BrokerE2E) {
	if e2e.Err() == nil {
		h.answered.Store(h.now().UnixNano())
	}
}

// OnClientClosed implements kgo.HookClientClosed: a group member whose client closed (its
// runner ended) is out of its group, whatever the client last knew.
func (h *Health) OnClientClosed(cl *kgo.Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for g, m := range h.members {
		if m == cl {
			h.members[g] = nil
		}
	}
	delete(h.lostAt, cl)
}

// tables records how many partitions of group's stateful member wait for their table
// (replacing the count of a runner that ended). n must not call the Health.
func (h *Health) tables(group string, n func() int) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.unrestored[group] = n
	h.mu.Unlock()
}

// lost records that cl's member lost its group in the generation it reports now.
func (h *Health) lost(cl *kgo.Client) {
	if h == nil {
		return
	}
	_, gen := cl.GroupMetadata()
	h.mu.Lock()
	h.lostAt[cl] = gen
	h.mu.Unlock()
}

// member records cl as the client of group's member in this process, replacing the one of
// a runner that ended (a runner started again).
func (h *Health) member(group string, cl *kgo.Client) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.members[group] = cl
	h.mu.Unlock()
}

// rebalance holds a runner's own callbacks for partitions assigned, revoked and lost (each
// may be nil).
type rebalance struct {
	assigned, revoked, lost func(context.Context, *kgo.Client, map[string][]int32)
}

// rebalanceOpts returns the kgo options of group's member: rb's callbacks, the revoked and
// lost ones followed by dropping the lag gauges of the partitions the member no longer
// holds (their next owner reports them; a stale gauge would count the lag twice), the lost
// one by telling the Health that the member is out of its group. No
// assigned callback is set unless rb has one: kgo holds every assignment until the poll
// loop allows a rebalance when there is one.
func (c *config) rebalanceOpts(group string, rb rebalance) []kgo.Opt {
	var opts []kgo.Opt
	if rb.assigned != nil {
		opts = append(opts, kgo.OnPartitionsAssigned(rb.assigned))
	}
	m, h := c.metrics, c.health
	then := func(fn func(context.Context, *kgo.Client, map[string][]int32), lost bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
			if fn != nil {
				fn(ctx, cl, parts)
			}
			m.forgetLag(group, parts)
			if lost {
				h.lost(cl)
			}
		}
	}
	return append(opts, kgo.OnPartitionsRevoked(then(rb.revoked, false)), kgo.OnPartitionsLost(then(rb.lost, true)))
}
