package erasure

import (
	"context"

	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
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
func IndexGroup(codec stream.Codec) stream.Group {
	input := stream.On(schemas.Sessions, func(_ context.Context, _ *stream.Record, ev *schemas.SessionEvent) ([]stream.Output, error) {
		if ev.Opened == nil || ev.Opened.TrackingID == nil || *ev.Opened.TrackingID == "" {
			return nil, nil
		}
		trackingID := *ev.Opened.TrackingID
		out, err := stream.Emit(codec, schemas.TrackingSessions, []byte(trackingID), &schemas.TrackingSessionOpened{
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
		return []stream.Output{out}, nil
	})
	return stream.Group{
		Name:    IndexGroupName,
		Inputs:  stream.Topics(input),
		Outputs: IndexSpec().Outputs,
		Handler: stream.Handle(IndexGroupName, codec, input),
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
