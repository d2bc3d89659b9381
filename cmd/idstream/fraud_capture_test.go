package main

import (
	"bytes"
	"image/jpeg"
	"net/http"
	"slices"
	"testing"
)

// TestFraudCaptureReplayedSelfie: a selfie verified in one session and submitted again in
// later sessions of the same tenant, once as the same bytes and once decoded and re-encoded
// (other bytes, a near-identical picture), gets those sessions rejected replayed_capture,
// through the real edge, broker, fraud group (capture index with perceptual hashes) and
// decision policy.
func TestFraudCaptureReplayedSelfie(t *testing.T) {
	s := testService(t, allGroups)
	c := newClient(t, s)
	selfie := s.selfie(t)
	img, err := jpeg.Decode(bytes.NewReader(selfie))
	if err != nil {
		t.Fatal(err)
	}
	var reencoded bytes.Buffer
	if err := jpeg.Encode(&reencoded, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(reencoded.Bytes(), selfie) {
		t.Fatal("the re-encoded selfie has the same bytes")
	}
	session := func(image []byte) map[string]any {
		t.Helper()
		init := c.openSession("nfc_only")
		id, token := str(init["session_id"]), str(init["sdk_token"])
		if r := c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/nfc", token, "application/json", s.chipRead(t, str(init["nonce"]))); r.status != http.StatusAccepted {
			t.Fatalf("nfc: %d %s", r.status, r.body)
		}
		if r := c.upload(id, "selfie", "", image, token); r.status != http.StatusOK && r.status != http.StatusAccepted { // 202: the gate answered after the budget
			t.Fatalf("selfie: %d %s", r.status, r.body)
		}
		return c.waitStatus(id, "verified", "rejected")
	}
	if got := session(selfie); got["status"] != "verified" {
		t.Fatalf("first session: %v (%v)", got["status"], got["decision"])
	}
	for name, image := range map[string][]byte{"same bytes": selfie, "re-encoded": reencoded.Bytes()} {
		got := session(image)
		dec, _ := got["decision"].(map[string]any)
		reasons, _ := dec["reasons"].([]any)
		codes := make([]string, 0, len(reasons))
		for _, r := range reasons {
			codes = append(codes, str(r.(map[string]any)["code"]))
		}
		if got["status"] != "rejected" || !slices.Contains(codes, "replayed_capture") {
			t.Errorf("%s: status %v, reasons %v; want rejected replayed_capture", name, got["status"], codes)
		}
		for _, ch := range got["checks"].([]any) {
			if m := ch.(map[string]any); m["name"] == "fraud.replayed_capture" {
				t.Logf("%s: %v %v", name, m["status"], m["detail"])
			}
		}
	}
	// A different selfie of the same person (another framing) is not a replay.
	if got := session(s.selfie(t)); got["status"] != "verified" {
		t.Fatalf("fresh selfie: %v (%v)", got["status"], got["decision"])
	}
}
