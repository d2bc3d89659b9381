package chaos

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/sinks/webhook"
)

// TestFleetKillHoldsDown: a killed process stays down until Start; one that exits by
// itself is counted and started again.
func TestFleetKillHoldsDown(t *testing.T) {
	f, err := NewFleet("/bin/sh", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(time.Second)
	ctx := context.Background()
	sleeper, err := f.Add(ctx, Spec{Name: "sleeper", Kind: "group", Args: []string{"-c", "sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	quitter, err := f.Add(ctx, Spec{Name: "quitter", Kind: "group", Args: []string{"-c", "echo bye; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	sleeper.Kill()
	time.Sleep(1500 * time.Millisecond)
	if sleeper.Running() {
		t.Fatal("a killed process was started again before Start")
	}
	st := sleeper.Stats()
	if st.Kills != 1 || st.UnexpectedExits != 0 || st.Starts != 1 {
		t.Fatalf("killed process stats %+v", st)
	}
	if err := sleeper.Start(ctx); err != nil || !sleeper.Running() {
		t.Fatalf("start again: %v", err)
	}
	if st := sleeper.Stats(); st.Starts != 2 || len(st.Recoveries) != 1 {
		t.Fatalf("restarted process stats %+v", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for quitter.Stats().Starts < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	st = quitter.Stats()
	if st.Starts < 2 || st.UnexpectedExits < 1 || st.LastExit != "exit status 3" {
		t.Fatalf("a process exiting by itself: %+v", st)
	}
	if !strings.Contains(quitter.Tail(100), "bye") {
		t.Fatalf("log tail %q", quitter.Tail(100))
	}
}

// TestReceiver: a signed delivery is recorded as signed, a forged one is not; faults answer
// 500; Down refuses connections until Up.
func TestReceiver(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	r, err := StartReceiver([][]byte{key}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	post := func(id string, sign []byte) (int, error) {
		body := []byte(`{"type":"ekyc.session.completed","data":{"session_id":"ses_1"}}`)
		ts := time.Now().Unix()
		sig, _ := webhook.Signature([][]byte{sign}, id, ts, body)
		req, _ := http.NewRequest(http.MethodPost, r.URL(), bytes.NewReader(body))
		req.Header.Set(webhook.HeaderID, id)
		req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(webhook.HeaderSignature, sig)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	}
	if code, err := post("msg_a", key); err != nil || code != 200 {
		t.Fatalf("signed delivery: %d %v", code, err)
	}
	if code, err := post("msg_b", []byte("another key of thirty-two bytes!")); err != nil || code != 200 {
		t.Fatalf("forged delivery: %d %v", code, err)
	}
	r.SetFaults(1, 0)
	if code, _ := post("msg_c", key); code != 500 {
		t.Fatalf("fault: %d", code)
	}
	r.SetFaults(0, 0)
	r.Down()
	if _, err := post("msg_d", key); err == nil {
		t.Fatal("a receiver that is down took a delivery")
	}
	if err := r.Up(); err != nil {
		t.Fatal(err)
	}
	if code, err := post("msg_e", key); err != nil || code != 200 {
		t.Fatalf("after Up: %d %v", code, err)
	}
	ds := r.Deliveries()
	if len(ds) != 4 || !ds[0].SignedOK || ds[1].SignedOK || ds[2].Answered != 500 || ds[3].WebhookID != "msg_e" || ds[0].SessionID != "ses_1" {
		t.Fatalf("deliveries %+v", ds)
	}
}

// TestWebhookAndClickHouseInvariants: each way a sink can break exactly-once is reported.
func TestWebhookAndClickHouseInvariants(t *testing.T) {
	decisions := map[string]schemas.Decision{
		"ses_a": {DecisionID: "dec_a", Outcome: "verified"},
		"ses_b": {DecisionID: "dec_b", Outcome: "rejected"},
		"ses_c": {DecisionID: "dec_c", Outcome: "verified"},
		"ses_d": {DecisionID: "dec_d", Outcome: "verified"},
	}
	opened := map[string]Session{}
	for id := range decisions {
		opened[id] = Session{ID: id, Completed: true}
	}
	wid := readmodel.WebhookID
	good := checkWebhooks(decisions, opened, []Delivery{
		{WebhookID: wid("dec_a"), SessionID: "ses_a", SignedOK: true, Answered: 500},
		{WebhookID: wid("dec_a"), SessionID: "ses_a", SignedOK: true, Answered: 200},
		{WebhookID: wid("dec_b"), SessionID: "ses_b", SignedOK: true, Answered: 200},
		{WebhookID: wid("dec_c"), SessionID: "ses_c", SignedOK: true, Answered: 200},
		{WebhookID: wid("dec_d"), SessionID: "ses_d", SignedOK: true, Answered: 200},
	})
	if !good.OK() || good.Checked != 4 {
		t.Fatalf("a retried delivery broke the invariant: %+v", good)
	}
	bad := checkWebhooks(decisions, opened, []Delivery{
		{WebhookID: wid("dec_a"), SessionID: "ses_a", SignedOK: true, Answered: 200},
		{WebhookID: "msg_other", SessionID: "ses_a", SignedOK: true, Answered: 200},   // two ids
		{WebhookID: wid("dec_b"), SessionID: "ses_b", SignedOK: false, Answered: 200}, // forged
		{WebhookID: wid("dec_c"), SessionID: "ses_c", SignedOK: true, Answered: 500},  // never 200
		{WebhookID: "msg_x", SessionID: "ses_x", SignedOK: true, Answered: 200},       // no decision
	}) // ses_d: none
	want := []string{"ses_a: webhook ids", "ses_b: delivery", "ses_c: never answered 200", "ses_d: no webhook", "ses_x: webhook of a session without"}
	if len(bad.Broken) != len(want) {
		t.Fatalf("broken %q", bad.Broken)
	}
	for i, w := range want {
		if !strings.HasPrefix(bad.Broken[i], w) {
			t.Errorf("broken[%d] = %q, want %q…", i, bad.Broken[i], w)
		}
	}

	ch := checkClickHouse(decisions, opened, []ClickHouseRow{
		{"ses_a", "dec_a", "verified"}, {"ses_a", "dec_a", "verified"}, // twice
		{"ses_b", "dec_b", "verified"}, // other outcome
		{"ses_c", "dec_c", "verified"},
		{"ses_y", "dec_y", "verified"}, // no decision
	}) // ses_d: none
	want = []string{"ses_a: 2 rows", "ses_b: row dec_b verified", "ses_d: 0 rows", "ses_y: a row of a session without"}
	if len(ch.Broken) != len(want) {
		t.Fatalf("broken %q", ch.Broken)
	}
	for i, w := range want {
		if !strings.HasPrefix(ch.Broken[i], w) {
			t.Errorf("broken[%d] = %q, want %q…", i, ch.Broken[i], w)
		}
	}
}
