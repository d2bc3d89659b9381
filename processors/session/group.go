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
	g := &group{codec: codec, folder: NewFolder(cfg.flows), clock: cfg.clock, earlyTTL: cfg.earlyTTL,
		decoders: map[string]func([]byte) (any, schemas.Envelope, error){}}
	// Every event the group folds, in Spec's order; tombstones (an erased decision) carry
	// nothing to fold and are skipped.
	topics := []foldedTopic{
		folded(g, schemas.Sessions, func(e *schemas.SessionEvent) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Captures, func(e *schemas.CaptureSubmitted) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Quality, func(e *schemas.QualityAssessed) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Documents, func(e *schemas.DocumentRead) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Chip, func(e *schemas.ChipVerified) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Liveness, func(e *schemas.LivenessAssessed) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Facematch, func(e *schemas.FacesMatched) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Fraud, func(e *schemas.FraudAssessed) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Decisions, func(e *schemas.Decision) schemas.Envelope { return e.Envelope }),
		folded(g, schemas.Reviews, func(e *schemas.ReviewEvent) schemas.Envelope { return e.Envelope }),
	}
	inputs := make([]stream.Input, len(topics))
	for i, t := range topics {
		inputs[i] = t.input
		g.decoders[t.input.Topic()] = t.decode
	}
	return stream.StatefulGroup{
		Name:    GroupName,
		Inputs:  stream.Topics(inputs...),
		Outputs: Spec().Outputs,
		Table:   Spec().Table,
		Handler: stream.HandleTable(GroupName, codec, inputs...),
		Tick:    cfg.tick,
		OnTick:  g.tick,
	}
}

type group struct {
	codec    stream.Codec
	folder   Folder
	clock    func() time.Time
	earlyTTL time.Duration
	// decoders decode a record value of each input topic into its event and envelope (the
	// early events a placeholder keeps are decoded with them).
	decoders map[string]func([]byte) (any, schemas.Envelope, error)
}

// foldedTopic is one input of the group and the decoding of its record values.
type foldedTopic struct {
	input  stream.Input
	decode func([]byte) (any, schemas.Envelope, error)
}

// folded declares topic t, whose events carry envelope, as folded into the session's state.
func folded[T any](g *group, t schemas.Topic[T], envelope func(*T) schemas.Envelope) foldedTopic {
	return foldedTopic{
		input: stream.OnTable(t, func(_ context.Context, rec *stream.Record, v *T, table stream.Table) ([]stream.Output, error) {
			return g.fold(rec, v, envelope(v), table)
		}),
		decode: func(value []byte) (any, schemas.Envelope, error) {
			v := t.New()
			if err := g.codec.Decode(t.Name(), value, v); err != nil {
				return nil, schemas.Envelope{}, fmt.Errorf("decode %s record: %w", t.Name(), err)
			}
			return v, envelope(v), nil
		},
	}
}

// fold folds the event of rec (its envelope env) into the session's state read from table.
func (g *group) fold(rec *stream.Record, event any, env schemas.Envelope, table stream.Table) ([]stream.Output, error) {
	if env.SessionID == "" {
		return nil, fmt.Errorf("%s record at offset %d has no session id", rec.Topic, rec.Offset)
	}
	if !bytes.Equal(rec.Key, []byte(env.SessionID)) {
		return nil, fmt.Errorf("%s record at offset %d: key is not the envelope's session id", rec.Topic, rec.Offset)
	}
	var (
		st, next *schemas.SessionState
		changed  bool
		err      error
	)
	if raw, ok := table.Get(rec.Key); ok {
		st = new(schemas.SessionState)
		if err := g.codec.Decode(schemas.TopicSessionState, raw, st); err != nil {
			return nil, fmt.Errorf("decode stored state: %w", err)
		}
	}
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
			return nil, fmt.Errorf("encode state: %w", err)
		}
	}
	return []stream.Output{out}, nil
}

// decodeValue decodes a record value of topic into the event type of the topic.
func (g *group) decodeValue(topic string, value []byte) (any, schemas.Envelope, error) {
	decode, ok := g.decoders[topic]
	if !ok {
		return nil, schemas.Envelope{}, fmt.Errorf("record from unexpected topic %q", topic)
	}
	return decode(value)
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
		Inputs:  []string{schemas.TopicSessions, schemas.TopicCaptures, schemas.TopicQuality, schemas.TopicDocuments, schemas.TopicChip, schemas.TopicLiveness, schemas.TopicFacematch, schemas.TopicFraud, schemas.TopicDecisions, schemas.TopicReviews},
		Table:   schemas.TopicSessionState,
		Outputs: []string{schemas.TopicSessionState, schemas.TopicSessions},
	}
}
