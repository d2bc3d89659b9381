package erasure

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/idstream/idstream/processors"
	"github.com/idstream/idstream/schemas"
)

// GroupName is the consumer group id of Group and the producer name of its records.
const GroupName = "erasure"

// OrderEventID returns the event id of the order to erase sessionID's biometric data for
// the withdrawal consentID.
func OrderEventID(sessionID, consentID string) string {
	return "evt_erase_" + sessionID + "_" + consentID
}

// Group declares the stateful group that matches erasure requests with the sessions of
// their tracking id (see the package comment). Inputs: cmp.tracking-sessions.v1 and
// cmp.erasures.v1; table: cmp.erasure-state.v1 (all keyed by tracking id, same partition
// count). For every session of a request's tenant opened at or before its requested_at
// it emits, once per session, a SessionEvent with EraseBiometrics to ekyc.sessions.v1
// keyed by the session id, in the same transaction as the table update. A record whose
// key is not its tracking id, or that cannot be decoded, is an error (retried, then
// dead-lettered); tombstones are ignored.
func Group(codec processors.Codec) processors.StatefulGroup {
	g := &matcher{codec: codec}
	return processors.StatefulGroup{
		Name:    GroupName,
		Inputs:  []string{schemas.TopicTrackingSessions, schemas.TopicErasures},
		Outputs: []string{schemas.TopicErasureState, schemas.TopicSessions},
		Table:   schemas.TopicErasureState,
		Handler: g.handle,
	}
}

type matcher struct {
	codec processors.Codec
}

func (m *matcher) handle(_ context.Context, rec *processors.Record, table processors.Table) ([]processors.Output, error) {
	if rec.Value == nil {
		return nil, nil
	}
	st := &schemas.TrackingErasureState{TrackingID: string(rec.Key)}
	if raw, ok := table.Get(rec.Key); ok {
		st = new(schemas.TrackingErasureState)
		if err := m.codec.Decode(schemas.TopicErasureState, raw, st); err != nil {
			return nil, fmt.Errorf("erasure: decode stored state: %w", err)
		}
	}
	var (
		orders []schemas.SessionEvent
		env    schemas.Envelope
	)
	switch rec.Topic {
	case schemas.TopicTrackingSessions:
		var ev schemas.TrackingSessionOpened
		if err := m.decode(rec, &ev, func() string { return ev.TrackingID }); err != nil {
			return nil, err
		}
		env = ev.Envelope
		orders = addSession(st, schemas.TrackedSession{
			TenantID: ev.Envelope.TenantID, SessionID: ev.Envelope.SessionID, OpenedAt: ev.OpenedAt,
		})
	case schemas.TopicErasures:
		var ev schemas.BiometricErasureRequested
		if err := m.decode(rec, &ev, func() string { return ev.TrackingID }); err != nil {
			return nil, err
		}
		env = ev.Envelope
		orders = addErasure(st, schemas.TrackedErasure{
			TenantID: ev.Envelope.TenantID, ConsentID: ev.ConsentID, Categories: ev.Categories, RequestedAt: ev.RequestedAt,
		})
	default:
		return nil, fmt.Errorf("erasure: record from unexpected topic %q", rec.Topic)
	}
	if orders == nil {
		return nil, nil // nothing new: a replay
	}
	st.Envelope = env
	st.Envelope.Producer = GroupName
	value, err := m.codec.Encode(schemas.TopicErasureState, st)
	if err != nil {
		return nil, fmt.Errorf("erasure: encode state: %w", err)
	}
	outs := []processors.Output{{Topic: schemas.TopicErasureState, Key: rec.Key, Value: value}}
	for i := range orders {
		v, err := m.codec.Encode(schemas.TopicSessions, &orders[i])
		if err != nil {
			return nil, fmt.Errorf("erasure: encode order: %w", err)
		}
		outs = append(outs, processors.Output{Topic: schemas.TopicSessions, Key: []byte(orders[i].Envelope.SessionID), Value: v})
	}
	return outs, nil
}

// decode decodes rec into v and checks that its key is the tracking id trackingID()
// returns once decoded.
func (m *matcher) decode(rec *processors.Record, v any, trackingID func() string) error {
	if err := m.codec.Decode(rec.Topic, rec.Value, v); err != nil {
		return fmt.Errorf("erasure: decode %s record at offset %d: %w", rec.Topic, rec.Offset, err)
	}
	if id := trackingID(); id == "" || id != string(rec.Key) {
		return fmt.Errorf("erasure: %s record at offset %d: key is not its tracking id", rec.Topic, rec.Offset)
	}
	return nil
}

// covers reports whether e requires the erasure of s: same tenant, s opened at or before
// the withdrawal.
func covers(e schemas.TrackedErasure, s schemas.TrackedSession) bool {
	return e.TenantID == s.TenantID && !s.OpenedAt.After(e.RequestedAt)
}

// addSession adds s to st unless it is known, ordering its erasure when a request already
// covers it (the earliest such request). It returns nil when st did not change, or else
// the orders (possibly none, as an empty non-nil slice).
func addSession(st *schemas.TrackingErasureState, s schemas.TrackedSession) []schemas.SessionEvent {
	if s.SessionID == "" || slices.ContainsFunc(st.Sessions, func(x schemas.TrackedSession) bool {
		return x.TenantID == s.TenantID && x.SessionID == s.SessionID
	}) {
		return nil
	}
	orders := []schemas.SessionEvent{}
	for _, e := range st.Erasures { // ordered by requested_at: the first covering one wins
		if covers(e, s) {
			s.ErasureConsentID = &e.ConsentID
			orders = append(orders, order(st.TrackingID, s, e))
			break
		}
	}
	st.Sessions = append(st.Sessions, s)
	slices.SortFunc(st.Sessions, func(a, b schemas.TrackedSession) int {
		if c := strings.Compare(a.TenantID, b.TenantID); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	return orders
}

// addErasure adds e to st unless it is known, ordering the erasure of every session it
// covers that is not erased yet. It returns nil when st did not change, or else the orders.
func addErasure(st *schemas.TrackingErasureState, e schemas.TrackedErasure) []schemas.SessionEvent {
	if e.ConsentID == "" || slices.ContainsFunc(st.Erasures, func(x schemas.TrackedErasure) bool {
		return x.TenantID == e.TenantID && x.ConsentID == e.ConsentID
	}) {
		return nil
	}
	st.Erasures = append(st.Erasures, e)
	slices.SortFunc(st.Erasures, func(a, b schemas.TrackedErasure) int {
		if c := a.RequestedAt.Compare(b.RequestedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ConsentID, b.ConsentID)
	})
	orders := []schemas.SessionEvent{}
	for i, s := range st.Sessions {
		if s.ErasureConsentID == nil && covers(e, s) {
			id := e.ConsentID
			st.Sessions[i].ErasureConsentID = &id
			orders = append(orders, order(st.TrackingID, s, e))
		}
	}
	return orders
}

// order returns the order to erase s's biometric data for e.
func order(trackingID string, s schemas.TrackedSession, e schemas.TrackedErasure) schemas.SessionEvent {
	return schemas.SessionEvent{
		Envelope: schemas.Envelope{
			EventID: OrderEventID(s.SessionID, e.ConsentID), SessionID: s.SessionID, TenantID: s.TenantID,
			OccurredAt: e.RequestedAt, Producer: GroupName,
		},
		EraseBiometrics: &schemas.EraseBiometrics{
			TrackingID: trackingID, ConsentID: e.ConsentID, Categories: e.Categories, RequestedAt: e.RequestedAt,
		},
	}
}
