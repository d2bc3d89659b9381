package session

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

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
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn([]byte(k), m[k]) {
			return
		}
	}
}

// apply does what the runtime does with outputs addressed to the table topic.
func (m memTable) apply(outs []stream.Output, table string) {
	for _, o := range outs {
		if o.Topic != table {
			continue
		}
		if o.Value == nil {
			delete(m, string(o.Key))
		} else {
			m[string(o.Key)] = o.Value
		}
	}
}

func topicOf(e any) string {
	switch e.(type) {
	case *schemas.SessionEvent:
		return schemas.TopicSessions
	case *schemas.CaptureSubmitted:
		return schemas.TopicCaptures
	case *schemas.QualityAssessed:
		return schemas.TopicQuality
	case *schemas.DocumentRead:
		return schemas.TopicDocuments
	case *schemas.ChipVerified:
		return schemas.TopicChip
	case *schemas.LivenessAssessed:
		return schemas.TopicLiveness
	case *schemas.FacesMatched:
		return schemas.TopicFacematch
	case *schemas.FraudAssessed:
		return schemas.TopicFraud
	case *schemas.Decision:
		return schemas.TopicDecisions
	}
	return ""
}

func record(t *testing.T, c *schemas.Codec, e any, offset int64) *stream.Record {
	t.Helper()
	topic := topicOf(e)
	b, err := c.Encode(topic, e)
	if err != nil {
		t.Fatalf("encode %T: %v", e, err)
	}
	return &stream.Record{Topic: topic, Key: []byte(sid), Value: b, Offset: offset}
}

func decodeState(t *testing.T, c *schemas.Codec, b []byte) *schemas.SessionState {
	t.Helper()
	st := new(schemas.SessionState)
	if err := c.Decode(schemas.TopicSessionState, b, st); err != nil {
		t.Fatalf("decode state: %v", err)
	}
	return st
}

func TestGroupDeclaration(t *testing.T) {
	g := NewGroup(newCodec(t))
	if g.Name != "session" || g.Table != schemas.TopicSessionState || len(g.Inputs) != 10 ||
		g.Tick != time.Second || g.Handler == nil || g.OnTick == nil {
		t.Fatalf("group = %+v", g)
	}
	if NewGroup(newCodec(t), WithExpiryTick(5*time.Second)).Tick != 5*time.Second {
		t.Fatal("WithExpiryTick ignored")
	}
}

func TestGroupHandlerFoldsIntoSnapshots(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c)
	table := memTable{}
	ctx := context.Background()
	for i, e := range fullSequence()[:12] { // up to and including the decision
		outs, err := g.Handler(ctx, record(t, c, e, int64(i)), table)
		if err != nil {
			t.Fatalf("event %d (%T): %v", i, e, err)
		}
		if len(outs) != 1 || outs[0].Topic != schemas.TopicSessionState || string(outs[0].Key) != sid || outs[0].Value == nil {
			t.Fatalf("event %d (%T): outputs = %+v", i, e, outs)
		}
		table.apply(outs, g.Table)
	}
	st := decodeState(t, c, table[sid])
	if st.Status != schemas.StatusVerified || st.Version != 12 || len(st.Captures) != 3 || len(st.Documents) != 1 ||
		st.Liveness == nil || st.Faces == nil || st.Decision == nil {
		t.Fatalf("state = %+v", st)
	}
	if st.Decision.Extracted == nil || st.Decision.Extracted.FullName == nil || st.Decision.Extracted.Sources["full_name"][0] != "ocr" {
		t.Fatalf("decision result lost in the round trip: %+v", st.Decision)
	}
	if c := findCheck(st, "quality.document_front"); c == nil || c.Source != "quality" || c.CaptureID == nil || *c.CaptureID != "cap_f" {
		t.Fatalf("quality check lost in the round trip: %+v", c)
	}

	// A redelivered record changes nothing and emits nothing.
	outs, err := g.Handler(ctx, record(t, c, capture("selfie", "cap_s", 5), 99), table)
	if err != nil || len(outs) != 0 {
		t.Fatalf("replay: outs %+v err %v", outs, err)
	}

	// Erasure emits a tombstone.
	outs, err = g.Handler(ctx, record(t, c, erased(30), 100), table)
	if err != nil || len(outs) != 1 || outs[0].Value != nil || string(outs[0].Key) != sid {
		t.Fatalf("erase: outs %+v err %v", outs, err)
	}
	table.apply(outs, g.Table)
	if _, ok := table[sid]; ok {
		t.Fatal("state survived erasure")
	}
	// An event after erasure only makes a placeholder, which no reader takes for a session
	// and which the tick tombstones once it is older than the early-event TTL.
	outs, err = g.Handler(ctx, record(t, c, decision("verified", 31), 101), table)
	if err != nil || len(outs) != 1 {
		t.Fatalf("after erasure: outs %+v err %v", outs, err)
	}
	table.apply(outs, g.Table)
	if st := decodeState(t, c, table[sid]); st.Status != schemas.StatusUnopened || len(st.EarlyEvents) != 1 || st.Decision != nil {
		t.Fatalf("after erasure: state = %+v", st)
	}
	if outs, _ := g.OnTick(ctx, at(31).Add(DefaultEarlyTTL), table); len(outs) != 0 {
		t.Fatalf("placeholder purged before its TTL: %+v", outs)
	}
	outs, err = g.OnTick(ctx, at(32).Add(DefaultEarlyTTL), table)
	if err != nil || len(outs) != 1 || outs[0].Topic != schemas.TopicSessionState || outs[0].Value != nil {
		t.Fatalf("placeholder not purged after its TTL: %+v %v", outs, err)
	}
}

// TestGroupHandlerFoldsEarlyEvents consumes a session's events with its SessionOpened moved
// to every later position (inputs are separate topics: a capture can be consumed before the
// session it belongs to). Every order must give the state of in-order consumption.
func TestGroupHandlerFoldsEarlyEvents(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c)
	ctx := context.Background()
	events := fullSequence()[:12]
	if _, ok := events[0].(*schemas.SessionEvent); !ok {
		t.Fatal("the sequence does not start with the SessionOpened")
	}
	run := func(order []any) (memTable, *schemas.SessionState) {
		table := memTable{}
		for i, e := range order {
			outs, err := g.Handler(ctx, record(t, c, e, int64(i)), table)
			if err != nil {
				t.Fatalf("event %d (%T): %v", i, e, err)
			}
			table.apply(outs, g.Table)
		}
		return table, decodeState(t, c, table[sid])
	}
	_, want := run(events)
	for k := 1; k < len(events); k++ {
		order := append(append(slices.Clone(events[1:k+1]), events[0]), events[k+1:]...)
		_, got := run(order)
		if len(got.EarlyEvents) != 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("SessionOpened consumed after %d events: state = %+v\nwant %+v", k, got, want)
		}
		// Before the SessionOpened the table holds a placeholder, never a session.
		table, ph := run(order[:k])
		if ph.Status != schemas.StatusUnopened || len(ph.EarlyEvents) != k || ph.Decision != nil || len(ph.Captures) != 0 {
			t.Errorf("after %d early events: placeholder = %+v", k, ph)
		}
		if outs, _ := g.OnTick(ctx, at(0), table); len(outs) != 0 {
			t.Errorf("a fresh placeholder was expired or purged: %+v", outs)
		}
	}
}

func TestGroupHandlerBoundsEarlyEvents(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c)
	table := memTable{}
	rec := record(t, c, capture("selfie", "cap_s", 1), 0)
	for i := range MaxEarlyEvents {
		outs, err := g.Handler(context.Background(), rec, table)
		if err != nil {
			t.Fatalf("early event %d: %v", i, err)
		}
		table.apply(outs, g.Table)
	}
	if _, err := g.Handler(context.Background(), rec, table); err == nil {
		t.Fatal("a full placeholder took one more event")
	}
}

func TestGroupHandlerRejectsBadRecords(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c)
	ctx := context.Background()
	good := record(t, c, idCard(), 0)
	tests := []struct {
		name string
		rec  *stream.Record
	}{
		{"undecodable", &stream.Record{Topic: schemas.TopicSessions, Key: []byte(sid), Value: []byte("garbage")}},
		{"unknown topic", &stream.Record{Topic: "other", Key: []byte(sid), Value: good.Value}},
		{"key mismatch", &stream.Record{Topic: schemas.TopicSessions, Key: []byte("ses_other"), Value: good.Value}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs, err := g.Handler(ctx, tt.rec, memTable{})
			if err == nil || outs != nil {
				t.Fatalf("outs %+v err %v, want an error", outs, err)
			}
		})
	}
	t.Run("corrupt stored state", func(t *testing.T) {
		if _, err := g.Handler(ctx, good, memTable{sid: []byte("garbage")}); err == nil {
			t.Fatal("want an error")
		}
	})
	t.Run("tombstone input ignored", func(t *testing.T) {
		outs, err := g.Handler(ctx, &stream.Record{Topic: schemas.TopicDecisions, Key: []byte(sid)}, memTable{})
		if err != nil || outs != nil {
			t.Fatalf("outs %+v err %v", outs, err)
		}
	})
}

func TestTickExpiresOnlyDueOpenOrCapturingSessions(t *testing.T) {
	c := newCodec(t)
	now := at(2000)
	g := NewGroup(c, WithClock(func() time.Time { return now }))
	table := memTable{}
	put := func(id, status string, expiresAt time.Time) {
		st := &schemas.SessionState{Envelope: schemas.Envelope{SessionID: id, TenantID: "ten_1"}, Status: status, ExpiresAt: expiresAt}
		b, err := c.Encode(schemas.TopicSessionState, st)
		if err != nil {
			t.Fatal(err)
		}
		table[id] = b
	}
	put("ses_open_due", schemas.StatusOpen, at(1800))
	put("ses_capturing_due", schemas.StatusCapturing, at(2000)) // expires_at == now: due
	put("ses_open_later", schemas.StatusOpen, at(2001))
	put("ses_processing", schemas.StatusProcessing, at(1800))
	put("ses_verified", schemas.StatusVerified, at(1800))
	put("ses_expired", schemas.StatusExpired, at(1800))

	// The runtime's now is ignored in favour of WithClock.
	outs, err := g.OnTick(context.Background(), at(0), table)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 {
		t.Fatalf("outputs = %d, want 2", len(outs))
	}
	for i, want := range []string{"ses_capturing_due", "ses_open_due"} {
		o := outs[i]
		if o.Topic != schemas.TopicSessions || string(o.Key) != want {
			t.Fatalf("output %d = %s %s", i, o.Topic, o.Key)
		}
		var ev schemas.SessionEvent
		if err := c.Decode(schemas.TopicSessions, o.Value, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Expired == nil || ev.Envelope.EventID != "evt_exp_"+want || ev.Envelope.SessionID != want ||
			ev.Envelope.Producer != "session" || ev.Envelope.TenantID != "ten_1" {
			t.Fatalf("event = %+v", ev)
		}
	}
	// The tick itself changes no state; a second tick emits the same bytes.
	again, err := g.OnTick(context.Background(), at(0), table)
	if err != nil || len(again) != 2 || string(again[0].Value) != string(outs[0].Value) {
		t.Fatalf("second tick differs: %v", err)
	}
}

func TestTickThenFoldExpiresSession(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c)
	table := memTable{}
	ctx := context.Background()
	for i, e := range []any{idCard(), capture("selfie", "cap_s", 1)} {
		outs, err := g.Handler(ctx, record(t, c, e, int64(i)), table)
		if err != nil {
			t.Fatal(err)
		}
		table.apply(outs, g.Table)
	}
	if outs, _ := g.OnTick(ctx, at(1799), table); len(outs) != 0 {
		t.Fatalf("expired before expires_at: %d outputs", len(outs))
	}
	outs, err := g.OnTick(ctx, at(1800), table)
	if err != nil || len(outs) != 1 {
		t.Fatalf("tick: %d outputs, %v", len(outs), err)
	}
	rec := &stream.Record{Topic: outs[0].Topic, Key: outs[0].Key, Value: outs[0].Value, Offset: 2}
	res, err := g.Handler(ctx, rec, table)
	if err != nil || len(res) != 1 {
		t.Fatalf("fold expiry: %+v %v", res, err)
	}
	table.apply(res, g.Table)
	if st := decodeState(t, c, table[sid]); st.Status != schemas.StatusExpired || !st.UpdatedAt.Equal(at(1800)) {
		t.Fatalf("state = %+v", st)
	}
	if outs, _ := g.OnTick(ctx, at(5000), table); len(outs) != 0 {
		t.Fatal("expired session expired again")
	}
	if res, _ := g.Handler(ctx, rec, table); len(res) != 0 {
		t.Fatal("duplicate expiry event changed the state")
	}
}
