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

// Trigger maps one record of ekyc.session-state.v1 to the first delivery of its
// session-completed webhook: a WebhookDelivery with attempt 0 on ekyc.webhook.retry.v1, due
// at once. Only the snapshot that results from folding the Decision triggers (Decision set
// and envelope producer schemas.ProducerDecision); tombstones, other snapshots, unknown tenants and
// sessions with no webhook URL (neither the session's nor the tenant's) produce nothing.
// It is deterministic: the body is built as of the decision, so a re-run yields the same
// record (the same webhook-id, the same bytes).
func (s *Sink) Trigger(_ context.Context, rec *stream.Record) ([]stream.Output, error) {
	if rec.Value == nil {
		return nil, nil
	}
	env, err := s.cfg.Codec.DecodeEnvelope(schemas.TopicSessionState, rec.Value)
	if err != nil {
		return nil, fmt.Errorf("webhook trigger: decode envelope: %w", err)
	}
	if env.Producer != schemas.ProducerDecision {
		return nil, nil
	}
	var st schemas.SessionState
	if err := s.cfg.Codec.Decode(schemas.TopicSessionState, rec.Value, &st); err != nil {
		return nil, fmt.Errorf("webhook trigger: decode session state: %w", err)
	}
	if st.Decision == nil {
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
	at := st.Envelope.OccurredAt
	body, err := readmodel.WebhookBody(&st, at)
	if err != nil {
		return nil, fmt.Errorf("webhook trigger: body: %w", err)
	}
	wid := readmodel.WebhookID(st.Decision.DecisionID)
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
		Body:            body,
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
