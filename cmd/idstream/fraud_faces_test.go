package main

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/processors/decision"
	"github.com/idstream/idstream/processors/fraud"
)

// adminClient is a client of s with the sandbox tenant's admin key.
func adminClient(t testing.TB, s *testEnv) *client {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.cfg.DataDir, "sandbox-admin-key"))
	if err != nil {
		t.Fatalf("sandbox admin key: %v", err)
	}
	return newClient(t, s, strings.TrimSpace(string(b)))
}

// expectFaceOutcome checks a decided session's status (when given), that its decision names
// reason (when given), and the status/reason of the named fraud checks.
func expectFaceOutcome(t *testing.T, got map[string]any, status, reason string, checks map[string]string) {
	t.Helper()
	t.Logf("session %v: %v, reasons %v", got["session_id"], got["status"], reasonCodes(got))
	if status != "" && got["status"] != status {
		t.Errorf("status %v, want %s (reasons %v)", got["status"], status, reasonCodes(got))
	}
	if reason != "" && !slices.Contains(reasonCodes(got), reason) {
		t.Errorf("decision reasons %v do not name %s", reasonCodes(got), reason)
	}
	for name, want := range checks {
		st, r := checkStatus(got, name)
		if r == "<nil>" {
			r = ""
		}
		if st+"/"+r != want {
			t.Errorf("%s = %s/%s, want %s", name, st, r, want)
		}
	}
}

// TestFraudFacesEndToEnd runs nfc_only sessions through the whole pipeline, each with a
// selfie of the same person: verified under identity A (the sandbox's "match" persona);
// the same face under identity B ("sparse_records", which verifies on its own) is rejected
// duplicate_face; after an admin blocklists A's session (its face), a new session of A's
// identity is rejected blocklisted; once the entry is deleted the face no longer matches and
// A's identity verifies again. (Each selfie is the same person in another framing, so no
// image check takes one for a replay of another.)
func TestFraudFacesEndToEnd(t *testing.T) {
	s := testService(t, allGroups)
	pass := "pass/"

	a := runPersona(t, s, "match")
	expectFaceOutcome(t, a, "verified", "", map[string]string{
		fraud.CheckDuplicateFace: pass, fraud.CheckBlocklistFace: pass, fraud.CheckPresentationAttack: pass,
	})
	idA := str(a["session_id"])

	b := runPersona(t, s, "sparse_records")
	expectFaceOutcome(t, b, "rejected", fraud.ReasonDuplicateFace, map[string]string{
		fraud.CheckDuplicateFace: "fail/" + fraud.ReasonDuplicateFace, fraud.CheckBlocklistFace: pass,
	})

	admin := adminClient(t, s)
	r := admin.postJSON("/v1/admin/blocklist", admin.key, map[string]any{"session_id": idA, "reason": "fraud_ring"})
	if r.status != http.StatusCreated || r.json(t)["kind"] != "face" {
		t.Fatalf("blocklist A's face: %d %s", r.status, r.body)
	}
	entry := str(r.json(t)["id"])

	c := runPersona(t, s, "match") // A's identity again: not a duplicate, but a blocked face
	expectFaceOutcome(t, c, "rejected", fraud.ReasonBlocklisted, map[string]string{
		fraud.CheckDuplicateFace: pass, fraud.CheckBlocklistFace: "fail/" + fraud.ReasonBlocklisted,
	})

	if r := admin.do(http.MethodDelete, "/v1/admin/blocklist/"+entry, admin.key, "", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete the entry: %d %s", r.status, r.body)
	}
	d := runPersona(t, s, "match")
	expectFaceOutcome(t, d, "verified", "", map[string]string{fraud.CheckBlocklistFace: pass, fraud.CheckDuplicateFace: pass})
}

// TestFraudBlocklistIDEndToEnd: an admin blocklists an ID number (stored hashed); a session
// of that identity is rejected blocklisted; once the entry is deleted it verifies.
func TestFraudBlocklistIDEndToEnd(t *testing.T) {
	s := testService(t, allGroups)
	admin := adminClient(t, s)
	r := admin.postJSON("/v1/admin/blocklist", admin.key, map[string]any{"id_number": "001090012345", "reason": "fraud"})
	if r.status != http.StatusCreated || r.json(t)["kind"] != "id_number" {
		t.Fatalf("blocklist the ID number: %d %s", r.status, r.body)
	}
	entry := str(r.json(t)["id"])
	got := runPersona(t, s, "match") // the "match" persona carries 001090012345
	expectFaceOutcome(t, got, "rejected", fraud.ReasonBlocklisted, map[string]string{
		fraud.CheckBlocklistID: "fail/" + fraud.ReasonBlocklisted, fraud.CheckBlocklistFace: "pass/",
	})
	if r := admin.do(http.MethodDelete, "/v1/admin/blocklist/"+entry, admin.key, "", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete the entry: %d %s", r.status, r.body)
	}
	again := runPersona(t, s, "match")
	expectFaceOutcome(t, again, "verified", "", map[string]string{fraud.CheckBlocklistID: "pass/"})
}

// TestFraudFacesAwaitedByPolicy: the default policy awaits every fraud session check by name
// in every flow (the face checks arrive skipped in flows without a selfie), so that no
// decision goes out before them.
func TestFraudFacesAwaitedByPolicy(t *testing.T) {
	p := decision.DefaultPolicy(flow.Default())
	for name, fp := range p.Flows {
		for _, check := range []string{fraud.CheckDuplicateFace, fraud.CheckBlocklistFace, fraud.CheckPresentationAttack, fraud.CheckBlocklistID} {
			if !slices.Contains(fraud.SessionCheckNames(), check) {
				t.Fatalf("%s is not a fraud session check", check)
			}
			if !slices.Contains(fp.Await, check) {
				t.Errorf("flow %s does not await %s", name, check)
			}
		}
	}
}
