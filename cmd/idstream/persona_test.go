package main

import (
	"encoding/base64"
	"net/http"
	"slices"
	"testing"

	"github.com/idstream/idstream/processors/chip/chiptest"
)

// personaOutcome is what internal/registry/README.md documents for a sandbox persona, as
// the whole pipeline reports it: the decision, the chip's identity check and the fraud
// group's record cross-checks ("status/reason", reason empty on a pass).
type personaOutcome struct {
	persona  string
	status   string
	identity string
	tax      string
	health   string
	social   string
}

var personaOutcomes = []personaOutcome{
	{"match", "verified", "pass/", "pass/", "pass/", "pass/"},
	{"name_mismatch", "rejected", "fail/name_mismatch", "fail/record_mismatch", "fail/record_mismatch", "fail/record_mismatch"},
	{"dob_mismatch", "rejected", "fail/dob_mismatch", "fail/record_mismatch", "fail/record_mismatch", "fail/record_mismatch"},
	{"revoked", "rejected", "fail/revoked", "pass/", "warn/record_inactive", "pass/"},
	{"deceased", "rejected", "fail/deceased", "warn/record_inactive", "warn/record_inactive", "warn/record_inactive"},
	{"not_found", "rejected", "fail/not_found", "warn/record_not_found", "warn/record_not_found", "warn/record_not_found"},
	{"sparse_records", "verified", "pass/", "warn/record_not_found", "pass/", "warn/record_inactive"},
	{"unavailable", "verified", "warn/registry_unavailable", "warn/registry_unavailable", "warn/registry_unavailable", "warn/registry_unavailable"},
	{"slow", "verified", "warn/registry_unavailable", "warn/registry_unavailable", "warn/registry_unavailable", "warn/registry_unavailable"},
}

// TestEndToEndPersonas runs an nfc_only session through the whole pipeline for every sandbox
// persona (its chip, signed by the test PKI, carries the persona's DG13) and checks that the
// decision and the registry checks are the ones the registry README documents: a mismatch,
// a revoked or deceased person or an unknown id number rejects; missing or lapsed tax and
// insurance records only warn; a registry that is down or too slow warns, never hangs.
//
// Every session shows the same face, so each persona expected to verify gets a service of
// its own: in one service the second verified session would be a duplicate face (the same
// face under another id number). The rejected ones share a service.
func TestEndToEndPersonas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nine sessions through the whole pipeline")
	}
	shared := testService(t, allGroups)
	for _, want := range personaOutcomes {
		t.Run(want.persona, func(t *testing.T) {
			t.Parallel()
			s := shared
			if want.status == "verified" {
				s = testService(t, allGroups)
			}
			got := runPersona(t, s, want.persona)
			if got["status"] != want.status {
				t.Errorf("status %v, want %s (reasons %v)", got["status"], want.status, reasonCodes(got))
			}
			for name, w := range map[string]string{
				"chip.registry_identity":          want.identity,
				"fraud.registry_tax":              want.tax,
				"fraud.registry_health_insurance": want.health,
				"fraud.registry_social_insurance": want.social,
			} {
				st, reason := checkStatus(got, name)
				if reason == "<nil>" {
					reason = ""
				}
				if st+"/"+reason != w {
					t.Errorf("%s = %s/%s, want %s", name, st, reason, w)
				}
			}
			if want.status == "rejected" {
				identityReason := want.identity[len("fail/"):]
				if !slices.Contains(reasonCodes(got), identityReason) {
					t.Errorf("decision reasons %v do not name %s", reasonCodes(got), identityReason)
				}
			}
		})
	}
}

// runPersona opens an nfc_only session, posts the persona's chip read (face PortraitA) and a
// selfie of the same person, and returns the decided session's Data Get body.
func runPersona(t *testing.T, s *testEnv, persona string) map[string]any {
	t.Helper()
	c := newClient(t, s)
	init := c.openSession("nfc_only")
	id, token := str(init["session_id"]), str(init["sdk_token"])
	nonce, err := base64.StdEncoding.DecodeString(str(init["nonce"]))
	if err != nil {
		t.Fatal(err)
	}
	chip := chiptest.NewChip(t, s.pki, chiptest.Persona(t, persona), nonce, chiptest.WithFace(s.chipFace(t)))
	if r := c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/nfc", token, "application/json", chiptest.RequestJSON(chip)); r.status != http.StatusAccepted {
		t.Fatalf("nfc: %d %s", r.status, r.body)
	}
	if r := c.upload(id, "selfie", "", s.selfie(t), token); r.status != http.StatusOK && r.status != http.StatusAccepted { // 202: the gate answered after the budget
		t.Fatalf("selfie: %d %s", r.status, r.body)
	}
	return c.waitStatus(id, "verified", "rejected")
}
