package main

import (
	"encoding/base64"
	"net/http"
	"slices"
	"testing"

	"github.com/idstream/idstream/processors/chip/chiptest"
)

// reasonCodes lists the decision's reason codes from a Data Get body.
func reasonCodes(got map[string]any) []string {
	var codes []string
	dec, _ := got["decision"].(map[string]any)
	reasons, _ := dec["reasons"].([]any)
	for _, r := range reasons {
		codes = append(codes, str(r.(map[string]any)["code"]))
	}
	return codes
}

// checkStatus returns the status and reason code of the named check in a Data Get body.
func checkStatus(got map[string]any, name string) (status, reason string) {
	checks, _ := got["checks"].([]any)
	for _, c := range checks {
		m := c.(map[string]any)
		if m["name"] == name {
			return str(m["status"]), str(m["reason_code"])
		}
	}
	return "", ""
}

// TestEndToEndChip posts chip reads through the edge: a valid read verifies with the chip's
// fields extracted; one changed DG13 byte is rejected because its hash no longer matches the
// SOD; a read that answered another session's nonce fails active authentication.
func TestEndToEndChip(t *testing.T) {
	s := testService(t, allGroups)
	c := newClient(t, s)
	nfc := func(id, token string, body []byte) {
		t.Helper()
		if r := c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/nfc", token, "application/json", body); r.status != http.StatusAccepted {
			t.Fatalf("nfc: %d %s", r.status, r.body)
		}
	}
	selfie := func(id, token string) {
		t.Helper()
		if r := c.upload(id, "selfie", "", s.selfie(t), token); r.status != http.StatusOK {
			t.Fatalf("selfie: %d %s", r.status, r.body)
		}
	}
	nonceOf := func(init map[string]any) []byte {
		n, err := base64.StdEncoding.DecodeString(str(init["nonce"]))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	persona := chiptest.Persona(t, "match")

	t.Run("valid chip", func(t *testing.T) {
		init := c.openSession("nfc_only")
		id, token := str(init["session_id"]), str(init["sdk_token"])
		nfc(id, token, chiptest.RequestJSON(chiptest.NewChip(t, s.pki, persona, nonceOf(init), chiptest.WithFace(s.chipFace(t)))))
		selfie(id, token)
		got := c.waitStatus(id, "verified", "rejected")
		if got["status"] != "verified" {
			t.Fatalf("status %v, reasons %v", got["status"], reasonCodes(got))
		}
		for _, name := range []string{"chip.passive_authentication", "chip.chain", "chip.dg13_hash", "chip.active_authentication", "chip.registry_identity", "liveness.passive", "face.selfie_chip"} {
			if st, _ := checkStatus(got, name); st != "pass" {
				t.Errorf("%s = %q, want pass", name, st)
			}
		}
		ex, _ := got["extracted"].(map[string]any)
		if ex == nil || ex["id_number"] != persona.IDNumber || ex["full_name"] != persona.FullName || ex["date_of_birth"] != persona.DateOfBirth {
			t.Fatalf("extracted = %v, want the persona's id, name and date of birth", ex)
		}
	})

	t.Run("one DG13 byte changed", func(t *testing.T) {
		init := c.openSession("nfc_only")
		id, token := str(init["session_id"]), str(init["sdk_token"])
		files := chiptest.NewChip(t, s.pki, persona, nonceOf(init), chiptest.WithFace(s.chipFace(t)))
		dg13 := slices.Clone(files["dg13"])
		dg13[len(dg13)-1] ^= 0x01
		files["dg13"] = dg13
		nfc(id, token, chiptest.RequestJSON(files))
		selfie(id, token)
		got := c.waitStatus(id, "verified", "rejected")
		if got["status"] != "rejected" {
			t.Fatalf("status %v, want rejected", got["status"])
		}
		if st, reason := checkStatus(got, "chip.dg13_hash"); st != "fail" || reason != "dg_hash_mismatch" {
			t.Fatalf("chip.dg13_hash = %s/%s, want fail/dg_hash_mismatch", st, reason)
		}
		if !slices.Contains(reasonCodes(got), "dg_hash_mismatch") {
			t.Fatalf("decision reasons %v do not say dg_hash_mismatch", reasonCodes(got))
		}
	})

	t.Run("chip read of another session", func(t *testing.T) {
		first := c.openSession("nfc_only")
		second := c.openSession("nfc_only")
		id, token := str(second["session_id"]), str(second["sdk_token"])
		nfc(id, token, chiptest.RequestJSON(chiptest.NewChip(t, s.pki, persona, nonceOf(first), chiptest.WithFace(s.chipFace(t)))))
		selfie(id, token)
		got := c.waitStatus(id, "verified", "rejected")
		if got["status"] != "rejected" {
			t.Fatalf("status %v, want rejected", got["status"])
		}
		if st, reason := checkStatus(got, "chip.active_authentication"); st != "fail" || reason != "aa_signature_invalid" {
			t.Fatalf("chip.active_authentication = %s/%s, want fail/aa_signature_invalid", st, reason)
		}
	})
}
