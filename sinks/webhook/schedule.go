package webhook

import (
	"errors"
	"fmt"
	"time"
)

// Schedule is the retry schedule of a delivery: Schedule[i] is the wait after failed attempt
// i+1 before attempt i+2. A delivery gets len(Schedule)+1 attempts; after the last one fails
// it is dead-lettered.
type Schedule []time.Duration

// DefaultSchedule is 10 attempts spread over about 25.7 hours: waits of 30s, 2m, 10m, 30m,
// 1h, 2h, 4h, 8h and 10h (exponential, capped).
func DefaultSchedule() Schedule {
	return Schedule{
		30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 10 * time.Hour,
	}
}

// ExponentialSchedule returns attempts-1 waits starting at first and doubling each time
// (tests use it with millisecond waits).
func ExponentialSchedule(attempts int, first time.Duration) Schedule {
	s := make(Schedule, 0, max(attempts-1, 0))
	d := first
	for i := 1; i < attempts; i++ {
		s = append(s, d)
		d *= 2
	}
	return s
}

// Attempts returns how many attempts a delivery gets.
func (s Schedule) Attempts() int { return len(s) + 1 }

// Total returns the time from the first attempt to the last, ignoring attempt durations.
func (s Schedule) Total() time.Duration {
	var t time.Duration
	for _, d := range s {
		t += d
	}
	return t
}

// Backoff returns the wait after failed attempt n (1-based), and false when attempt n was
// the last.
func (s Schedule) Backoff(n int) (time.Duration, bool) {
	if n < 1 || n > len(s) {
		return 0, false
	}
	return s[n-1], true
}

func (s Schedule) validate() error {
	if len(s) == 0 {
		return errors.New("retry schedule is empty")
	}
	for i, d := range s {
		if d < 0 {
			return fmt.Errorf("retry schedule[%d] is negative", i)
		}
	}
	return nil
}
