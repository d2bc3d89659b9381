package erasure

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
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
func Group(codec stream.Codec) stream.StatefulGroup {
	m := &matcher{codec: codec}
	inputs := []stream.Input{
		stream.OnTable(schemas.TrackingSessions, m.sessionOpened),
		stream.OnTable(schemas.Erasures, m.erasureRequested),
	}
	return stream.StatefulGroup{
		Name:    GroupName,
		Inputs:  stream.Topics(inputs...),
		Outputs: Spec().Outputs,
		Table:   Spec().Table,
		Handler: stream.HandleTable(GroupName, codec, inputs...),
	}
}

type matcher struct {
	codec stream.Codec
}

// sessionOpened adds the session of ev to its tracking id's state.
func (m *matcher) sessionOpened(_ context.Context, rec *stream.Record, ev *schemas.TrackingSessionOpened, table stream.Table) ([]stream.Output, error) {
	return m.update(rec, table, ev.TrackingID, ev.Envelope, func(st *schemas.TrackingErasureState) []schemas.SessionEvent {
		return addSession(st, schemas.TrackedSession{
			TenantID: ev.Envelope.TenantID, SessionID: ev.Envelope.SessionID, OpenedAt: ev.OpenedAt,
		})
	})
}

// erasureRequested adds the request of ev to its tracking id's state.
func (m *matcher) erasureRequested(_ context.Context, rec *stream.Record, ev *schemas.BiometricErasureRequested, table stream.Table) ([]stream.Output, error) {
	return m.update(rec, table, ev.TrackingID, ev.Envelope, func(st *schemas.TrackingErasureState) []schemas.SessionEvent {
		return addErasure(st, schemas.TrackedErasure{
			TenantID: ev.Envelope.TenantID, ConsentID: ev.ConsentID, Categories: ev.Categories, RequestedAt: ev.RequestedAt,
		})
	})
}

// update applies add to the stored state of rec's tracking id (trackingID, which must be
// rec's key) and returns the new state, stamped with env, with the erasure orders add
// returned; nothing when add returned none (a replay).
func (m *matcher) update(rec *stream.Record, table stream.Table, trackingID string, env schemas.Envelope, add func(*schemas.TrackingErasureState) []schemas.SessionEvent) ([]stream.Output, error) {
	if trackingID == "" || trackingID != string(rec.Key) {
		return nil, fmt.Errorf("%s record at offset %d: key is not its tracking id", rec.Topic, rec.Offset)
	}
	st := &schemas.TrackingErasureState{TrackingID: trackingID}
	if raw, ok := table.Get(rec.Key); ok {
		st = new(schemas.TrackingErasureState)
		if err := m.codec.Decode(schemas.TopicErasureState, raw, st); err != nil {
			return nil, fmt.Errorf("decode stored state: %w", err)
		}
	}
	orders := add(st)
	if orders == nil {
		return nil, nil // nothing new: a replay
	}
	st.Envelope = env
	st.Envelope.Producer = GroupName
	out, err := stream.Emit(m.codec, schemas.ErasureStates, rec.Key, st)
	if err != nil {
		return nil, err
	}
	outs := []stream.Output{out}
	for i := range orders {
		o, err := stream.Emit(m.codec, schemas.Sessions, []byte(orders[i].Envelope.SessionID), &orders[i])
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	return outs, nil
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

// Spec is the erasure group: tracked sessions and erasure requests in (its table holds both),
// erasure orders to the sessions out.
func Spec() topology.Node {
	return topology.Node{
		Name:    GroupName,
		Kind:    topology.Stateful,
		Inputs:  []string{schemas.TopicTrackingSessions, schemas.TopicErasures},
		Table:   schemas.TopicErasureState,
		Outputs: []string{schemas.TopicErasureState, schemas.TopicSessions},
	}
}
