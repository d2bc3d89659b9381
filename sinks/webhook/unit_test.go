package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

// TestSignatureSpecVector checks the example of the Standard Webhooks specification.
func TestSignatureSpecVector(t *testing.T) {
	key, err := ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Signature([][]byte{key}, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
	if _, err := ParseSecret("sk_nope"); err == nil {
		t.Error("secret without whsec_ accepted")
	}
	if _, err := Signature(nil, "id", 1, nil); err == nil {
		t.Error("signature without keys accepted")
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.216.34": true, "2606:4700::1111": true, "8.8.8.8": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "100.127.255.254": false, "0.0.0.0": false,
		"224.0.0.1": false, "255.255.255.255": false, "::1": false, "::": false, "fe80::1": false,
		"fc00::1": false, "ff02::1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false,
		"64:ff9b::7f00:1": false,
	} {
		if got := PublicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestSenderRefusesPrivateTargets: checked on the resolved address at connect time, so a
// name resolving to loopback is refused as well as the literal; the receiver sees nothing.
func TestSenderRefusesPrivateTargets(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	s := newSender(2*time.Second, 1024, "test")
	key := [][]byte{[]byte("k")}
	for _, target := range []string{srv.URL, "http://localhost:" + port + "/", "http://[::1]:" + port + "/", "ftp://127.0.0.1/", "http://u:p@example.test/"} {
		res := s.send(context.Background(), target, false, "msg_1", time.Now(), key, []byte("{}"))
		if !errors.Is(res.err, ErrRefusedTarget) {
			t.Errorf("%s: err %v, want ErrRefusedTarget", target, res.err)
		}
		if res.err != nil && strings.Contains(res.err.Error(), "p@") {
			t.Errorf("error leaks the URL: %v", res.err)
		}
	}
	if hits != 0 {
		t.Fatalf("receiver got %d requests from refused targets", hits)
	}
	if res := s.send(context.Background(), srv.URL, true, "msg_1", time.Now(), key, []byte("{}")); res.err != nil || *res.status != 200 {
		t.Fatalf("allowed private target: %+v", res)
	}
}

// TestSenderRedirectsAndBodies: a redirect is not followed (it is a failed attempt) and a
// huge response body is read only up to the limit.
func TestSenderRedirectsAndBodies(t *testing.T) {
	followed := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/target", http.StatusTemporaryRedirect)
		case "/target":
			followed = true
		case "/huge":
			w.WriteHeader(500)
			chunk := make([]byte, 64<<10)
			for range 1000 { // 64 MB unless the client stops reading
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	}))
	defer srv.Close()
	s := newSender(5*time.Second, 1024, "test")
	key := [][]byte{[]byte("k")}
	res := s.send(context.Background(), srv.URL+"/redirect", true, "msg_1", time.Now(), key, nil)
	if res.err == nil || res.status == nil || *res.status != 307 || followed {
		t.Errorf("redirect: %+v followed=%v, want a failed attempt with status 307", res, followed)
	}
	res = s.send(context.Background(), srv.URL+"/huge", true, "msg_1", time.Now(), key, nil)
	if res.status == nil || *res.status != 500 {
		t.Errorf("huge body: %+v", res)
	}
}

func TestDefaultSchedule(t *testing.T) {
	s := DefaultSchedule()
	if s.Attempts() < 8 || s.Total() < 24*time.Hour {
		t.Fatalf("default schedule: %d attempts over %v, want >= 8 over >= 24h", s.Attempts(), s.Total())
	}
	for i := 1; i < len(s); i++ {
		if s[i] < s[i-1] {
			t.Errorf("schedule shrinks at %d", i)
		}
	}
	if _, more := s.Backoff(s.Attempts()); more {
		t.Error("the last attempt has a backoff")
	}
}

// TestTrigger calls the trigger handler with records, no broker.
func TestTrigger(t *testing.T) {
	codec, err := schemas.NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	_, secret := newKey(t)
	tenants := tenant.NewRegistry(
		&tenant.Tenant{ID: "ten_a", WebhookURL: "https://tenant.example/hook", WebhookSecrets: []string{secret}},
		&tenant.Tenant{ID: "ten_nourl", WebhookSecrets: []string{secret}},
	)
	prod, err := stream.NewProducer(stream.WithBrokers([]string{"127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	s, err := NewSink(Config{Runtime: []stream.Option{stream.WithBrokers([]string{"127.0.0.1:1"})}, Tenants: tenants, Codec: codec, Producer: prod})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(st *schemas.SessionState) *stream.Record {
		v, err := codec.Encode(schemas.TopicSessionState, st)
		if err != nil {
			t.Fatal(err)
		}
		return &stream.Record{Topic: schemas.TopicSessionState, Key: []byte(st.Envelope.SessionID), Value: v}
	}
	run := func(r *stream.Record) []stream.Output {
		outs, err := s.Trigger(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		return outs
	}
	st := decided("ses_1", "ten_a", nil)
	outs := run(rec(st))
	if len(outs) != 1 || outs[0].Topic != schemas.TopicWebhookRetry || string(outs[0].Key) != "ses_1" {
		t.Fatalf("decided snapshot: %+v", outs)
	}
	var d schemas.WebhookDelivery
	if err := codec.Decode(schemas.TopicWebhookRetry, outs[0].Value, &d); err != nil {
		t.Fatal(err)
	}
	if d.WebhookID != "msg_dec_ses_1" || d.Attempt != 0 || d.URL != "https://tenant.example/hook" || d.DecisionEventID != "evt_dec_ses_1" {
		t.Errorf("delivery %+v", d)
	}
	var decoded schemas.SessionState // as the edge's view holds it (Avro gives empty maps)
	if err := codec.Decode(schemas.TopicSessionState, rec(st).Value, &decoded); err != nil {
		t.Fatal(err)
	}
	want, _ := readmodel.WebhookBody(&decoded, time.Now())
	if string(d.Body) != string(want) {
		t.Errorf("body %s, want the Data Get webhook body %s", d.Body, want)
	}
	if again := run(rec(st)); string(again[0].Value) != string(outs[0].Value) {
		t.Error("trigger is not deterministic")
	}
	sessionURL := "https://session.example/cb"
	if outs := run(rec(decided("ses_2", "ten_nourl", &sessionURL))); len(outs) != 1 {
		t.Error("session webhook_url ignored")
	} else if err := codec.Decode(schemas.TopicWebhookRetry, outs[0].Value, &d); err != nil || d.URL != sessionURL {
		t.Errorf("session URL: %v %s", err, d.URL)
	}
	notDecision := decided("ses_3", "ten_a", nil)
	notDecision.Envelope.Producer = "session"
	for name, r := range map[string]*stream.Record{
		"tombstone":      {Topic: schemas.TopicSessionState, Key: []byte("ses_4")},
		"other producer": rec(notDecision),
		"no url":         rec(decided("ses_5", "ten_nourl", nil)),
		"unknown tenant": rec(decided("ses_6", "ten_gone", nil)),
	} {
		if outs := run(r); len(outs) != 0 {
			t.Errorf("%s: %d outputs, want none", name, len(outs))
		}
	}

	// A reviewer's retake request: the snapshot that folds it says so, once.
	private := "private words"
	retake := decided("ses_7", "ten_a", nil)
	retake.Decision, retake.DecidedAt, retake.Status = nil, nil, schemas.StatusCapturing
	retake.Envelope.EventID, retake.Envelope.Producer = "evt_rt7", schemas.ProducerEdge
	retake.Captures[0].Status = schemas.CaptureRetake
	retake.Review = &schemas.ReviewState{Retakes: 1, Retake: &schemas.ReviewRetake{
		Step: "document_front", ReviewerID: "ana", ReasonCode: "document_unreadable", Note: &private,
		RequestedAt: retake.UpdatedAt, EventID: "evt_rt7",
	}}
	outs = run(rec(retake))
	if len(outs) != 1 {
		t.Fatalf("retake snapshot: %d outputs", len(outs))
	}
	if err := codec.Decode(schemas.TopicWebhookRetry, outs[0].Value, &d); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Type string `json:"type"`
		Data struct {
			Status string                        `json:"status"`
			Steps  map[string]readmodel.StepView `json:"steps"`
			Retake *readmodel.RetakeView         `json:"retake"`
		} `json:"data"`
	}
	if err := json.Unmarshal(d.Body, &body); err != nil {
		t.Fatal(err)
	}
	if d.WebhookID != "msg_retake_rt7" || body.Type != readmodel.WebhookEventRetakeRequested || body.Data.Status != schemas.StatusCapturing ||
		body.Data.Steps["document_front"].Status != schemas.CaptureRetake || body.Data.Retake == nil || body.Data.Retake.ReasonCode != "document_unreadable" {
		t.Errorf("retake delivery %s: %s", d.WebhookID, d.Body)
	}
	if strings.Contains(string(d.Body), "private words") {
		t.Error("the reviewer's note reached the integrator")
	}
	// Later snapshots of the same request (the person's captures) send nothing more.
	later := *retake
	later.Envelope.EventID = "evt_capture"
	if outs := run(rec(&later)); len(outs) != 0 {
		t.Errorf("a later snapshot sent the retake webhook again: %d outputs", len(outs))
	}
}

func TestNewSinkValidates(t *testing.T) {
	if _, err := NewSink(Config{}); err == nil {
		t.Error("empty config accepted")
	}
}
