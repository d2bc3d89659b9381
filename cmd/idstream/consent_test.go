package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestConsentGate: for a tenant that requires consent, Session Init needs a tracking id whose
// eKYC purpose is granted through the consent API; a withdrawal closes the gate again.
func TestConsentGate(t *testing.T) {
	dir := t.TempDir()
	tenants := filepath.Join(dir, "tenants.yaml")
	yaml := fmt.Sprintf("tenants:\n  - id: bank\n    name: Bank\n    api_key_hashes: [%s]\n    cmp_api_key_hashes: [%s]\n    require_consent: true\n",
		hashKey("sk_bank"), hashKey("ck_bank"))
	if err := os.WriteFile(tenants, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testService(t, allGroups, func(c *Config) { c.TenantsFile = tenants })
	c := newClient(t, s, "sk_bank")
	cmp := func(purposeStatus string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{
			"tracking_id": "trk_gate_1", "notice_version": "1", "channel": "web",
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
	init := func() response {
		return c.postJSON("/v1/ekyc/sessions", c.key, map[string]any{"flow": "id_card", "tracking_id": "trk_gate_1"})
	}
	if r := init(); r.status != 422 || r.json(t)["code"] != "consent_required" {
		t.Fatalf("init before consent: %d %s", r.status, r.body)
	}
	cmp("granted")
	if r := init(); r.status != http.StatusCreated {
		t.Fatalf("init after grant: %d %s", r.status, r.body)
	}
	cmp("withdrawn")
	if r := init(); r.status != 422 || r.json(t)["code"] != "consent_required" {
		t.Fatalf("init after withdrawal: %d %s", r.status, r.body)
	}
}
