package erasure

import (
	"context"

	"github.com/idstream/idstream/processors"
	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
)

// IndexGroupName is the consumer group id of IndexGroup and the producer name of the
// records it writes.
const IndexGroupName = "erasure-index"

// IndexGroup declares the stateless group that re-keys sessions by tracking id: for every
// SessionEvent on ekyc.sessions.v1 whose SessionOpened carries a non-empty tracking id it
// produces one TrackingSessionOpened to cmp.tracking-sessions.v1, keyed by the tracking
// id, with event id "evt_trk_<session id>", the session's tenant and opened_at = the
// session's created_at. Other events and tombstones produce nothing. A record that cannot
// be decoded is an error (retried, then dead-lettered).
func IndexGroup(codec processors.Codec) processors.Group {
	input := processors.On(schemas.Sessions, func(_ context.Context, _ *processors.Record, ev *schemas.SessionEvent) ([]processors.Output, error) {
		if ev.Opened == nil || ev.Opened.TrackingID == nil || *ev.Opened.TrackingID == "" {
			return nil, nil
		}
		trackingID := *ev.Opened.TrackingID
		out, err := processors.Emit(codec, schemas.TrackingSessions, []byte(trackingID), &schemas.TrackingSessionOpened{
			Envelope: schemas.Envelope{
				EventID: "evt_trk_" + ev.Envelope.SessionID, SessionID: ev.Envelope.SessionID,
				TenantID: ev.Envelope.TenantID, OccurredAt: ev.Envelope.OccurredAt, Producer: IndexGroupName,
			},
			TrackingID: trackingID,
			OpenedAt:   ev.Opened.CreatedAt,
		})
		if err != nil {
			return nil, err
		}
		return []processors.Output{out}, nil
	})
	return processors.Group{
		Name:    IndexGroupName,
		Inputs:  processors.Topics(input),
		Outputs: IndexSpec().Outputs,
		Handler: processors.Handle(IndexGroupName, codec, input),
	}
}

// IndexSpec is the erasure index group: sessions opened with a tracking id, re-keyed by it.
func IndexSpec() topology.Node {
	return topology.Node{
		Name:    IndexGroupName,
		Kind:    topology.Group,
		Inputs:  []string{schemas.TopicSessions},
		Outputs: []string{schemas.TopicTrackingSessions},
	}
}
