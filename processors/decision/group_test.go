package decision

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// memTable is the in-test stream.Table: a map the test applies table outputs to.
type memTable map[string][]byte

func (m memTable) Get(key []byte) ([]byte, bool) {
	v, ok := m[string(key)]
	return v, ok
}

func (m memTable) Range(fn func(key, value []byte) bool) {
	for k, v := range m {
		if !fn([]byte(k), v) {
			return
		}
	}
}

func (m memTable) apply(outs []stream.Output) {
	for _, o := range outs {
		if o.Topic != schemas.TopicDecisions {
			continue
		}
		if o.Value == nil {
			delete(m, string(o.Key))
		} else {
			m[string(o.Key)] = o.Value
		}
	}
}

func newCodec(t *testing.T) *schemas.Codec {
	t.Helper()
	c, err := schemas.NewCodec()
	if err != nil {
		t.Fatalf("schemas.NewCodec: %v", err)
	}
	return c
}

func snapshotRecord(t *testing.T, c *schemas.Codec, st *schemas.SessionState, offset int64) *stream.Record {
	t.Helper()
	b, err := c.Encode(schemas.TopicSessionState, st)
	if err != nil {
		t.Fatalf("encode snapshot: %v", err)
	}
	return &stream.Record{Topic: schemas.TopicSessionState, Key: []byte(st.Envelope.SessionID), Value: b, Offset: offset}
}

func TestGroupDeclaration(t *testing.T) {
	g := NewGroup(newCodec(t), DefaultPolicy(flow.Default()))
	if g.Name != "decision" || g.Table != schemas.TopicDecisions || len(g.Inputs) != 1 ||
		g.Inputs[0] != schemas.TopicSessionState || g.Handler == nil {
		t.Fatalf("group = %+v", g)
	}
}

func TestGroupDecidesOnce(t *testing.T) {
	c := newCodec(t)
	reg := prometheus.NewRegistry()
	g := NewGroup(c, DefaultPolicy(flow.Default()), WithMetrics(reg))
	table := memTable{}
	ctx := context.Background()
	handle := func(st *schemas.SessionState, offset int64) []stream.Output {
		t.Helper()
		outs, err := g.Handler(ctx, snapshotRecord(t, c, st, offset), table)
		if err != nil {
			t.Fatalf("offset %d: %v", offset, err)
		}
		table.apply(outs)
		return outs
	}

	capturing := processing()
	capturing.Status = schemas.StatusCapturing
	if outs := handle(capturing, 0); len(outs) != 0 {
		t.Fatalf("decided a capturing session: %+v", outs)
	}
	ready := withIdentity(processing(check("fraud.blocklist", "pass")))
	outs := handle(ready, 1)
	if len(outs) != 1 || outs[0].Topic != schemas.TopicDecisions || string(outs[0].Key) != sid || outs[0].Value == nil {
		t.Fatalf("outputs = %+v", outs)
	}
	var d schemas.Decision
	if err := c.Decode(schemas.TopicDecisions, outs[0].Value, &d); err != nil {
		t.Fatal(err)
	}
	if d.Outcome != schemas.StatusVerified || d.DecisionID != ID(sid) || d.Extracted == nil ||
		d.Extracted.IDNumber == nil || *d.Extracted.IDNumber != "001099012345" || len(d.Checks) < 4 {
		t.Fatalf("decision = %+v", d)
	}

	// The same snapshot replayed, a later snapshot of the still-processing session (with a
	// failing check that would now reject) and the decided snapshot: no second decision.
	if outs := handle(ready, 2); len(outs) != 0 {
		t.Fatalf("replay decided again: %+v", outs)
	}
	later := withIdentity(processing(check("fraud.blocklist", "fail")))
	later.Version++
	if outs := handle(later, 3); len(outs) != 0 {
		t.Fatalf("second decision: %+v", outs)
	}
	decided := withIdentity(processing())
	decided.Status = schemas.StatusVerified
	if outs := handle(decided, 4); len(outs) != 0 {
		t.Fatalf("decided snapshot produced output: %+v", outs)
	}
	if n := testutil.ToFloat64(verifiedCounter(t, reg, d.Flow)); n != 1 {
		t.Errorf("idstream_decisions_total{flow=%s,outcome=verified} = %v, want 1", d.Flow, n)
	}

	// Erasure tombstones the decision.
	outs, err := g.Handler(ctx, &stream.Record{Topic: schemas.TopicSessionState, Key: []byte(sid), Offset: 5}, table)
	if err != nil || len(outs) != 1 || outs[0].Value != nil || string(outs[0].Key) != sid || outs[0].Topic != schemas.TopicDecisions {
		t.Fatalf("erasure: %+v %v", outs, err)
	}
	table.apply(outs)
	if len(table) != 0 {
		t.Fatal("decision survived erasure")
	}
}

func TestGroupRejectsBadRecords(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c, DefaultPolicy(flow.Default()))
	good := snapshotRecord(t, c, processing(), 0)
	for name, rec := range map[string]*stream.Record{
		"other topic":  {Topic: schemas.TopicSessions, Key: []byte(sid), Value: good.Value},
		"undecodable":  {Topic: schemas.TopicSessionState, Key: []byte(sid), Value: []byte("garbage")},
		"key mismatch": {Topic: schemas.TopicSessionState, Key: []byte("ses_other"), Value: good.Value},
		"no key":       {Topic: schemas.TopicSessionState, Value: good.Value},
	} {
		t.Run(name, func(t *testing.T) {
			outs, err := g.Handler(context.Background(), rec, memTable{})
			if err == nil || outs != nil {
				t.Fatalf("outs %+v err %v, want an error", outs, err)
			}
		})
	}
}

// verifiedCounter returns the verified decisions counter of flow in reg.
func verifiedCounter(t *testing.T, reg *prometheus.Registry, flowName string) prometheus.Collector {
	t.Helper()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "idstream_decisions_total", Help: "Decisions emitted by the decision group, by flow and outcome."}, []string{"flow", "outcome"})
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		t.Fatalf("the group registered no idstream_decisions_total: %v", err)
	}
	return are.ExistingCollector.(*prometheus.CounterVec).WithLabelValues(flowName, schemas.StatusVerified)
}
