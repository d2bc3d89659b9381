package registry

import (
	"sync"
	"time"
)

// breakerState is the state of a circuit breaker.
type breakerState int

const (
	breakerClosed breakerState = iota
	breakerOpen
	breakerHalfOpen
)

func (s breakerState) String() string {
	switch s {
	case breakerOpen:
		return "open"
	case breakerHalfOpen:
		return "half-open"
	}
	return "closed"
}

// breaker is a consecutive-failure circuit breaker. Closed, it lets every call through and
// opens after threshold consecutive failed calls. Open, it refuses calls until cooldown has
// passed on its clock, then lets exactly one probe call through (half-open): the probe's
// success closes it, its failure opens it again for another cooldown. Safe for concurrent use.
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time
	onChange  func(from, to breakerState)

	mu       sync.Mutex
	state    breakerState
	failures int
	openedAt time.Time
	probing  bool
}

// permit is what allow hands to an allowed call; the call ends by passing it to exactly one
// of success, failure or release.
type permit struct{ probe bool }

// allow reports whether a call may go ahead, and with which permit.
func (b *breaker) allow() (permit, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case breakerClosed:
		return permit{}, true
	case breakerOpen:
		if b.now().Sub(b.openedAt) < b.cooldown {
			return permit{}, false
		}
		b.setState(breakerHalfOpen)
		b.probing = true
		return permit{probe: true}, true
	default: // half-open: one probe at a time
		if b.probing {
			return permit{}, false
		}
		b.probing = true
		return permit{probe: true}, true
	}
}

// success records an allowed call that reached a healthy registry. Outside the closed state
// only the probe's result counts (a call let through before the breaker opened is stale).
func (b *breaker) success(p permit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.state == breakerClosed:
		b.failures = 0
	case p.probe:
		b.probing = false
		b.setState(breakerClosed)
	}
}

// failure records an allowed call that found the registry unavailable.
func (b *breaker) failure(p permit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.state == breakerClosed:
		b.failures++
		if b.failures >= b.threshold {
			b.openedAt = b.now()
			b.setState(breakerOpen)
		}
	case p.probe:
		b.probing = false
		b.openedAt = b.now()
		b.setState(breakerOpen)
	}
}

// release ends an allowed call that says nothing about the registry's health (the caller
// cancelled it); a probe's release lets the next call probe.
func (b *breaker) release(p permit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.probe {
		b.probing = false
	}
}

func (b *breaker) current() breakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// setState changes the state; b.mu is held.
func (b *breaker) setState(to breakerState) {
	from := b.state
	b.state = to
	if to != breakerOpen {
		b.failures = 0
	}
	if b.onChange != nil && from != to {
		b.onChange(from, to)
	}
}
