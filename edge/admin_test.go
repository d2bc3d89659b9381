package edge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

func TestAdminAuth(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "id_card")
	body := map[string]any{"id_number": "001099012345"}
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", keyAcme, body), 403, CodeForbidden)
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", s.SDKToken, body), 403, CodeForbidden)
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", "ak_wrong", body), 401, CodeUnauthorized)
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", "", body), 401, CodeUnauthorized)
	expectProblem(t, e.do("DELETE", "/v1/admin/blocklist/blk_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyAcme, "", nil), 403, CodeForbidden)
	expectProblem(t, e.doJSON("POST", "/v1/admin/webhooks/replay", keyAcme, map[string]any{"session_id": s.SessionID}), 403, CodeForbidden)
	// An admin key is not an API key.
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions", keyAcmeAdmin, map[string]any{"flow": "id_card"}), 401, CodeUnauthorized)
}

func TestBlocklist(t *testing.T) {
	e := newEnv(t)
	r := e.doJSON("POST", "/v1/admin/blocklist", keyAcmeAdmin, map[string]any{"id_number": " 001099-012345 ", "reason": "fraud ring"})
	m := r.json(t)
	if r.status != 201 || m["kind"] != "id_number" || !validID(m["id"].(string), "blk_") || m["created_at"] != "2026-11-22T10:00:00Z" {
		t.Fatalf("blocklist id: %d %v", r.status, m)
	}
	outs := e.pub.on(schemas.TopicBlocklist)
	if len(outs) != 1 || string(outs[0].Key) != m["id"] {
		t.Fatalf("produced %v", outs)
	}
	if strings.Contains(string(outs[0].Value), "001099") {
		t.Fatal("raw id number produced")
	}
	ent := decodeProduced[schemas.BlocklistEntry](t, outs[0])
	if ent.ValueHash == nil || *ent.ValueHash != BlocklistHash(e.srv.cfg.TokenSecret, "001099012345") || ent.Envelope.TenantID != "acme" {
		t.Errorf("entry %+v", ent)
	}

	s := e.openSession(keyAcme, "id_card")
	theirs := e.openSession(keyLimited, "id_card")
	r = e.doJSON("POST", "/v1/admin/blocklist", keyAcmeAdmin, map[string]any{"session_id": s.SessionID})
	if r.status != 201 || r.json(t)["kind"] != "face" {
		t.Fatalf("face: %d %s", r.status, r.body)
	}
	face := decodeProduced[schemas.BlocklistEntry](t, e.pub.on(schemas.TopicBlocklist)[1])
	if face.SourceSessionID == nil || *face.SourceSessionID != s.SessionID || len(face.Embedding) != 0 {
		t.Errorf("face entry %+v", face)
	}
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", keyAcmeAdmin, map[string]any{"session_id": theirs.SessionID}), 404, CodeSessionNotFound)
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", keyAcmeAdmin, map[string]any{}), 422, CodeInvalidRequest)
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", keyAcmeAdmin, map[string]any{"id_number": "1", "session_id": s.SessionID}), 422, CodeInvalidRequest)
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", keyAcmeAdmin, map[string]any{"id_number": "<script>"}), 422, CodeInvalidRequest)

	if r := e.do("DELETE", "/v1/admin/blocklist/"+m["id"].(string), keyAcmeAdmin, "", nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	del := e.pub.on(schemas.TopicBlocklist)
	gone := decodeProduced[schemas.BlocklistEntry](t, del[len(del)-1])
	if !gone.Deleted || gone.EntryID != m["id"] || string(del[len(del)-1].Key) != m["id"] {
		t.Errorf("deletion %+v", gone)
	}
	expectProblem(t, e.do("DELETE", "/v1/admin/blocklist/nope", keyAcmeAdmin, "", nil), 404, CodeNotFound)
}

func decide(st *schemas.SessionState, at time.Time, outcome string) {
	st.Status = outcome
	st.DecidedAt = &at
	st.Decision = &schemas.DecisionResult{DecisionID: "dec_" + st.Envelope.SessionID, Outcome: outcome, PolicyVersion: "p1", DecidedAt: at}
}

func TestWebhookReplay(t *testing.T) {
	e := newEnv(t)
	a := e.openSession(keyAcme, "id_card")
	b := e.openSession(keyAcme, "id_card")
	open := e.openSession(keyAcme, "id_card")
	theirs := e.openSession(keyLimited, "id_card")
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	decide(e.state(a.SessionID), t0, "verified")
	decide(e.state(b.SessionID), t0.Add(2*time.Hour), "rejected")
	decide(e.state(theirs.SessionID), t0, "verified")
	hook := "https://own.example/hook"
	e.state(b.SessionID).WebhookURL = &hook
	_ = open

	r := e.doJSON("POST", "/v1/admin/webhooks/replay", keyAcmeAdmin, map[string]any{"from": "2026-11-22T11:00:00Z", "to": "2026-11-22T13:00:00Z"})
	if r.status != 202 || r.json(t)["replayed"] != float64(1) {
		t.Fatalf("replay window: %d %s", r.status, r.body)
	}
	outs := e.pub.on(schemas.TopicWebhookRetry)
	d := decodeProduced[schemas.WebhookDelivery](t, outs[0])
	if d.WebhookID != "msg_dec_"+a.SessionID || d.URL != "https://acme.example/hook" || d.Attempt != 0 || string(outs[0].Key) != a.SessionID {
		t.Errorf("delivery %+v", d)
	}
	var body struct {
		Type, Timestamp string
		Data            map[string]any
	}
	if err := json.Unmarshal(d.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Type != "ekyc.session.completed" || body.Timestamp != "2026-11-22T12:00:00Z" || body.Data["session_id"] != a.SessionID || body.Data["status"] != "verified" {
		t.Errorf("webhook body %s", d.Body)
	}

	r = e.doJSON("POST", "/v1/admin/webhooks/replay", keyAcmeAdmin, map[string]any{"session_id": b.SessionID})
	if r.status != 202 || r.json(t)["replayed"] != float64(1) {
		t.Fatalf("replay session: %d %s", r.status, r.body)
	}
	outs = e.pub.on(schemas.TopicWebhookRetry)
	if d := decodeProduced[schemas.WebhookDelivery](t, outs[1]); d.URL != hook {
		t.Errorf("session webhook_url not used: %s", d.URL)
	}
	if r := e.doJSON("POST", "/v1/admin/webhooks/replay", keyAcmeAdmin, map[string]any{"session_id": open.SessionID}); r.json(t)["replayed"] != float64(0) {
		t.Errorf("undecided session replayed: %s", r.body)
	}
	expectProblem(t, e.doJSON("POST", "/v1/admin/webhooks/replay", keyAcmeAdmin, map[string]any{"session_id": theirs.SessionID}), 404, CodeSessionNotFound)
	expectProblem(t, e.doJSON("POST", "/v1/admin/webhooks/replay", keyAcmeAdmin, map[string]any{"from": "yesterday", "to": "2026-11-22T13:00:00Z"}), 422, CodeInvalidRequest)
	expectProblem(t, e.doJSON("POST", "/v1/admin/webhooks/replay", keyAcmeAdmin, map[string]any{}), 422, CodeInvalidRequest)
}
