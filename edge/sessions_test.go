package edge

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

func TestSessionInitHappyPath(t *testing.T) {
	e := newEnv(t)
	r := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, map[string]any{
		"flow": "chip_id_card", "reference_id": "ref-1", "locale": "en",
		"webhook_url": "https://hooks.example/x", "data_retention": "integrator",
	})
	if r.status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	m := r.json(t)
	id, _ := m["session_id"].(string)
	if !validID(id, "ses_") {
		t.Fatalf("session id %q", id)
	}
	if m["expires_in"] != float64(1800) || m["expires_at"] != "2026-11-22T10:30:00Z" || m["flow"] != "chip_id_card" {
		t.Errorf("unexpected body %v", m)
	}
	if steps, _ := m["steps"].([]any); len(steps) != 4 || steps[2] != "nfc" {
		t.Errorf("steps %v", m["steps"])
	}
	nonce, err := base64.StdEncoding.DecodeString(m["nonce"].(string))
	if err != nil || len(nonce) != 8 {
		t.Errorf("nonce %v is not 8 bytes of base64", m["nonce"])
	}
	outs := e.pub.on(schemas.TopicSessions)
	if len(outs) != 1 || string(outs[0].Key) != id {
		t.Fatalf("produced %v", outs)
	}
	ev := decodeProduced[schemas.SessionEvent](t, outs[0])
	if ev.Opened == nil || ev.Envelope.TenantID != "acme" || ev.Envelope.Producer != "edge" ||
		!strings.HasPrefix(ev.Envelope.EventID, "evt_") || ev.Opened.Locale != "en" ||
		ev.Opened.DataRetention != "integrator" || string(ev.Opened.Nonce) != string(nonce) ||
		ev.Opened.RequestSHA256 != nil {
		t.Errorf("produced event %+v / %+v", ev.Envelope, ev.Opened)
	}
	// The sdk_token reads its own session, limited to status and steps.
	g := e.do("GET", "/v1/ekyc/sessions/"+id, m["sdk_token"].(string), "", nil)
	if g.status != http.StatusOK {
		t.Fatalf("sdk get: %d %s", g.status, g.body)
	}
	gm := g.json(t)
	if len(gm) != 3 || gm["status"] != "open" || gm["session_id"] != id {
		t.Errorf("sdk view %v, want session_id, status, steps only", gm)
	}
	// The API key sees the full body.
	full := e.do("GET", "/v1/ekyc/sessions/"+id, keyAcme, "", nil).json(t)
	if full["flow"] != "chip_id_card" || full["reference_id"] != "ref-1" || full["decision"] != nil {
		t.Errorf("full view %v", full)
	}
	if _, ok := full["decision"]; !ok {
		t.Error("decision must be present (null) before the decision")
	}
}

func TestSessionInitBadInput(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, key, ct string
		body          string
		status        int
		code          string
	}{
		{"unknown flow", keyAcme, "application/json", `{"flow":"nope"}`, 422, CodeInvalidFlow},
		{"flow not allowed for tenant", keyBeta, "application/json", `{"flow":"passport"}`, 422, CodeInvalidFlow},
		{"missing flow", keyAcme, "application/json", `{}`, 422, CodeInvalidRequest},
		{"wrong type", keyAcme, "application/json", `{"flow":5}`, 422, CodeInvalidRequest},
		{"bad locale", keyAcme, "application/json", `{"flow":"id_card","locale":"fr"}`, 422, CodeInvalidRequest},
		{"bad retention", keyAcme, "application/json", `{"flow":"id_card","data_retention":"forever"}`, 422, CodeInvalidRequest},
		{"relative webhook", keyAcme, "application/json", `{"flow":"id_card","webhook_url":"/hook"}`, 422, CodeInvalidRequest},
		{"private webhook", keyAcme, "application/json", `{"flow":"id_card","webhook_url":"http://127.0.0.1/h"}`, 422, CodeInvalidRequest},
		{"long webhook", keyAcme, "application/json", `{"flow":"id_card","webhook_url":"https://x.example/` + strings.Repeat("a", 3000) + `"}`, 422, CodeInvalidRequest},
		{"invalid json", keyAcme, "application/json", `{"flow":`, 400, CodeInvalidJSON},
		{"wrong content type", keyAcme, "text/plain", `{"flow":"id_card"}`, 415, CodeUnsupportedMedia},
		{"no content type", keyAcme, "", `{"flow":"id_card"}`, 415, CodeUnsupportedMedia},
		{"oversized json", keyAcme, "application/json", `{"flow":"id_card","reference_id":"` + strings.Repeat("a", 70<<10) + `"}`, 413, CodePayloadTooLarge},
		{"missing key", "", "application/json", `{"flow":"id_card"}`, 401, CodeUnauthorized},
		{"wrong key", "sk_wrong", "application/json", `{"flow":"id_card"}`, 401, CodeUnauthorized},
		{"admin key", keyAcmeAdmin, "application/json", `{"flow":"id_card"}`, 401, CodeUnauthorized},
		{"consent required without checker", keyBeta, "application/json", `{"flow":"id_card","tracking_id":"trk_1"}`, 422, CodeConsentRequired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/ekyc/sessions", c.key, c.ct, []byte(c.body))
			expectProblem(t, r, c.status, c.code)
			if c.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	if n := len(e.pub.on(schemas.TopicSessions)); n != 0 {
		t.Errorf("%d sessions produced from bad requests", n)
	}
	// An sdk_token cannot open sessions.
	s := e.openSession(keyAcme, "id_card")
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions", s.SDKToken, map[string]any{"flow": "id_card"}), 401, CodeUnauthorized)
}

func TestSessionInitConsentGate(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.ConsentChecker = fakeConsent{granted: map[string]bool{"beta|trk_ok|" + ConsentPurposeEKYC: true}}
	})
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions", keyBeta, map[string]any{"flow": "id_card", "tracking_id": "trk_no"}), 422, CodeConsentRequired)
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions", keyBeta, map[string]any{"flow": "id_card"}), 422, CodeConsentRequired)
	if r := e.doJSON("POST", "/v1/ekyc/sessions", keyBeta, map[string]any{"flow": "id_card", "tracking_id": "trk_ok"}); r.status != 201 {
		t.Fatalf("granted consent refused: %d %s", r.status, r.body)
	}
}

func TestSessionInitIdempotency(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"flow": "id_card", "reference_id": "r1"}
	first := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, body, "Idempotency-Key", "key-1")
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	// Same key, same body (other key order and spacing): the same answer.
	second := e.do("POST", "/v1/ekyc/sessions", keyAcme, "application/json",
		[]byte(`{ "reference_id":"r1", "flow":"id_card" }`), "Idempotency-Key", "key-1")
	if second.status != 201 || string(second.body) != string(first.body) {
		t.Fatalf("retry: %d %s\nfirst: %s", second.status, second.body, first.body)
	}
	// Same key, another body → 409.
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, map[string]any{"flow": "passport"}, "Idempotency-Key", "key-1"), 409, CodeIdempotencyKeyReused)
	// Another tenant with the same key gets its own session.
	other := e.doJSON("POST", "/v1/ekyc/sessions", keyLimited, body, "Idempotency-Key", "key-1")
	if other.status != 201 || other.json(t)["session_id"] == first.json(t)["session_id"] {
		t.Fatalf("other tenant: %d %s", other.status, other.body)
	}
	// Another key: another session.
	if r := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, body, "Idempotency-Key", "key-2"); r.json(t)["session_id"] == first.json(t)["session_id"] {
		t.Fatal("two keys share a session")
	}
	// After 24 h the key is spent.
	e.clock.Advance(25 * time.Hour)
	expectProblem(t, e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, body, "Idempotency-Key", "key-1"), 409, CodeIdempotencyKeyReused)
	if n := len(e.pub.on(schemas.TopicSessions)); n != 3 {
		t.Errorf("%d SessionOpened produced, want 3", n)
	}
	st := e.state(first.json(t)["session_id"].(string))
	if st.RequestSHA256 == nil || len(*st.RequestSHA256) != 64 {
		t.Errorf("request hash not recorded: %v", st.RequestSHA256)
	}
}

func TestSessionInitProduceFailureIs503(t *testing.T) {
	e := newEnv(t)
	e.pub.fail = errTest
	r := e.doJSON("POST", "/v1/ekyc/sessions", keyAcme, map[string]any{"flow": "id_card"})
	expectProblem(t, r, 503, CodeUnavailable)
	if strings.Contains(string(r.body), errTest.Error()) {
		t.Error("5xx leaks the internal error")
	}
}

func TestGetSessionAccess(t *testing.T) {
	e := newEnv(t)
	a := e.openSession(keyAcme, "id_card")
	b := e.openSession(keyAcme, "id_card")
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/ses_aaaaaaaaaaaaaaaaaaaaaaaaaa", keyAcme, "", nil), 404, CodeSessionNotFound)
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/../../etc", keyAcme, "", nil), 404, CodeNotFound)
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/"+a.SessionID, keyLimited, "", nil), 404, CodeSessionNotFound)
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/"+b.SessionID, a.SDKToken, "", nil), 404, CodeSessionNotFound)
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/"+a.SessionID, "", "", nil), 401, CodeUnauthorized)
	// One character of the signature changed, well before its end: the last characters of
	// base64 carry bits a decoder may ignore, so changing them can leave the signature as is.
	tok := []byte(a.SDKToken)
	k := len(tok) - 8
	if tok[k] == 'A' {
		tok[k] = 'B'
	} else {
		tok[k] = 'A'
	}
	tampered := string(tok)
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/"+a.SessionID, tampered, "", nil), 401, CodeUnauthorized)
	// Past expiry the state (still "open") is reported expired.
	e.clock.Advance(31 * time.Minute)
	if st := e.do("GET", "/v1/ekyc/sessions/"+a.SessionID, keyAcme, "", nil).json(t)["status"]; st != "expired" {
		t.Errorf("status %v, want expired", st)
	}
}

// TestSDKWaitsForAnOpenedSession: an sdk_token proves its session was opened, so a step
// request for a session missing from the view (opened by another edge replica, or by this
// one before it restarted, and not folded yet) waits for its state and then answers 503
// with Retry-After, never 404 session_not_found (found by idstream chaos). An API key gets
// 404 at once, as does a token whose session was opened long ago.
func TestSDKWaitsForAnOpenedSession(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "id_card")
	st := e.sessions.m[s.SessionID]
	delete(e.sessions.m, s.SessionID) // the restarted edge's view has not got it yet
	go func() {
		time.Sleep(200 * time.Millisecond)
		e.sessions.put(st)
	}()
	if r := e.do("GET", "/v1/ekyc/sessions/"+s.SessionID, s.SDKToken, "", nil); r.status != 200 {
		t.Fatalf("state arriving during the wait: %d %s", r.status, r.body)
	}
	delete(e.sessions.m, s.SessionID)
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/"+s.SessionID, keyAcme, "", nil), 404, CodeSessionNotFound)
	r := e.do("GET", "/v1/ekyc/sessions/"+s.SessionID, s.SDKToken, "", nil)
	expectProblem(t, r, 503, CodeUnavailable)
	if r.header.Get("Retry-After") != "2" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	e.sessions.mu.Lock()
	e.sessions.erased = map[string]bool{s.SessionID: true}
	e.sessions.mu.Unlock()
	start := time.Now()
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/"+s.SessionID, s.SDKToken, "", nil), 404, CodeSessionNotFound)
	if time.Since(start) >= openedStateWait {
		t.Error("an erased session waited for its state") // its tombstone says it will not come
	}
	e.sessions.mu.Lock()
	e.sessions.erased = nil
	e.sessions.mu.Unlock()
	e.clock.Advance(openedStateWindow + time.Second)
	expectProblem(t, e.do("GET", "/v1/ekyc/sessions/"+s.SessionID, s.SDKToken, "", nil), 404, CodeSessionNotFound)
}

func TestDeleteSession(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "id_card")
	e.blobs.m["acme/"+s.SessionID+"/cap_x/image"] = []byte("x")
	e.blobs.m["acme/"+s.SessionID+"x/cap_x/image"] = []byte("x")
	expectProblem(t, e.do("DELETE", "/v1/ekyc/sessions/"+s.SessionID, s.SDKToken, "", nil), 401, CodeUnauthorized)
	expectProblem(t, e.do("DELETE", "/v1/ekyc/sessions/"+s.SessionID, keyLimited, "", nil), 404, CodeSessionNotFound)
	r := e.do("DELETE", "/v1/ekyc/sessions/"+s.SessionID, keyAcme, "", nil)
	if r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if left := e.blobs.keys("acme/" + s.SessionID + "/"); len(left) != 0 {
		t.Errorf("blobs left: %v", left)
	}
	if len(e.blobs.keys("acme/"+s.SessionID+"x/")) != 1 {
		t.Error("a neighbour's blobs were deleted")
	}
	outs := e.pub.on(schemas.TopicSessions)
	ev := decodeProduced[schemas.SessionEvent](t, outs[len(outs)-1])
	if ev.Erased == nil || string(outs[len(outs)-1].Key) != s.SessionID {
		t.Errorf("no SessionErased produced: %+v", ev)
	}
	// Once the tombstone reaches the view, a repeated DELETE is 404.
	delete(e.sessions.m, s.SessionID)
	expectProblem(t, e.do("DELETE", "/v1/ekyc/sessions/"+s.SessionID, keyAcme, "", nil), 404, CodeSessionNotFound)
}
