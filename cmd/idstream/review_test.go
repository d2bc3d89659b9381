package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors/decision"
)

// TestReviewDecidesSession: a policy over the default that sends every id_card session
// whose liveness passed to a person; a session goes through every group into review, stays
// processing for the integrator, is listed in the sandbox reviewer's queue, claimed and
// verified by the reviewer, and then carries the one decision, decided_by reviewer.
func TestReviewDecidesSession(t *testing.T) {
	s, c, reviewer := reviewService(t)
	id := runFlow(t, s, c, "id_card", 1)
	listed := reviewer.awaitCase(t, id)
	if reasons := listed["reasons"].([]any); len(reasons) != 1 || reasons[0].(map[string]any)["code"] != "second_look" || listed["policy_version"] != "test-review.1" {
		t.Errorf("case = %v", listed)
	}
	if got := c.do(http.MethodGet, "/v1/ekyc/sessions/"+id, c.key, "", nil).json(t); got["status"] != "processing" || got["decision"] != nil {
		t.Fatalf("a session in review shows the integrator %v, decision %v", got["status"], got["decision"])
	}

	if r := reviewer.do(http.MethodPost, "/v1/review/cases/"+id+"/claim", reviewer.key, "", nil); r.status != http.StatusOK || r.json(t)["claimed_by"] != tenant.SandboxReviewerID {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	r := reviewer.postJSON("/v1/review/cases/"+id+"/decision", reviewer.key, map[string]any{"outcome": "verified", "reason_code": "live_person", "note": "checked the selfie"})
	if r.status != http.StatusOK && r.status != http.StatusAccepted {
		t.Fatalf("decision: %d %s", r.status, r.body)
	}
	got := c.waitStatus(id, "verified", "rejected")
	dec, _ := got["decision"].(map[string]any)
	if got["status"] != "verified" || dec == nil || dec["decided_by"] != "reviewer" || dec["policy_version"] != "test-review.1" {
		t.Fatalf("after the review: %v %v", got["status"], got["decision"])
	}
	if r := reviewer.do(http.MethodGet, "/v1/review/cases/"+id, reviewer.key, "", nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"kind":"decided"`) {
		t.Errorf("case history: %d %s", r.status, r.body)
	}
}

// TestReviewRetake: a reviewer sends the selfie of a session in review back to the person.
// The integrator is told by a signed retake_requested webhook, gets a fresh capture link,
// the person takes the selfie again, the case comes back to the queue with its history, and
// the reviewer's decision ends the session with the completed webhook.
func TestReviewRetake(t *testing.T) {
	hooks := make(chan map[string]any, 8)
	ids := make(chan string, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err == nil {
			hooks <- body
			ids <- r.Header.Get("webhook-id")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	s, c, reviewer := reviewService(t, func(c *Config) { c.Sinks = []string{"webhook"} })
	r := c.postJSON("/v1/ekyc/sessions", c.key, map[string]any{"flow": "id_card", "webhook_url": receiver.URL + "/hook"})
	if r.status != http.StatusCreated {
		t.Fatalf("init: %d %s", r.status, r.body)
	}
	id, token := str(r.json(t)["session_id"]), str(r.json(t)["sdk_token"])
	for _, side := range []string{"front", "back"} {
		if r := c.upload(id, "document", side, s.documentFor(t, "id_card", side), token); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", side, r.status, r.body)
		}
	}
	if r := c.upload(id, "selfie", "", s.selfie(t), token); r.status != http.StatusOK {
		t.Fatalf("selfie: %d %s", r.status, r.body)
	}
	reviewer.awaitCase(t, id)
	if r := reviewer.do(http.MethodPost, "/v1/review/cases/"+id+"/claim", reviewer.key, "", nil); r.status != http.StatusOK {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	r = reviewer.postJSON("/v1/review/cases/"+id+"/retake", reviewer.key, map[string]any{"step": "selfie", "reason_code": "face_covered", "note": "a cap"})
	if r.status != http.StatusOK || r.json(t)["status"] != "capturing" {
		t.Fatalf("retake: %d %s", r.status, r.body)
	}
	next := func(want string) (map[string]any, string) {
		t.Helper()
		select {
		case body := <-hooks:
			id := <-ids
			if body["type"] != want {
				t.Fatalf("webhook %s %v, want %s", id, body["type"], want)
			}
			return body["data"].(map[string]any), id
		case <-time.After(60 * time.Second):
			t.Fatalf("no %s webhook", want)
		}
		return nil, ""
	}
	data, hookID := next("ekyc.session.retake_requested")
	if data["status"] != "capturing" || data["steps"].(map[string]any)["selfie"].(map[string]any)["status"] != "retake" ||
		data["retake"].(map[string]any)["reason_code"] != "face_covered" || !strings.HasPrefix(hookID, "msg_retake_") {
		t.Fatalf("retake webhook %s: %v", hookID, data)
	}

	// The person comes back with a fresh link and takes the selfie again.
	r = c.do(http.MethodPost, "/v1/ekyc/sessions/"+id+"/sdk-token", c.key, "", nil)
	if r.status != http.StatusCreated {
		t.Fatalf("sdk-token: %d %s", r.status, r.body)
	}
	if r := c.upload(id, "selfie", "", s.selfie(t), str(r.json(t)["sdk_token"])); r.status != http.StatusOK || r.json(t)["status"] != "accepted" {
		t.Fatalf("the selfie again: %d %s", r.status, r.body)
	}
	reviewer.awaitCase(t, id)
	r = reviewer.do(http.MethodGet, "/v1/review/cases/"+id, reviewer.key, "", nil)
	var kinds []string
	for _, a := range r.json(t)["history"].([]any) {
		kinds = append(kinds, str(a.(map[string]any)["kind"]))
	}
	if want := []string{"opened", "claimed", "retake_requested", "reopened"}; !slices.Equal(kinds, want) {
		t.Errorf("history %v, want %v", kinds, want)
	}
	if r := reviewer.do(http.MethodPost, "/v1/review/cases/"+id+"/claim", reviewer.key, "", nil); r.status != http.StatusOK {
		t.Fatalf("claim again: %d %s", r.status, r.body)
	}
	if r := reviewer.postJSON("/v1/review/cases/"+id+"/decision", reviewer.key, map[string]any{"outcome": "verified", "reason_code": "live_person"}); r.status != http.StatusOK && r.status != http.StatusAccepted {
		t.Fatalf("decision: %d %s", r.status, r.body)
	}
	data, _ = next("ekyc.session.completed")
	if data["status"] != "verified" || data["decision"].(map[string]any)["decided_by"] != "reviewer" || data["retake"] != nil {
		t.Fatalf("completed webhook: %v", data)
	}
}

// reviewService runs every group under a policy over the default that sends every id_card
// session whose liveness passed to review (reason second_look, version test-review.1), and
// returns it with a client of the sandbox tenant and one of its reviewer.
func reviewService(t *testing.T, opts ...func(*Config)) (*testEnv, *client, *client) {
	t.Helper()
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(`version: "test-review.1"
base: default
flows:
  id_card:
    review:
      - check: liveness.passive
        statuses: [pass]
        reason: second_look
`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testService(t, allGroups, append([]func(*Config){func(c *Config) { c.PolicyFile = policy }}, opts...)...)
	key, err := os.ReadFile(filepath.Join(s.cfg.DataDir, tenant.SandboxReviewerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return s, newClient(t, s), newClient(t, s, strings.TrimSpace(string(key)))
}

// awaitCase polls the review queue until it lists the session, and returns its entry.
func (c *client) awaitCase(t *testing.T, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		r := c.do(http.MethodGet, "/v1/review/cases", c.key, "", nil)
		if r.status != http.StatusOK {
			t.Fatalf("queue: %d %s", r.status, r.body)
		}
		for _, cs := range r.json(t)["cases"].([]any) {
			if m := cs.(map[string]any); m["session_id"] == id {
				return m
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("session %s never reached the review queue", id)
	return nil
}

func TestUnreviewedTenantsAreFound(t *testing.T) {
	p := decision.DefaultPolicy(flow.Default())
	reg := tenant.NewRegistry(
		&tenant.Tenant{ID: "with", Reviewers: []tenant.Reviewer{{ID: "ana"}}},
		&tenant.Tenant{ID: "without"},
		&tenant.Tenant{ID: "passports", AllowedFlows: []string{"passport"}},
		&tenant.Tenant{ID: "own-rule", AllowedFlows: []string{"passport"}},
	)
	if got := unreviewedTenants(p, reg); len(got) != 0 {
		t.Fatalf("no review rules: %v", got)
	}
	fp := p.Flows["id_card"]
	fp.Review = []decision.ReviewRule{{Check: "liveness.passive"}}
	p.Flows["id_card"] = fp
	p.Tenants = map[string]decision.TenantPolicy{"own-rule": {Review: []decision.ReviewRule{{Check: "chip.*"}}}}
	if got := unreviewedTenants(p, reg); !slices.Equal(got, []string{"without", "own-rule"}) {
		t.Fatalf("unreviewed = %v, want [without own-rule]", got)
	}
}
