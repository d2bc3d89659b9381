package webhook

import (
	"context"
	"fmt"

	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// Producer is the envelope producer of every record the sink writes.
const Producer = "webhook"

// Trigger maps one record of ekyc.session-state.v1 to the first delivery of a webhook: a
// WebhookDelivery with attempt 0 on ekyc.webhook.retry.v1, due at once. Two snapshots
// trigger:
//   - the one that results from folding the Decision (Decision set, envelope producer
//     schemas.ProducerDecision): ekyc.session.completed, webhook-id from the decision id;
//   - the one that results from folding a reviewer's retake request (its envelope is the
//     request's, readmodel.PendingRetake names the same event): ekyc.session.retake_requested,
//     webhook-id from the request's event id.
//
// Tombstones, other snapshots, unknown tenants and sessions with no webhook URL (neither
// the session's nor the tenant's) produce nothing. It is deterministic: the body is built
// as of the event, so a re-run yields the same record (the same webhook-id, the same bytes).
func (s *Sink) Trigger(_ context.Context, rec *stream.Record) ([]stream.Output, error) {
	if rec.Value == nil {
		return nil, nil
	}
	env, err := s.cfg.Codec.DecodeEnvelope(schemas.TopicSessionState, rec.Value)
	if err != nil {
		return nil, fmt.Errorf("webhook trigger: decode envelope: %w", err)
	}
	if env.Producer != schemas.ProducerDecision && env.Producer != schemas.ProducerEdge {
		return nil, nil
	}
	var st schemas.SessionState
	if err := s.cfg.Codec.Decode(schemas.TopicSessionState, rec.Value, &st); err != nil {
		return nil, fmt.Errorf("webhook trigger: decode session state: %w", err)
	}
	var (
		wid  string
		body func() ([]byte, error)
	)
	at := st.Envelope.OccurredAt
	switch rt := readmodel.PendingRetake(&st); {
	case env.Producer == schemas.ProducerDecision && st.Decision != nil:
		wid = readmodel.WebhookID(st.Decision.DecisionID)
		body = func() ([]byte, error) { return readmodel.WebhookBody(&st, at) }
	case env.Producer == schemas.ProducerEdge && rt != nil && rt.EventID == st.Envelope.EventID:
		wid = readmodel.RetakeWebhookID(rt.EventID)
		body = func() ([]byte, error) { return readmodel.RetakeWebhookBody(&st) }
	default:
		return nil, nil
	}
	t, ok := s.cfg.Tenants.Get(st.Envelope.TenantID)
	if !ok {
		s.log.Warn("webhook trigger: unknown tenant", "tenant_id", st.Envelope.TenantID, "session_id", st.Envelope.SessionID)
		return nil, nil
	}
	url := readmodel.WebhookTarget(&st, t.WebhookURL)
	if url == "" {
		return nil, nil
	}
	b, err := body()
	if err != nil {
		return nil, fmt.Errorf("webhook trigger: body: %w", err)
	}
	d := schemas.WebhookDelivery{
		Envelope: schemas.Envelope{
			EventID: wid + "/0", SessionID: st.Envelope.SessionID, TenantID: st.Envelope.TenantID,
			OccurredAt: at, Producer: Producer,
		},
		WebhookID:       wid,
		DecisionEventID: st.Envelope.EventID,
		URL:             url,
		Attempt:         0,
		NotBefore:       at,
		Body:            b,
	}
	out, err := s.output(schemas.TopicWebhookRetry, d.Envelope.SessionID, d)
	if err != nil {
		return nil, fmt.Errorf("webhook trigger: %w", err)
	}
	return []stream.Output{out}, nil
}

// output encodes v for topic, keyed by key.
func (s *Sink) output(topic, key string, v any) (stream.Output, error) {
	val, err := s.cfg.Codec.Encode(topic, v)
	if err != nil {
		return stream.Output{}, fmt.Errorf("encode %s: %w", topic, err)
	}
	return stream.Output{Topic: topic, Key: []byte(key), Value: val}, nil
}
