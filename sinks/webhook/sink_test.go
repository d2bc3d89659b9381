package webhook

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/schemas"
)

// TestReceiverDownThenUp: decisions made while the receiver is down are all delivered once
// it is up, each with a stable webhook-id on every attempt, both rotation signatures valid.
func TestReceiverDownThenUp(t *testing.T) {
	e := newEnv(t)
	k1, s1 := newKey(t)
	k2, s2 := newKey(t)
	rcv := newReceiver(t, k1, k2)
	tenants := tenant.NewRegistry(&tenant.Tenant{ID: "ten_a", WebhookURL: rcv.URL(),
		WebhookSecrets: []string{s1, s2}, AllowPrivateWebhooks: true})
	e.startSink(tenants, ExponentialSchedule(20, 5*time.Millisecond))
	attempts := e.tail(schemas.TopicWebhookAttempts)

	const n = 6
	for i := range n {
		sid := "ses_down" + strconv.Itoa(i)
		e.produce(schemas.TopicSessionState, sid, decided(sid, "ten_a", nil))
	}
	// Not decided yet / produced by another group: no webhook.
	other := decided("ses_other", "ten_a", nil)
	other.Envelope.Producer = "session"
	e.produce(schemas.TopicSessionState, "ses_other", other)

	// Wait until every session has failed at least twice against the closed port.
	failed := func(all []*schemas.WebhookAttempt) bool {
		per := map[string]int{}
		for _, a := range all {
			if a.Outcome == schemas.WebhookRetry && a.StatusCode == nil {
				per[a.Envelope.SessionID]++
			}
		}
		for i := range n {
			if per["ses_down"+strconv.Itoa(i)] < 2 {
				return false
			}
		}
		return true
	}
	seen := until(attempts, schemas.TopicWebhookAttempts, failed)
	rcv.start()
	delivered := func(all []*schemas.WebhookAttempt) bool {
		ok := map[string]bool{}
		for _, a := range append(seen, all...) {
			if a.Outcome == schemas.WebhookDelivered {
				ok[a.Envelope.SessionID] = true
			}
		}
		return len(ok) == n
	}
	all := append(seen, until(attempts, schemas.TopicWebhookAttempts, delivered)...)

	for _, a := range all {
		if want := "msg_dec_" + a.Envelope.SessionID; a.WebhookID != want {
			t.Errorf("attempt %d of %s: webhook_id %q, want %q", a.Attempt, a.Envelope.SessionID, a.WebhookID, want)
		}
		if a.Envelope.EventID != a.WebhookID+"/"+strconv.Itoa(a.Attempt) {
			t.Errorf("attempt event id %q", a.Envelope.EventID)
		}
		if a.Outcome == schemas.WebhookRetry && a.NextAttemptAt == nil {
			t.Errorf("retry without next_attempt_at: %+v", a)
		}
	}
	got, bad := rcv.deliveries()
	for _, b := range bad {
		t.Error(b)
	}
	ids := map[string]int{}
	for _, d := range got {
		ids[d.ID]++
		if d.Signatures != 2 {
			t.Errorf("%s: %d signatures, want 2 (rotation)", d.ID, d.Signatures)
		}
		typ, ts, sid, status := bodyOf(t, d.Body)
		if typ != "ekyc.session.completed" || "msg_dec_"+sid != d.ID || status != "verified" || ts == "" {
			t.Errorf("body of %s: type %q session %q status %q timestamp %q", d.ID, typ, sid, status, ts)
		}
	}
	for i := range n {
		if ids["msg_dec_ses_down"+strconv.Itoa(i)] == 0 {
			t.Errorf("ses_down%d never delivered", i)
		}
	}
	if ids["msg_dec_ses_other"] != 0 {
		t.Error("a snapshot not produced by the decision fold triggered a webhook")
	}
	retries, deliveries := 0, 0
	for _, a := range all {
		switch a.Outcome {
		case schemas.WebhookRetry:
			retries++
		case schemas.WebhookDelivered:
			deliveries++
		}
	}
	// The counters count every attempt made, the topic those recorded: at least as many.
	if got := e.attemptsCounted(schemas.WebhookRetry); got < float64(retries) || retries == 0 {
		t.Errorf("idstream_webhook_attempts_total{outcome=retry} = %v, %d retries recorded", got, retries)
	}
	if got := e.attemptsCounted(schemas.WebhookDelivered); got < float64(deliveries) || deliveries < n {
		t.Errorf("idstream_webhook_attempts_total{outcome=delivered} = %v, %d deliveries recorded", got, deliveries)
	}
}

// TestDeadLetterThenReplay: an endpoint answering 500 forever gets every attempt of the
// schedule, then the delivery is dead-lettered; a replay record (attempt 0 on the retry
// topic, as the admin endpoint writes) delivers it again once the endpoint recovers. A
// loopback target of a tenant without allow_private_webhooks is refused at once.
func TestDeadLetterThenReplay(t *testing.T) {
	e := newEnv(t)
	k1, s1 := newKey(t)
	rcv := newReceiver(t, k1)
	rcv.setStatus(500)
	rcv.start()
	tenants := tenant.NewRegistry(
		&tenant.Tenant{ID: "ten_a", WebhookURL: rcv.URL(), WebhookSecrets: []string{s1}, AllowPrivateWebhooks: true},
		&tenant.Tenant{ID: "ten_strict", WebhookURL: rcv.URL(), WebhookSecrets: []string{s1}},
	)
	schedule := ExponentialSchedule(4, 2*time.Millisecond)
	e.startSink(tenants, schedule)
	dlq := e.tail(schemas.TopicWebhookDLQ)
	attempts := e.tail(schemas.TopicWebhookAttempts)

	e.produce(schemas.TopicSessionState, "ses_dead", decided("ses_dead", "ten_a", nil))
	localhostURL := "http://localhost:" + rcv.addr[len("127.0.0.1:"):] + "/hook"
	e.produce(schemas.TopicSessionState, "ses_strict", decided("ses_strict", "ten_strict", nil))
	e.produce(schemas.TopicSessionState, "ses_named", decided("ses_named", "ten_strict", &localhostURL))

	dead := until(dlq, schemas.TopicWebhookDLQ, func(all []*schemas.WebhookDelivery) bool { return len(all) >= 3 })
	bySession := map[string]*schemas.WebhookDelivery{}
	for _, d := range dead {
		bySession[d.Envelope.SessionID] = d
	}
	d := bySession["ses_dead"]
	if d == nil || d.Attempt != schedule.Attempts() || d.LastStatus == nil || *d.LastStatus != 500 {
		t.Fatalf("dead letter of ses_dead: %+v, want attempt %d, last status 500", d, schedule.Attempts())
	}
	for _, sid := range []string{"ses_strict", "ses_named"} {
		if r := bySession[sid]; r == nil || r.Attempt != 1 || r.LastError == nil {
			t.Errorf("%s (loopback, tenant without private webhooks): dead letter %+v, want refused after 1 attempt", sid, r)
		}
	}
	got, _ := rcv.deliveries()
	if len(got) != schedule.Attempts() {
		t.Errorf("receiver got %d requests, want %d (only ses_dead's, one per attempt)", len(got), schedule.Attempts())
	}
	for _, g := range got {
		if g.ID != "msg_dec_ses_dead" {
			t.Errorf("unexpected request %s", g.ID)
		}
	}

	// Replay, as POST /v1/admin/webhooks/replay does: attempt 0 to the retry topic.
	rcv.setStatus(204)
	replay := *d
	replay.Attempt, replay.LastStatus, replay.LastError = 0, nil, nil
	replay.Envelope.EventID, replay.Envelope.Producer = "evt_replay_1", "edge"
	replay.NotBefore = time.UnixMilli(time.Now().UnixMilli()).UTC()
	e.produce(schemas.TopicWebhookRetry, "ses_dead", &replay)

	all := until(attempts, schemas.TopicWebhookAttempts, func(all []*schemas.WebhookAttempt) bool {
		for _, a := range all {
			if a.Outcome == schemas.WebhookDelivered {
				return true
			}
		}
		return false
	})
	outcomes := map[string][]string{}
	for _, a := range all {
		outcomes[a.Envelope.SessionID] = append(outcomes[a.Envelope.SessionID], a.Outcome)
	}
	want := fmt.Sprint([]string{"retry", "retry", "retry", "dead_lettered", "delivered"})
	if got := fmt.Sprint(outcomes["ses_dead"]); got != want {
		t.Errorf("ses_dead outcomes %s, want %s", got, want)
	}
	for _, sid := range []string{"ses_strict", "ses_named"} {
		if got := fmt.Sprint(outcomes[sid]); got != "[refused]" {
			t.Errorf("%s outcomes %s, want [refused]", sid, got)
		}
	}
	got, bad := rcv.deliveries()
	for _, b := range bad {
		t.Error(b)
	}
	if len(got) != schedule.Attempts()+1 || got[len(got)-1].ID != "msg_dec_ses_dead" {
		t.Errorf("after the replay the receiver has %d requests, want %d with the same webhook-id", len(got), schedule.Attempts()+1)
	}
}
