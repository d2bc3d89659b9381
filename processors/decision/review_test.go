package decision

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/flow"
	"github.com/idstream/idstream/schemas"
)

func f64(v float64) *float64 { return &v }

// scored sets the score (and threshold 0.8) of the named check of st.
func scored(st *schemas.SessionState, name, status string, score float64) *schemas.SessionState {
	for i := range st.Checks {
		if st.Checks[i].Name == name {
			st.Checks[i].Status, st.Checks[i].Score, st.Checks[i].Threshold = status, f64(score), f64(0.8)
		}
	}
	return st
}

// reviewPolicy is the default policy with a liveness grey band on chip_id_card and, for
// tenant ten_1, an unavailable registry sent to review.
func reviewPolicy() Policy {
	p := DefaultPolicy(flow.Default())
	fp := p.Flows["chip_id_card"]
	fp.Review = []ReviewRule{{Check: CheckLivenessPassive, Statuses: []string{"pass", "fail"}, ScoreFrom: f64(0.6), ScoreTo: f64(0.85), Reason: "liveness_grey_band"}}
	p.Flows["chip_id_card"] = fp
	p.Tenants = map[string]TenantPolicy{"ten_1": {Review: []ReviewRule{{Check: CheckChipRegistryIdentity, Statuses: []string{"warn"}, Reason: "registry_unavailable"}}}}
	return p
}

func TestReviewRules(t *testing.T) {
	p := reviewPolicy()
	for _, tc := range []struct {
		name    string
		st      *schemas.SessionState
		outcome string
		reason  string
	}{
		{"liveness in the grey band, failing", scored(withIdentity(processing()), CheckLivenessPassive, "fail", 0.7), OutcomeReview, "liveness_grey_band"},
		{"liveness in the grey band, passing", scored(withIdentity(processing()), CheckLivenessPassive, "pass", 0.82), OutcomeReview, "liveness_grey_band"},
		{"liveness clear", scored(withIdentity(processing()), CheckLivenessPassive, "pass", 0.9), schemas.StatusVerified, ""},
		{"liveness clearly failed", scored(withIdentity(processing()), CheckLivenessPassive, "fail", 0.2), schemas.StatusRejected, ""},
		{"grey band but another hard failure", scored(withIdentity(processing(check("fraud.blocklist_id", "fail"))), CheckLivenessPassive, "fail", 0.7), schemas.StatusRejected, ""},
		{"the tenant's rule", withIdentity(processing(check(CheckChipRegistryIdentity, "warn"))), OutcomeReview, "registry_unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := Decide(p, tc.st)
			if !ok || d.Outcome != tc.outcome {
				t.Fatalf("outcome %v %v, want %s: %+v", ok, d.Outcome, tc.outcome, d.Reasons)
			}
			if tc.reason != "" && (len(d.Reasons) != 1 || d.Reasons[0].Code != tc.reason) {
				t.Errorf("reasons %+v, want %s", d.Reasons, tc.reason)
			}
		})
	}
	other := withIdentity(processing(check(CheckChipRegistryIdentity, "warn")))
	other.Envelope.TenantID = "ten_2"
	if d, _ := Decide(p, other); d.Outcome != schemas.StatusVerified {
		t.Errorf("another tenant's registry warn: %s, want verified (the rule is ten_1's)", d.Outcome)
	}
}

func TestReviewerDecides(t *testing.T) {
	p := reviewPolicy()
	st := scored(withIdentity(processing()), CheckLivenessPassive, "fail", 0.7)
	st.Status = schemas.StatusReview
	st.Review = &schemas.ReviewState{PolicyVersion: "sent-by-this", OpenedAt: t0}
	if _, ok := Decide(p, st); ok {
		t.Fatal("a case no reviewer decided was decided")
	}
	st.Review.Decided = &schemas.ReviewDecision{ReviewerID: "ana", Outcome: schemas.StatusRejected, ReasonCode: "mask_seen", DecidedAt: t0.Add(time.Hour)}
	d, ok := Decide(p, st)
	if !ok || d.Outcome != schemas.StatusRejected || d.DecidedBy != schemas.DecidedByReviewer || d.ReviewerID == nil || *d.ReviewerID != "ana" ||
		d.PolicyVersion != "sent-by-this" || len(d.Reasons) != 1 || d.Reasons[0].Code != "mask_seen" {
		t.Fatalf("decision %v %+v", ok, d)
	}
	if findCheck(d.Checks, CheckLivenessPassive) == nil || d.Extracted == nil {
		t.Error("the reviewer's decision lost the checks or the extracted data")
	}
	st.Review.Decided.Outcome = schemas.StatusVerified
	if d, _ := Decide(p, st); d.Outcome != schemas.StatusVerified || len(d.Reasons) != 0 {
		t.Errorf("verified by the reviewer: %+v", d)
	}
	if d, _ := Decide(p, withIdentity(processing())); d.DecidedBy != schemas.DecidedByPolicy {
		t.Errorf("a policy decision says decided_by %q", d.DecidedBy)
	}
}

func TestGroupOpensReview(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c, reviewPolicy())
	table := memTable{}
	st := scored(withIdentity(processing()), CheckLivenessPassive, "fail", 0.7)
	outs, err := g.Handler(context.Background(), snapshotRecord(t, c, st, 1), table)
	if err != nil || len(outs) != 1 || outs[0].Topic != schemas.TopicReviews {
		t.Fatalf("%v %+v", err, outs)
	}
	table.apply(outs)
	var ev schemas.ReviewEvent
	if err := c.Decode(schemas.TopicReviews, outs[0].Value, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Opened == nil || ev.Opened.Reasons[0].Code != "liveness_grey_band" || ev.Envelope.EventID != "evt_review_"+schemas.SessionDigest(sid) {
		t.Fatalf("review event %+v", ev)
	}
	// Not a decision: the table holds none, so the reviewer's decision is still to come.
	if _, decided := table.Get([]byte(sid)); decided {
		t.Fatal("opening a review recorded a decision")
	}
	st.Status = schemas.StatusReview
	st.Review = &schemas.ReviewState{PolicyVersion: DefaultPolicyVersion, Decided: &schemas.ReviewDecision{ReviewerID: "ana", Outcome: schemas.StatusVerified, ReasonCode: "live_person"}}
	outs, err = g.Handler(context.Background(), snapshotRecord(t, c, st, 2), table)
	if err != nil || len(outs) != 1 || outs[0].Topic != schemas.TopicDecisions {
		t.Fatalf("reviewed: %v %+v", err, outs)
	}
}

// After a reviewer's retake the session returns to review when the policy would verify it,
// under the opening of the retake's round; a hard failure still rejects.
func TestGroupReopensAfterRetake(t *testing.T) {
	c := newCodec(t)
	g := NewGroup(c, reviewPolicy())
	retaken := func(extra ...schemas.Check) *schemas.SessionState {
		st := scored(withIdentity(processing(extra...)), CheckLivenessPassive, "pass", 0.95)
		st.Review = &schemas.ReviewState{Retakes: 2, Retake: &schemas.ReviewRetake{Step: "selfie", ReviewerID: "ana", ReasonCode: "face_hidden"}}
		return st
	}
	if d, _ := Decide(reviewPolicy(), scored(withIdentity(processing()), CheckLivenessPassive, "pass", 0.95)); d.Outcome != schemas.StatusVerified {
		t.Fatalf("without a retake the session is verified, got %s", d.Outcome)
	}
	outs, err := g.Handler(context.Background(), snapshotRecord(t, c, retaken(), 1), memTable{})
	if err != nil || len(outs) != 1 || outs[0].Topic != schemas.TopicReviews {
		t.Fatalf("%v %+v", err, outs)
	}
	var ev schemas.ReviewEvent
	if err := c.Decode(schemas.TopicReviews, outs[0].Value, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Opened == nil || ev.Envelope.EventID != schemas.ReviewOpenedEventID(sid, 2) || ev.Opened.Reasons[0].Code != "retake_received" {
		t.Fatalf("reopening %+v", ev)
	}
	if d, _ := Decide(reviewPolicy(), retaken(check("fraud.blocklist_id", "fail"))); d.Outcome != schemas.StatusRejected {
		t.Errorf("a hard failure after the retake: %s", d.Outcome)
	}
}

func TestParseReviewRules(t *testing.T) {
	p, err := ParsePolicy([]byte(`
version: "r1"
flows:
  chip_id_card:
    await: ["quality.*"]
    review:
      - check: liveness.passive
        statuses: [pass, fail]
        score: [0.6, null]
        reason: liveness_grey_band
tenants:
  acme:
    review:
      - check: chip.registry_identity
        statuses: [warn]
`))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Flows["chip_id_card"].Review
	if len(r) != 1 || *r[0].ScoreFrom != 0.6 || r[0].ScoreTo != nil || r[0].Reason != "liveness_grey_band" {
		t.Errorf("flow rules %+v", r)
	}
	if tr := p.Tenants["acme"].Review; len(tr) != 1 || tr[0].reason() != DefaultReviewReason {
		t.Errorf("tenant rules %+v", tr)
	}
	for _, bad := range []string{
		"version: x\nflows:\n  a:\n    review:\n      - check: \"\"\n",
		"version: x\nflows:\n  a:\n    review:\n      - check: x\n        statuses: [maybe]\n",
		"version: x\nflows:\n  a:\n    review:\n      - check: x\n        score: [0.8, 0.6]\n",
		"version: x\nflows:\n  a:\n    review:\n      - check: x\n        score: [0.8]\n",
		"version: x\ntenants:\n  t:\n    review:\n      - check: \"[\"\n",
	} {
		if _, err := ParsePolicy([]byte(bad)); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%q: %v, want ErrInvalidPolicy", bad, err)
		}
	}
}

func TestPolicyOverTheDefault(t *testing.T) {
	def := DefaultPolicy(flow.Default())
	p, err := ParsePolicyOver([]byte(`
version: "2026-12-01.1"
base: default
flows:
  chip_id_card:
    soft: ["fraud.tamper.*"]
    review:
      - check: liveness.passive
        score: [0.6, 0.85]
        statuses: [fail]
`), &def)
	if err != nil {
		t.Fatal(err)
	}
	cc, dc := p.Flows["chip_id_card"], def.Flows["chip_id_card"]
	if p.Version != "2026-12-01.1" || !slices.Equal(cc.Await, dc.Await) || len(cc.Review) != 1 || !slices.Equal(cc.Soft, []string{"fraud.tamper.*"}) {
		t.Errorf("chip_id_card over the default: %+v", cc)
	}
	if !slices.Equal(p.Flows["passport"].Await, def.Flows["passport"].Await) {
		t.Error("a flow the file does not name lost the default's awaits")
	}
	if _, err := ParsePolicy([]byte("version: x\nbase: default\n")); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("base: default without a default: %v", err)
	}
	if _, err := ParsePolicyOver([]byte("version: x\nbase: other\n"), &def); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("base: other: %v", err)
	}
}

// TestLateHardFailureRejectsAReviewedCase: a hard check that failed while the case was open
// (a blocklist hit) rejects even when the reviewer verified; a reviewer's rejection stands.
func TestLateHardFailureRejectsAReviewedCase(t *testing.T) {
	p := reviewPolicy()
	st := scored(withIdentity(processing(check("fraud.blocklist_id", "fail"))), CheckLivenessPassive, "fail", 0.7)
	st.Status = schemas.StatusReview
	st.Review = &schemas.ReviewState{PolicyVersion: "p1", Decided: &schemas.ReviewDecision{ReviewerID: "ana", Outcome: schemas.StatusVerified, ReasonCode: "ok", DecidedAt: t0.Add(time.Hour)}}
	d, ok := Decide(p, st)
	if !ok || d.Outcome != schemas.StatusRejected || d.DecidedBy != schemas.DecidedByPolicy || len(d.Reasons) != 1 || d.Reasons[0].Code != "fraud.blocklist_id" {
		t.Fatalf("%v %+v", ok, d)
	}
	st.Review.Decided.Outcome = schemas.StatusRejected
	if d, _ := Decide(p, st); d.DecidedBy != schemas.DecidedByReviewer || !d.DecidedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("the reviewer's rejection: %+v", d)
	}
}
