package session

import (
	"fmt"
	"slices"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Early events. The group's inputs are separate topics, fetched independently: on a cluster
// each partition has its own leader and a poll returns what has arrived, and after a crash
// a member re-reads every input from its committed offset in whatever order the fetches
// return. So a session's capture, quality result or document can be consumed before the
// session's SessionOpened even though it was produced after it. Dropping it would lose it:
// its offset is committed with the transaction. The group keeps it instead: the session's
// table entry becomes a placeholder (schemas.StatusUnopened) holding the raw records in
// consumption order, and when the SessionOpened arrives they are folded after it, in that
// order, giving the state an in-order consumption gives. Events of the sessions topic itself
// are never early (one partition carries them in order), except after an erasure: the late
// events of an erased session make a placeholder that no SessionOpened follows, and the
// tick tombstones it once it is older than the early-event TTL.

// MaxEarlyEvents bounds a placeholder: one more early event is an error (the runtime retries,
// then dead-letters the record, where an operator sees it).
const MaxEarlyEvents = 256

// DefaultEarlyTTL is how long a placeholder waits for its SessionOpened unless WithEarlyTTL
// says otherwise. A session opened in Kafka is consumed within seconds of its events even
// across a crash; a placeholder this old belongs to an erased session.
const DefaultEarlyTTL = time.Hour

// WithEarlyTTL sets how long a placeholder of early events waits for its SessionOpened
// before the tick tombstones it (default DefaultEarlyTTL). A non-positive d keeps the default.
func WithEarlyTTL(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.earlyTTL = d
		}
	}
}

// isPlaceholder reports whether st is a placeholder of early events.
func isPlaceholder(st *schemas.SessionState) bool {
	return st != nil && st.Status == schemas.StatusUnopened
}

// keepEarly returns the placeholder ph (nil: none yet) with rec appended, or an error when
// it is full.
func keepEarly(ph *schemas.SessionState, rec *stream.Record, env schemas.Envelope) (*schemas.SessionState, error) {
	next := &schemas.SessionState{Status: schemas.StatusUnopened}
	if ph != nil {
		if len(ph.EarlyEvents) >= MaxEarlyEvents {
			return nil, fmt.Errorf("%d events of a session consumed before it was opened; %s record at offset %d not kept",
				len(ph.EarlyEvents), rec.Topic, rec.Offset)
		}
		next.EarlyEvents = slices.Clone(ph.EarlyEvents)
		next.Version = ph.Version
	}
	next.EarlyEvents = append(next.EarlyEvents, schemas.EarlyEvent{Topic: rec.Topic, Value: slices.Clone(rec.Value)})
	next.Version++
	next.Envelope = env
	next.UpdatedAt = env.OccurredAt
	return next, nil
}

// openWithEarly folds opened into a new state, then the placeholder's early events in
// their order. The result is nil when an early event erases the session.
func (g *group) openWithEarly(ph *schemas.SessionState, opened *schemas.SessionEvent) (*schemas.SessionState, error) {
	st, _ := g.folder.Fold(nil, opened)
	for i, e := range ph.EarlyEvents {
		event, _, err := g.decodeValue(e.Topic, e.Value)
		if err != nil {
			return nil, fmt.Errorf("early event %d of session %s: %w", i, opened.Envelope.SessionID, err)
		}
		if st, _ = g.folder.Fold(st, event); st == nil {
			return nil, nil
		}
	}
	return st, nil
}
