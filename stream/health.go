package stream

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Health follows what the Kafka clients of a process see: when a broker last answered one
// of them, and which partitions each group's member of this process holds. Give it to every
// client with WithHealth; a readiness probe reads Status. Safe for concurrent use.
type Health struct {
	mu       sync.Mutex
	answered time.Time                     // when a broker last answered a request
	groups   map[string]map[string][]int32 // group → topic → partitions held; present once joined
	expected map[string]bool               // groups with a member in this process
	now      func() time.Time
}

// NewHealth returns an empty Health.
func NewHealth() *Health {
	return &Health{groups: map[string]map[string][]int32{}, expected: map[string]bool{}, now: time.Now}
}

// WithHealth makes every client report to h: each broker answer, and each group member's
// assignments.
func WithHealth(h *Health) Option { return func(c *config) { c.health = h } }

// HealthStatus is what Status reports.
type HealthStatus struct {
	// BrokerAnswered is when a broker last answered a request of this process (zero: never).
	BrokerAnswered time.Time
	// Groups lists, for every group with a member in this process, the partitions of each
	// input the member holds; Joined is false until the member's first assignment (after a
	// partition loss, until the next).
	Groups map[string]GroupStatus
}

// GroupStatus is one group member's state in a HealthStatus.
type GroupStatus struct {
	Joined     bool               `json:"joined"`
	Partitions map[string][]int32 `json:"partitions"`
}

// Status returns the current state.
func (h *Health) Status() HealthStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := HealthStatus{BrokerAnswered: h.answered, Groups: map[string]GroupStatus{}}
	for g := range h.expected {
		held, joined := h.groups[g]
		ps := map[string][]int32{}
		for topic, parts := range held {
			ps[topic] = slices.Clone(parts)
		}
		st.Groups[g] = GroupStatus{Joined: joined, Partitions: ps}
	}
	return st
}

// OnBrokerE2E implements kgo.HookBrokerE2E: a request answered without error marks the
// brokers reachable.
func (h *Health) OnBrokerE2E(_ kgo.BrokerMetadata, _ int16, e2e kgo.BrokerE2E) {
	if e2e.Err() != nil {
		return
	}
	h.mu.Lock()
	h.answered = h.now()
	h.mu.Unlock()
}

// expect records that a member of group runs in this process.
func (h *Health) expect(group string) {
	h.mu.Lock()
	h.expected[group] = true
	h.mu.Unlock()
}

// assigned adds m to group's partitions and marks the member joined (kgo calls it after
// every join, even with nothing new).
func (h *Health) assigned(group string, m map[string][]int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	held := h.groups[group]
	if held == nil {
		held = map[string][]int32{}
		h.groups[group] = held
	}
	for topic, ps := range m {
		merged := append(held[topic], ps...)
		slices.Sort(merged)
		held[topic] = slices.Compact(merged)
	}
}

// revoked removes m from group's partitions; lost also marks the member out of its group
// until it joins again.
func (h *Health) revoked(group string, m map[string][]int32, lost bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	held, ok := h.groups[group]
	if !ok {
		return
	}
	if lost {
		delete(h.groups, group)
		return
	}
	for topic, ps := range m {
		held[topic] = slices.DeleteFunc(held[topic], func(p int32) bool { return slices.Contains(ps, p) })
		if len(held[topic]) == 0 {
			delete(held, topic)
		}
	}
}

// rebalance holds a runner's own callbacks for partitions assigned, revoked and lost (each
// may be nil).
type rebalance struct {
	assigned, revoked, lost func(context.Context, *kgo.Client, map[string][]int32)
}

// rebalanceOpts returns the kgo options of group's member: rb's callbacks, each followed by
// the Health's record of the change.
func (c *config) rebalanceOpts(group string, rb rebalance) []kgo.Opt {
	h := c.health
	if h == nil {
		var opts []kgo.Opt
		if rb.assigned != nil {
			opts = append(opts, kgo.OnPartitionsAssigned(rb.assigned))
		}
		if rb.revoked != nil {
			opts = append(opts, kgo.OnPartitionsRevoked(rb.revoked))
		}
		if rb.lost != nil {
			opts = append(opts, kgo.OnPartitionsLost(rb.lost))
		}
		return opts
	}
	h.expect(group)
	call := func(fn func(context.Context, *kgo.Client, map[string][]int32), ctx context.Context, cl *kgo.Client, m map[string][]int32) {
		if fn != nil {
			fn(ctx, cl, m)
		}
	}
	return []kgo.Opt{
		kgo.OnPartitionsAssigned(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			call(rb.assigned, ctx, cl, m)
			h.assigned(group, m)
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			call(rb.revoked, ctx, cl, m)
			h.revoked(group, m, false)
		}),
		kgo.OnPartitionsLost(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			call(rb.lost, ctx, cl, m)
			h.revoked(group, m, true)
		}),
	}
}
