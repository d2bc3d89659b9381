package erasure

import (
	"context"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

type memTable map[string][]byte

func (m memTable) Get(key []byte) ([]byte, bool) { v, ok := m[string(key)]; return v, ok }

func (m memTable) Range(fn func(key, value []byte) bool) {
	for k, v := range m {
		if !fn([]byte(k), v) {
			return
		}
	}
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newCodec(t *testing.T) *schemas.Codec {
	t.Helper()
	c, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func rec(t *testing.T, c *schemas.Codec, topic, key string, v any) *stream.Record {
	t.Helper()
	b, err := c.Encode(topic, v)
	if err != nil {
		t.Fatal(err)
	}
	return &stream.Record{Topic: topic, Key: []byte(key), Value: b}
}

func indexed(tenant, sid, trk string, opened time.Time) *schemas.TrackingSessionOpened {
	return &schemas.TrackingSessionOpened{Envelope: schemas.Envelope{EventID: "evt_trk_" + sid, SessionID: sid, TenantID: tenant, OccurredAt: opened},
		TrackingID: trk, OpenedAt: opened}
}

func request(tenant, trk, consent string, at time.Time) *schemas.BiometricErasureRequested {
	return &schemas.BiometricErasureRequested{Envelope: schemas.Envelope{EventID: "evt_erasure_" + consent, TenantID: tenant, OccurredAt: at},
		TrackingID: trk, ConsentID: consent, Categories: schemas.BiometricCategories(), RequestedAt: at}
}

// handle runs the group's handler as the runtime does (table outputs applied) and
// returns the orders, checking every output's key.
func handle(t *testing.T, c *schemas.Codec, g stream.StatefulGroup, table memTable, r *stream.Record) []schemas.SessionEvent {
	t.Helper()
	outs, err := g.Handler(context.Background(), r, table)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	var orders []schemas.SessionEvent
	for _, o := range outs {
		switch o.Topic {
		case g.Table:
			if string(o.Key) != string(r.Key) {
				t.Errorf("table write keyed %q, input keyed %q: not co-partitioned", o.Key, r.Key)
			}
			table[string(o.Key)] = o.Value
		case schemas.TopicSessions:
			var ev schemas.SessionEvent
			if err := c.Decode(o.Topic, o.Value, &ev); err != nil || ev.EraseBiometrics == nil {
				t.Fatalf("order: %v %+v", err, ev)
			}
			if string(o.Key) != ev.Envelope.SessionID || ev.Envelope.EventID != OrderEventID(ev.Envelope.SessionID, ev.EraseBiometrics.ConsentID) {
				t.Errorf("order keyed %q: %+v", o.Key, ev.Envelope)
			}
			orders = append(orders, ev)
		default:
			t.Fatalf("output to %s", o.Topic)
		}
	}
	return orders
}

func sessionsOf(orders []schemas.SessionEvent) []string {
	var out []string
	for _, o := range orders {
		out = append(out, o.Envelope.SessionID+"/"+o.EraseBiometrics.ConsentID)
	}
	return out
}

func TestGroupMatchesRequestsAndSessionsInEitherOrder(t *testing.T) {
	c := newCodec(t)
	g := Group(c)
	if g.Name != GroupName || g.Table != schemas.TopicErasureState || len(g.Inputs) != 2 {
		t.Fatalf("group %+v", g)
	}
	table := memTable{}
	run := func(topic string, v any) []string {
		var key string
		switch ev := v.(type) {
		case *schemas.TrackingSessionOpened:
			key = ev.TrackingID
		case *schemas.BiometricErasureRequested:
			key = ev.TrackingID
		}
		return sessionsOf(handle(t, c, g, table, rec(t, c, topic, key, v)))
	}
	// Known before the request: ordered erased by it.
	if got := run(schemas.TopicTrackingSessions, indexed("ten_1", "ses_1", "trk", t0)); got != nil {
		t.Fatalf("orders %v", got)
	}
	run(schemas.TopicTrackingSessions, indexed("ten_2", "ses_x", "trk", t0)) // another tenant
	if got := run(schemas.TopicErasures, request("ten_1", "trk", "con_1", t0.Add(time.Hour))); len(got) != 1 || got[0] != "ses_1/con_1" {
		t.Fatalf("orders %v", got)
	}
	// Indexed after the request, opened before it (the index lags): ordered at once.
	if got := run(schemas.TopicTrackingSessions, indexed("ten_1", "ses_2", "trk", t0.Add(time.Minute))); len(got) != 1 || got[0] != "ses_2/con_1" {
		t.Fatalf("orders %v", got)
	}
	// Opened after the request: kept, until a later withdrawal covers it.
	if got := run(schemas.TopicTrackingSessions, indexed("ten_1", "ses_3", "trk", t0.Add(2*time.Hour))); got != nil {
		t.Fatalf("orders %v", got)
	}
	if got := run(schemas.TopicErasures, request("ten_1", "trk", "con_2", t0.Add(3*time.Hour))); len(got) != 1 || got[0] != "ses_3/con_2" {
		t.Fatalf("orders %v", got)
	}
	// Replays change nothing and order nothing.
	for _, r := range []struct {
		topic string
		v     any
	}{
		{schemas.TopicTrackingSessions, indexed("ten_1", "ses_1", "trk", t0)},
		{schemas.TopicTrackingSessions, indexed("ten_1", "ses_2", "trk", t0.Add(time.Minute))},
		{schemas.TopicErasures, request("ten_1", "trk", "con_1", t0.Add(time.Hour))},
		{schemas.TopicErasures, request("ten_1", "trk", "con_2", t0.Add(3*time.Hour))},
	} {
		before := string(table["trk"])
		if got := run(r.topic, r.v); got != nil || string(table["trk"]) != before {
			t.Errorf("replay of %T ordered %v", r.v, got)
		}
	}
	var st schemas.TrackingErasureState
	if err := c.Decode(schemas.TopicErasureState, table["trk"], &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Sessions) != 4 || len(st.Erasures) != 2 || st.Sessions[3].SessionID != "ses_x" || st.Sessions[3].ErasureConsentID != nil {
		t.Errorf("state %+v", st)
	}
}

func TestGroupRefusesMiskeyedRecords(t *testing.T) {
	c := newCodec(t)
	g := Group(c)
	if _, err := g.Handler(context.Background(), rec(t, c, schemas.TopicErasures, "other", request("ten_1", "trk", "con_1", t0)), memTable{}); err == nil {
		t.Error("a request keyed by another tracking id was accepted")
	}
	if outs, err := g.Handler(context.Background(), &stream.Record{Topic: schemas.TopicErasures, Key: []byte("trk")}, memTable{}); err != nil || outs != nil {
		t.Errorf("tombstone: %v %v", outs, err)
	}
}

func TestIndexGroupRekeysByTrackingID(t *testing.T) {
	c := newCodec(t)
	g := IndexGroup(c)
	trk := "trk_1"
	open := func(trackingID *string) *stream.Record {
		return rec(t, c, schemas.TopicSessions, "ses_1", &schemas.SessionEvent{
			Envelope: schemas.Envelope{EventID: "evt_open", SessionID: "ses_1", TenantID: "ten_1", OccurredAt: t0},
			Opened:   &schemas.SessionOpened{Flow: "id_card", TrackingID: trackingID, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		})
	}
	outs, err := g.Handler(context.Background(), open(&trk))
	if err != nil || len(outs) != 1 || outs[0].Topic != schemas.TopicTrackingSessions || string(outs[0].Key) != trk {
		t.Fatalf("outputs %+v %v", outs, err)
	}
	var ev schemas.TrackingSessionOpened
	if err := c.Decode(schemas.TopicTrackingSessions, outs[0].Value, &ev); err != nil ||
		ev.Envelope.SessionID != "ses_1" || ev.Envelope.TenantID != "ten_1" || !ev.OpenedAt.Equal(t0) || ev.TrackingID != trk {
		t.Fatalf("%+v %v", ev, err)
	}
	if outs, err := g.Handler(context.Background(), open(nil)); err != nil || outs != nil {
		t.Errorf("session without tracking id: %+v %v", outs, err)
	}
}
