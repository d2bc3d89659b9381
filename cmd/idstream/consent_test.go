package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/blob"
	"github.com/idstream/idstream/processors/chip/chiptest"
	"github.com/idstream/idstream/schemas"
)

// TestConsentGate: for a tenant that requires consent, Session Init needs a tracking id whose
// eKYC purpose is granted through the consent API; a withdrawal closes the gate again.
func TestConsentGate(t *testing.T) {
	s := testService(t, allGroups, func(c *Config) { c.TenantsFile = bankTenants(t) })
	c := newClient(t, s, "sk_bank")
	init := func() response {
		return c.postJSON("/v1/ekyc/sessions", c.key, map[string]any{"flow": "id_card", "tracking_id": "trk_gate_1"})
	}
	if r := init(); r.status != 422 || r.json(t)["code"] != "consent_required" {
		t.Fatalf("init before consent: %d %s", r.status, r.body)
	}
	postConsent(t, s, "trk_gate_1", "granted")
	if r := init(); r.status != http.StatusCreated {
		t.Fatalf("init after grant: %d %s", r.status, r.body)
	}
	postConsent(t, s, "trk_gate_1", "withdrawn")
	if r := init(); r.status != 422 || r.json(t)["code"] != "consent_required" {
		t.Fatalf("init after withdrawal: %d %s", r.status, r.body)
	}
}

// bankTenants writes a tenants file whose tenant "bank" requires consent.
func bankTenants(t *testing.T) string {
	t.Helper()
	tenants := filepath.Join(t.TempDir(), "tenants.yaml")
	yaml := fmt.Sprintf("tenants:\n  - id: bank\n    name: Bank\n    api_key_hashes: [%s]\n    cmp_api_key_hashes: [%s]\n    require_consent: true\n",
		hashKey("sk_bank"), hashKey("ck_bank"))
	if err := os.WriteFile(tenants, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return tenants
}

// postConsent records one decision of the eKYC purpose for trackingID through the consent API.
func postConsent(t *testing.T, s *testEnv, trackingID, purposeStatus string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"tracking_id": trackingID, "notice_version": "1", "channel": "web",
		"decisions": []map[string]string{{"purpose_id": "ekyc_identity_verification", "status": purposeStatus}},
	})
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.consentAddr+"/v1/consents", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-cmp-api-key", "ck_bank")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("consent %s: %d", purposeStatus, res.StatusCode)
	}
}

// TestConsentWithdrawalErasesBiometrics: withdrawing the eKYC consent of a tracking id
// deletes the face images of its sessions (the selfie and the chip's face) and records the
// erasure in each session's state; the document's other files stay.
func TestConsentWithdrawalErasesBiometrics(t *testing.T) {
	s := testService(t, allGroups, func(c *Config) { c.TenantsFile = bankTenants(t) })
	c := newClient(t, s, "sk_bank")
	postConsent(t, s, "trk_erase_1", "granted")
	r := c.postJSON("/v1/ekyc/sessions", c.key, map[string]any{"flow": "nfc_only", "tracking_id": "trk_erase_1"})
	if r.status != http.StatusCreated {
		t.Fatalf("init: %d %s", r.status, r.body)
	}
	init := r.json(t)
	id, token := str(init["session_id"]), str(init["sdk_token"])
	nonce, _ := base64.StdEncoding.DecodeString(str(init["nonce"]))
	if r := c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/nfc", token, "application/json",
		chiptest.RequestJSON(chiptest.NewChip(t, s.pki, chiptest.Persona(t, "match"), nonce, chiptest.WithFace(s.chipFace(t))))); r.status != http.StatusAccepted {
		t.Fatalf("nfc: %d %s", r.status, r.body)
	}
	if r := c.upload(id, "selfie", "", s.selfie(t), token); r.status != http.StatusOK {
		t.Fatalf("selfie: %d %s", r.status, r.body)
	}
	c.waitStatus(id, "verified", "rejected")
	before, _, _ := s.states.Get(context.Background(), id)
	var selfieURI, chipFaceURI, sodURI string
	for _, cp := range before.Captures {
		for _, b := range cp.Blobs {
			switch {
			case cp.Step == "selfie" && b.Name == "image":
				selfieURI = b.URI
			case cp.Step == "nfc" && b.Name == "sod":
				sodURI = b.URI
			}
		}
	}
	if before.Chip != nil && before.Chip.FaceImage != nil {
		chipFaceURI = before.Chip.FaceImage.URI
	}
	if selfieURI == "" || chipFaceURI == "" || sodURI == "" {
		t.Fatalf("blobs before erasure: selfie %q chip face %q sod %q", selfieURI, chipFaceURI, sodURI)
	}

	postConsent(t, s, "trk_erase_1", "withdrawn")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	after, err := s.states.Wait(ctx, id, func(st *schemas.SessionState) bool {
		return st != nil && st.BiometricErasure != nil && st.BiometricErasure.ErasedAt != nil
	})
	if err != nil {
		t.Fatalf("erasure never recorded in the session state: %v", err)
	}
	if len(after.BiometricErasure.BlobsDeleted) < 2 {
		t.Fatalf("blobs deleted = %v", after.BiometricErasure.BlobsDeleted)
	}
	store, err := blob.NewFS(filepath.Join(s.cfg.DataDir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{selfieURI, chipFaceURI} {
		if _, err := store.Get(context.Background(), uri); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("%s still readable after withdrawal (err %v)", uri, err)
		}
	}
	if _, err := store.Get(context.Background(), sodURI); err != nil {
		t.Errorf("the chip's SOD (not biometric) was deleted: %v", err)
	}
}
