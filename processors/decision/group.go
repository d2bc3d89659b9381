// Package decision is the decision processor group: it reads session snapshots from the
// session-state topic and, once a snapshot is ready under the versioned policy, emits the
// session's one and only Decision. The decision is a pure function of the snapshot and the
// policy (Decide); the reconciliation of OCR, MRZ and chip data lives in Reconcile.
package decision

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idstream/idstream/processors/topology"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// GroupName is the consumer group id.
const GroupName = "decision"

// NewGroup declares the decision group. It consumes schemas.TopicSessionState and keeps
// schemas.TopicDecisions as its table, so the runtime restores which sessions are already
// decided and writes a decision with the input offset in one transaction. For a snapshot of
// a session with no decision in the table, when Decide(p, snapshot) is true, the handler
// emits the Decision to schemas.TopicDecisions (which updates the table): at most one
// decision per session, however often snapshots are replayed. A snapshot tombstone
// (erasure) emits a tombstone for the session's decision. The handler returns an error
// (retried, then dead-lettered) for a record of another topic, an undecodable snapshot or a
// snapshot whose session id is not its key. p should be valid (see Policy.Validate).
// The handler is safe for concurrent use.
func NewGroup(codec stream.Codec, p Policy, opts ...Option) stream.StatefulGroup {
	g := &group{codec: codec, policy: p}
	for _, o := range opts {
		if o != nil {
			o(g)
		}
	}
	input := stream.OnTable(schemas.SessionStates, g.decide).WithTombstones(g.erase)
	handle := stream.HandleTable(GroupName, codec, input)
	return stream.StatefulGroup{
		Name:    GroupName,
		Inputs:  stream.Topics(input),
		Outputs: Spec().Outputs,
		Table:   Spec().Table,
		Handler: func(ctx context.Context, rec *stream.Record, table stream.Table) ([]stream.Output, error) {
			// Most snapshots come after the session's decision: skipped before decoding.
			if _, decided := table.Get(rec.Key); decided && rec.Value != nil && rec.Topic == schemas.TopicSessionState {
				return nil, nil
			}
			return handle(ctx, rec, table)
		},
	}
}

type group struct {
	codec   stream.Codec
	policy  Policy
	decided *prometheus.CounterVec // WithMetrics; nil: not counted
}

// Option configures NewGroup.
type Option func(*group)

// WithMetrics counts the decisions the group emits in idstream_decisions_total{flow,
// outcome} on reg (a collector of that name already there is used). A decision counts when
// its handler emits it: one whose transaction aborts and is decided again counts twice, so
// the counter can exceed the sessions decided, never fall short of them.
func WithMetrics(reg prometheus.Registerer) Option {
	return func(g *group) {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idstream_decisions_total", Help: "Decisions emitted by the decision group, by flow and outcome.",
		}, []string{"flow", "outcome"})
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return
			}
			if c, _ = are.ExistingCollector.(*prometheus.CounterVec); c == nil {
				return
			}
		}
		g.decided = c
	}
}

// erase answers a snapshot's tombstone (the session's erasure) with the decision's: its
// sinks remove their personal data on it.
func (g *group) erase(_ context.Context, rec *stream.Record, _ stream.Table) ([]stream.Output, error) {
	if len(rec.Key) == 0 {
		return nil, fmt.Errorf("snapshot tombstone at offset %d has no key", rec.Offset)
	}
	return []stream.Output{{Topic: schemas.TopicDecisions, Key: rec.Key}}, nil
}

// decide decides the session of a snapshot not decided yet (the handler skips the others).
func (g *group) decide(_ context.Context, rec *stream.Record, st *schemas.SessionState, _ stream.Table) ([]stream.Output, error) {
	if len(rec.Key) == 0 || !bytes.Equal(rec.Key, []byte(st.Envelope.SessionID)) {
		return nil, fmt.Errorf("snapshot at offset %d: key is not the snapshot's session id", rec.Offset)
	}
	d, ok := Decide(g.policy, st)
	if !ok {
		return nil, nil
	}
	if d.Outcome == OutcomeReview {
		// Not a decision: the session group folds the opening (once per round) into
		// StatusReview, and the snapshots after it are not decided until a reviewer's
		// decision is in them. After a retake the round is the retake's.
		round := 0
		if st.Review != nil {
			round = st.Review.Retakes
		}
		ev := &schemas.ReviewEvent{
			Envelope: schemas.Envelope{
				EventID: schemas.ReviewOpenedEventID(st.Envelope.SessionID, round), SessionID: st.Envelope.SessionID,
				TenantID: st.Envelope.TenantID, OccurredAt: st.UpdatedAt, Producer: Producer,
			},
			Opened: &schemas.ReviewOpened{PolicyVersion: d.PolicyVersion, Reasons: d.Reasons},
		}
		out, err := stream.Emit(g.codec, schemas.Reviews, rec.Key, ev)
		if err != nil {
			return nil, err
		}
		return []stream.Output{out}, nil // not a decision: idstream_decisions_total is not counted
	}
	out, err := stream.Emit(g.codec, schemas.Decisions, rec.Key, d)
	if err != nil {
		return nil, err
	}
	if g.decided != nil {
		g.decided.WithLabelValues(d.Flow, d.Outcome).Inc()
	}
	return []stream.Output{out}, nil
}

// Spec is the decision group: session snapshots in, one decision per session out (its
// table), and the opening of a human review for a session a review rule sends to a person.
func Spec() topology.Node {
	return topology.Node{
		Name:    GroupName,
		Kind:    topology.Stateful,
		Inputs:  []string{schemas.TopicSessionState},
		Table:   schemas.TopicDecisions,
		Outputs: []string{schemas.TopicDecisions, schemas.TopicReviews},
	}
}
