// Package session is the session processor group: the only writer of the compacted
// session-state topic. It folds every per-session event (session lifecycle, captures,
// quality, documents, chip, liveness, face match, fraud and decision) into one
// schemas.SessionState snapshot per session, and expires sessions whose time is up.
package session

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// GroupName is the consumer group id, and the producer name in the envelopes the group writes.
const GroupName = "session"

// DefaultExpiryTick is how often the group looks for expired sessions unless WithExpiryTick
// says otherwise.
const DefaultExpiryTick = time.Second

type config struct {
	tick     time.Duration
	earlyTTL time.Duration
	clock    func() time.Time
	flows    flow.Set
}

// Option configures NewGroup.
type Option func(*config)

// WithExpiryTick sets how often the group looks for expired sessions (default 1 s). A
// non-positive d keeps the default.
func WithExpiryTick(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.tick = d
		}
	}
}

// WithClock makes the expiry tick read the time from now instead of using the time the
// runtime passes to it.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// WithFlows sets the flows whose optional steps sessions may capture (default flow.Default()).
func WithFlows(flows flow.Set) Option { return func(c *config) { c.flows = flows } }

// NewGroup declares the session group. Its handler decodes a record by topic, folds it into
// the session's state read from the table (key = session id) and, when the state changed,
// emits exactly one output: the new snapshot to schemas.TopicSessionState, or a tombstone
// on erasure. Tombstones on its inputs are ignored. It returns an error (the runtime retries,
// then dead-letters the record) when a record cannot be decoded, its key is not the session
// id of its envelope, the stored state cannot be decoded or the new one encoded, or a
// placeholder of early events is full (see early.go: an event consumed before its session's
// SessionOpened is kept in a placeholder snapshot with status schemas.StatusUnopened and
// folded once the session opens).
// Every tick it emits a schemas.SessionEvent with Expired set to schemas.TopicSessions for
// each owned open or capturing session whose expires_at is not after now; the fold of that
// event, not the tick, changes the state; and a tombstone for each placeholder older than
// the early-event TTL. The handlers are safe for concurrent use.
func NewGroup(codec stream.Codec, opts ...Option) stream.StatefulGroup {
	cfg := config{tick: DefaultExpiryTick, earlyTTL: DefaultEarlyTTL, flows: flow.Default()}
	for _, o := range opts {
		o(&cfg)
	}
	g := &group{codec: codec, folder: NewFolder(cfg.flows), clock: cfg.clock, earlyTTL: cfg.earlyTTL}
	return stream.StatefulGroup{
		Name:    GroupName,
		Inputs:  Spec().Inputs,
		Outputs: Spec().Outputs,
		Table:   Spec().Table,
		Handler: g.handle,
		Tick:    cfg.tick,
		OnTick:  g.tick,
	}
}

type group struct {
	codec    stream.Codec
	folder   Folder
	clock    func() time.Time
	earlyTTL time.Duration
}

func (g *group) handle(_ context.Context, rec *stream.Record, table stream.Table) ([]stream.Output, error) {
	if rec.Value == nil {
		return nil, nil // tombstones (e.g. an erased decision) carry nothing to fold
	}
	event, env, err := g.decode(rec)
	if err != nil {
		return nil, err
	}
	if env.SessionID == "" {
		return nil, fmt.Errorf("session: %s record at offset %d has no session id", rec.Topic, rec.Offset)
	}
	if !bytes.Equal(rec.Key, []byte(env.SessionID)) {
		return nil, fmt.Errorf("session: %s record at offset %d: key is not the envelope's session id", rec.Topic, rec.Offset)
	}
	var st *schemas.SessionState
	if raw, ok := table.Get(rec.Key); ok {
		st = new(schemas.SessionState)
		if err := g.codec.Decode(schemas.TopicSessionState, raw, st); err != nil {
			return nil, fmt.Errorf("session: decode stored state: %w", err)
		}
	}
	var (
		next    *schemas.SessionState
		changed bool
	)
	switch opened := isOpened(event); {
	case isPlaceholder(st) && opened != nil:
		if next, err = g.openWithEarly(st, opened); err != nil {
			return nil, err
		}
		changed = true
	case (st == nil || isPlaceholder(st)) && rec.Topic != schemas.TopicSessions:
		if next, err = keepEarly(st, rec, env); err != nil {
			return nil, err
		}
		changed = true
	case isPlaceholder(st):
		// Another session event before SessionOpened: only an erasure can come first (the
		// session is gone; its late events made the placeholder). Erasure drops it.
		if se, ok := event.(*schemas.SessionEvent); ok && se.Erased != nil {
			next, changed = nil, true
		}
	default:
		next, changed = g.folder.Fold(st, event)
	}
	if !changed {
		return nil, nil
	}
	out := stream.Output{Topic: schemas.TopicSessionState, Key: rec.Key}
	if next != nil {
		if out.Value, err = g.codec.Encode(schemas.TopicSessionState, next); err != nil {
			return nil, fmt.Errorf("session: encode state: %w", err)
		}
	}
	return []stream.Output{out}, nil
}

// decode decodes rec into the event type of its topic and returns it with its envelope.
func (g *group) decode(rec *stream.Record) (any, schemas.Envelope, error) {
	event, env, err := g.decodeValue(rec.Topic, rec.Value)
	if err != nil {
		return nil, env, fmt.Errorf("session: offset %d: %w", rec.Offset, err)
	}
	return event, env, nil
}

// decodeValue decodes a record value of topic into the event type of the topic.
func (g *group) decodeValue(topic string, value []byte) (any, schemas.Envelope, error) {
	var (
		event any
		env   func() schemas.Envelope
	)
	switch topic {
	case schemas.TopicSessions:
		e := new(schemas.SessionEvent)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	case schemas.TopicCaptures:
		e := new(schemas.CaptureSubmitted)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	case schemas.TopicQuality:
		e := new(schemas.QualityAssessed)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	case schemas.TopicDocuments:
		e := new(schemas.DocumentRead)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	case schemas.TopicChip:
		e := new(schemas.ChipVerified)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	case schemas.TopicLiveness:
		e := new(schemas.LivenessAssessed)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	case schemas.TopicFacematch:
		e := new(schemas.FacesMatched)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	case schemas.TopicFraud:
		e := new(schemas.FraudAssessed)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	case schemas.TopicDecisions:
		e := new(schemas.Decision)
		event, env = e, func() schemas.Envelope { return e.Envelope }
	default:
		return nil, schemas.Envelope{}, fmt.Errorf("record from unexpected topic %q", topic)
	}
	if err := g.codec.Decode(topic, value, event); err != nil {
		return nil, schemas.Envelope{}, fmt.Errorf("decode %s record: %w", topic, err)
	}
	return event, env(), nil
}

// isOpened returns event when it is a SessionOpened, else nil.
func isOpened(event any) *schemas.SessionEvent {
	if se, ok := event.(*schemas.SessionEvent); ok && se != nil && se.Opened != nil {
		return se
	}
	return nil
}

// tick emits an Expired event for every owned open or capturing session whose expires_at is
// not after now, ordered by session id, and a tombstone for every placeholder of early
// events older than the early-event TTL. The event is deterministic (event id
// "evt_exp_<session id>", occurred_at = expires_at), so ticks that run again before the
// event is folded produce the same bytes, and folding it twice changes nothing.
// Stored states that cannot be decoded are skipped: the record handler reports them.
func (g *group) tick(_ context.Context, now time.Time, table stream.Table) ([]stream.Output, error) {
	if g.clock != nil {
		now = g.clock()
	}
	type due struct {
		id string
		st *schemas.SessionState
	}
	var expired []due
	var stale []string // placeholders past the early-event TTL
	table.Range(func(key, value []byte) bool {
		st := new(schemas.SessionState)
		if value == nil || g.codec.Decode(schemas.TopicSessionState, value, st) != nil {
			return true
		}
		if isPlaceholder(st) {
			if now.Sub(st.UpdatedAt) > g.earlyTTL {
				stale = append(stale, string(key))
			}
			return true
		}
		if (st.Status == schemas.StatusOpen || st.Status == schemas.StatusCapturing) &&
			!st.ExpiresAt.IsZero() && !st.ExpiresAt.After(now) {
			expired = append(expired, due{id: string(key), st: st})
		}
		return true
	})
	sort.Slice(expired, func(i, j int) bool { return expired[i].id < expired[j].id })
	sort.Strings(stale)
	outs := make([]stream.Output, 0, len(expired)+len(stale))
	for _, id := range stale {
		outs = append(outs, stream.Output{Topic: schemas.TopicSessionState, Key: []byte(id)})
	}
	for _, d := range expired {
		id := d.id
		ev := ExpiredEvent(id, d.st.Envelope.TenantID, d.st.ExpiresAt)
		value, err := g.codec.Encode(schemas.TopicSessions, &ev)
		if err != nil {
			return nil, fmt.Errorf("session: encode expiry event: %w", err)
		}
		outs = append(outs, stream.Output{Topic: schemas.TopicSessions, Key: []byte(id), Value: value})
	}
	return outs, nil
}

// ExpiredEvent returns the deterministic SessionExpired event of a session that expires at
// expiresAt: event id "evt_exp_<session id>", occurred_at = expiresAt, producer "session".
func ExpiredEvent(sessionID, tenantID string, expiresAt time.Time) schemas.SessionEvent {
	return schemas.SessionEvent{
		Envelope: schemas.Envelope{
			EventID:    "evt_exp_" + sessionID,
			SessionID:  sessionID,
			TenantID:   tenantID,
			OccurredAt: expiresAt,
			Producer:   GroupName,
		},
		Expired: &schemas.SessionExpired{ExpiresAt: expiresAt},
	}
}

// Spec is the session group: every session event in, folded into the session's snapshot (its
// table); expiries out.
func Spec() topology.Node {
	return topology.Node{
		Name:    GroupName,
		Kind:    topology.Stateful,
		Inputs:  []string{schemas.TopicSessions, schemas.TopicCaptures, schemas.TopicQuality, schemas.TopicDocuments, schemas.TopicChip, schemas.TopicLiveness, schemas.TopicFacematch, schemas.TopicFraud, schemas.TopicDecisions},
		Table:   schemas.TopicSessionState,
		Outputs: []string{schemas.TopicSessionState, schemas.TopicSessions},
	}
}
