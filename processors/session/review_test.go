package session

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/schemas"
)

func reviewEvent(at time.Time) *schemas.ReviewEvent {
	return &schemas.ReviewEvent{Envelope: schemas.Envelope{EventID: "evt_r" + at.Format("150405.000"), SessionID: "ses_1", TenantID: "acme", OccurredAt: at, Producer: "edge"}}
}

func TestReviewFold(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	st := &schemas.SessionState{Envelope: schemas.Envelope{SessionID: "ses_1", TenantID: "acme"}, Status: schemas.StatusCapturing}
	fold := func(st *schemas.SessionState, at time.Time, set func(*schemas.ReviewEvent)) (*schemas.SessionState, bool) {
		ev := reviewEvent(at)
		set(ev)
		return Fold(st, ev)
	}
	open := func(e *schemas.ReviewEvent) {
		e.Opened = &schemas.ReviewOpened{PolicyVersion: "p1", Reasons: []schemas.Reason{{Code: "liveness_grey_band", Message: "liveness.passive"}}}
	}
	claim := func(who string, until time.Time) func(*schemas.ReviewEvent) {
		return func(e *schemas.ReviewEvent) { e.Claimed = &schemas.ReviewClaimed{ReviewerID: who, Until: until} }
	}
	decide := func(who, outcome string) func(*schemas.ReviewEvent) {
		return func(e *schemas.ReviewEvent) {
			e.Decided = &schemas.ReviewDecided{ReviewerID: who, Outcome: outcome, ReasonCode: "live_person"}
		}
	}
	lastAction := func(st *schemas.SessionState) schemas.ReviewAction {
		return st.Review.Actions[len(st.Review.Actions)-1]
	}

	if _, changed := fold(st, t0, open); changed {
		t.Fatal("a capturing session was sent to review")
	}
	st.Status = schemas.StatusProcessing
	st, changed := fold(st, t0, open)
	if !changed || st.Status != schemas.StatusReview || st.Review == nil || st.Review.PolicyVersion != "p1" || !st.Review.OpenedAt.Equal(t0) {
		t.Fatalf("opened: %v %+v", changed, st.Review)
	}
	if _, changed := fold(st, t0.Add(time.Second), open); changed {
		t.Error("a second opening changed the case")
	}
	if _, changed := fold(st, t0.Add(time.Second), decide("ana", schemas.StatusVerified)); !changed {
		t.Fatal("an unclaimed decision was not even logged")
	} else if s2, _ := fold(st, t0.Add(time.Second), decide("ana", schemas.StatusVerified)); s2.Review.Decided != nil || lastAction(s2).Kind != schemas.ReviewActionRefused {
		t.Errorf("a decision without the claim was taken: %+v", s2.Review)
	}

	st, _ = fold(st, t0.Add(time.Minute), claim("ana", t0.Add(16*time.Minute)))
	if st.Review.ClaimedBy == nil || *st.Review.ClaimedBy != "ana" {
		t.Fatalf("claim: %+v", st.Review)
	}
	st2, _ := fold(st, t0.Add(2*time.Minute), claim("bao", t0.Add(17*time.Minute)))
	if *st2.Review.ClaimedBy != "ana" || lastAction(st2).Kind != schemas.ReviewActionRefused || *lastAction(st2).ReviewerID != "bao" {
		t.Errorf("a second reviewer took a held case: %+v", st2.Review)
	}
	if d := lastAction(st2).Detail; d == nil || !strings.HasPrefix(*d, schemas.ReviewRefusedClaimed+": ") {
		t.Errorf("refusal detail %v, want it to start with %s (the edge answers by it)", d, schemas.ReviewRefusedClaimed)
	}
	// The claim lapses: another reviewer may take the case, and the first may no longer decide.
	st3, _ := fold(st, t0.Add(20*time.Minute), claim("bao", t0.Add(35*time.Minute)))
	if *st3.Review.ClaimedBy != "bao" {
		t.Fatalf("an expired claim was kept: %+v", st3.Review)
	}
	if st4, _ := fold(st3, t0.Add(21*time.Minute), decide("ana", schemas.StatusRejected)); st4.Review.Decided != nil {
		t.Error("a decision from a lapsed claim was taken")
	}
	if st4, _ := fold(st3, t0.Add(21*time.Minute), decide("bao", "maybe")); st4.Review.Decided != nil {
		t.Error("an outcome other than verified or rejected was taken")
	}
	st5, _ := fold(st3, t0.Add(22*time.Minute), decide("bao", schemas.StatusRejected))
	if d := st5.Review.Decided; d == nil || d.ReviewerID != "bao" || d.Outcome != schemas.StatusRejected || !d.DecidedAt.Equal(t0.Add(22*time.Minute)) {
		t.Fatalf("decided: %+v", st5.Review)
	}
	if st5.Status != schemas.StatusReview {
		t.Errorf("status %s: the decision group, not the review, ends the session", st5.Status)
	}
	if st6, _ := fold(st5, t0.Add(23*time.Minute), decide("bao", schemas.StatusVerified)); st6.Review.Decided.Outcome != schemas.StatusRejected {
		t.Error("a second decision replaced the first")
	}
	// Release: only the holder.
	if s, _ := fold(st3, t0.Add(22*time.Minute), func(e *schemas.ReviewEvent) { e.Released = &schemas.ReviewReleased{ReviewerID: "ana"} }); s.Review.ClaimedBy == nil {
		t.Error("a non-holder released the claim")
	}
	if s, _ := fold(st3, t0.Add(22*time.Minute), func(e *schemas.ReviewEvent) { e.Released = &schemas.ReviewReleased{ReviewerID: "bao"} }); s.Review.ClaimedBy != nil {
		t.Error("the holder could not release the claim")
	}
	// The fold never changes its input.
	if st.Review.Decided != nil || *st.Review.ClaimedBy != "ana" || len(st.Review.Actions) != 2 {
		t.Errorf("the input state changed: %+v", st.Review)
	}
}

func TestReviewActionsBounded(t *testing.T) {
	var actions []schemas.ReviewAction
	for i := range schemas.MaxReviewActions + 5 {
		actions = appendAction(actions, schemas.Envelope{OccurredAt: time.Unix(int64(i), 0)}, schemas.ReviewActionRefused, "bao", "")
	}
	if len(actions) != schemas.MaxReviewActions || actions[0].At.Unix() != 5 {
		t.Fatalf("%d actions, first at %d", len(actions), actions[0].At.Unix())
	}
}

func TestDecisionAfterReview(t *testing.T) {
	reviewer := "bao"
	st := &schemas.SessionState{Envelope: schemas.Envelope{SessionID: "ses_1"}, Status: schemas.StatusReview, Review: &schemas.ReviewState{}}
	next, changed := Fold(st, &schemas.Decision{
		Envelope: schemas.Envelope{SessionID: "ses_1", OccurredAt: time.Unix(100, 0)}, DecisionID: "dec_1", Outcome: schemas.StatusRejected,
		DecidedBy: schemas.DecidedByReviewer, ReviewerID: &reviewer, DecidedAt: time.Unix(100, 0),
	})
	if !changed || next.Status != schemas.StatusRejected || next.Decision.DecidedBy != schemas.DecidedByReviewer || *next.Decision.ReviewerID != "bao" {
		t.Fatalf("%v %+v", changed, next.Decision)
	}
}

func TestReviewRetake(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	capID := func(s string) *string { return &s }
	st := &schemas.SessionState{
		Envelope: schemas.Envelope{SessionID: "ses_1", TenantID: "acme"}, Status: schemas.StatusReview,
		Steps: []string{"document_front", "selfie"}, ExpiresAt: t0.Add(-time.Hour),
		Captures: []schemas.StepCapture{
			{Step: "document_front", CaptureID: "cap_f", Status: schemas.CaptureAccepted},
			{Step: "selfie", CaptureID: "cap_s", Status: schemas.CaptureAccepted},
		},
		Checks: []schemas.Check{
			{Name: "quality.document_front", Status: schemas.CheckPass, CaptureID: capID("cap_f")},
			{Name: "quality.selfie", Status: schemas.CheckPass, CaptureID: capID("cap_s")},
			{Name: "liveness.passive", Status: schemas.CheckFail, CaptureID: capID("cap_s")},
			{Name: "face.selfie_document", Status: schemas.CheckPass},
			{Name: "fraud.blocklist_id", Status: schemas.CheckPass, Source: "fraud"},
		},
		Liveness: &schemas.LivenessAssessed{CaptureID: "cap_s"},
		Faces:    &schemas.FacesMatched{},
		Review: &schemas.ReviewState{
			OpenedAt: t0, ClaimedBy: capID("ana"), ClaimExpiresAt: ptr(t0.Add(15 * time.Minute)),
			Actions: []schemas.ReviewAction{{Kind: schemas.ReviewActionOpened, At: t0}},
		},
	}
	retake := func(st *schemas.SessionState, who, step string, at time.Time) (*schemas.SessionState, bool) {
		ev := reviewEvent(at)
		ev.Retake = &schemas.ReviewRetakeRequested{ReviewerID: who, Step: step, ReasonCode: "face_hidden", ExpiresAt: at.Add(24 * time.Hour)}
		return Fold(st, ev)
	}
	refusedWith := func(st *schemas.SessionState, code string) bool {
		a := st.Review.Actions[len(st.Review.Actions)-1]
		return st.Status == schemas.StatusReview && a.Kind == schemas.ReviewActionRefused && a.Detail != nil && strings.HasPrefix(*a.Detail, code+": ")
	}
	at := t0.Add(time.Minute)
	if s, _ := retake(st, "bao", "selfie", at); !refusedWith(s, schemas.ReviewRefusedNotClaimed) {
		t.Errorf("a reviewer without the claim asked for a retake: %+v", s.Review.Actions)
	}
	if s, _ := retake(st, "ana", "passport", at); !refusedWith(s, schemas.ReviewRefusedStep) {
		t.Errorf("a retake of a step never captured: %+v", s.Review.Actions)
	}
	optional := cloneState(st) // a passport session, whose flow allows an optional chip read
	optional.Flow, optional.Steps = "passport", []string{"passport", "selfie"}
	optional.Captures = append(slices.Clone(st.Captures), schemas.StepCapture{Step: "nfc", CaptureID: "cap_n", Status: schemas.CaptureAccepted})
	if s, _ := retake(optional, "ana", "nfc", at); !refusedWith(s, schemas.ReviewRefusedStep) {
		t.Errorf("a retake of an optional step, which the capture page never asks for: %+v", s.Review.Actions)
	}
	limited := *st.Review
	limited.Retakes = schemas.MaxReviewRetakes
	if s, _ := retake(&schemas.SessionState{Envelope: st.Envelope, Status: st.Status, Steps: st.Steps, Captures: st.Captures, Review: &limited}, "ana", "selfie", at); !refusedWith(s, schemas.ReviewRefusedRetakes) {
		t.Errorf("a retake past the limit: %+v", s.Review.Actions)
	}

	next, changed := retake(st, "ana", "selfie", at)
	if !changed || next.Status != schemas.StatusCapturing {
		t.Fatalf("retake: %v, status %s", changed, next.Status)
	}
	if c := next.Captures[1]; c.Status != schemas.CaptureRetake || c.CaptureID != "cap_s" || next.Captures[0].Status != schemas.CaptureAccepted {
		t.Errorf("captures after the retake: %+v", next.Captures)
	}
	var names []string
	for _, c := range next.Checks {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "quality.document_front" || next.Liveness != nil || next.Faces != nil {
		t.Errorf("kept %v, liveness %v, faces %v: what came of the old selfie must go", names, next.Liveness, next.Faces)
	}
	rv := next.Review
	if rv.ClaimedBy != nil || rv.Retakes != 1 || rv.Retake == nil || rv.Retake.Step != "selfie" || rv.Retake.EventID != reviewEvent(at).Envelope.EventID {
		t.Errorf("review after the retake: %+v %+v", rv, rv.Retake)
	}
	if !next.ExpiresAt.Equal(at.Add(24 * time.Hour)) {
		t.Errorf("expires at %s: the person needs time to take the step again", next.ExpiresAt)
	}
	if st.Status != schemas.StatusReview || st.Captures[1].Status != schemas.CaptureAccepted || st.Liveness == nil {
		t.Error("the fold changed its input")
	}
	// What comes late of the selfie sent back, or of faces compared before the request, is
	// not taken.
	if _, changed := Fold(next, &schemas.LivenessAssessed{Envelope: schemas.Envelope{EventID: "evt_l", OccurredAt: at.Add(time.Second)}, CaptureID: "cap_s"}); changed {
		t.Error("liveness of the selfie sent back was folded")
	}
	if _, changed := Fold(next, &schemas.FacesMatched{Envelope: schemas.Envelope{EventID: "evt_f", OccurredAt: at}}); changed {
		t.Error("a face match of faces from before the request was folded")
	}
	if _, changed := Fold(next, &schemas.FraudAssessed{Envelope: schemas.Envelope{EventID: "evt_x", OccurredAt: at.Add(-time.Second)},
		Checks: []schemas.Check{{Name: "fraud.blocklist_id", Status: schemas.CheckPass, Source: "fraud"}}}); changed {
		t.Error("a fraud assessment made before the request was folded: the new capture would never be assessed")
	}
	if _, changed := Fold(next, &schemas.FacesMatched{Envelope: schemas.Envelope{EventID: "evt_f2", OccurredAt: at.Add(time.Minute)},
		Checks: []schemas.Check{{Name: "face.selfie_document", Status: schemas.CheckPass}}}); !changed {
		t.Error("a face match made after the request was not folded")
	}
	// The expiry emitted for the old deadline does not end the reopened session.
	if _, changed := Fold(next, &schemas.SessionEvent{Envelope: schemas.Envelope{SessionID: "ses_1"}, Expired: &schemas.SessionExpired{ExpiresAt: st.ExpiresAt}}); changed {
		t.Error("an expiry of the old deadline ended the session")
	}
	// Reviewers act on a case in review only: the retake is with the person.
	if _, changed := retake(next, "ana", "selfie", at.Add(time.Second)); changed {
		t.Error("a second retake while the person is capturing")
	}

	// The person takes the selfie again: processing, then the decision group reopens the case.
	env := func(id string, at time.Time) schemas.Envelope {
		return schemas.Envelope{EventID: id, SessionID: "ses_1", TenantID: "acme", OccurredAt: at}
	}
	next, _ = Fold(next, &schemas.CaptureSubmitted{Envelope: env("evt_c", at.Add(time.Hour)), Step: "selfie", CaptureID: "cap_s2"})
	next, _ = Fold(next, &schemas.QualityAssessed{Envelope: env("evt_q", at.Add(time.Hour)), Step: "selfie", CaptureID: "cap_s2", Passed: true})
	if next.Status != schemas.StatusProcessing {
		t.Fatalf("status %s after the new selfie, want processing", next.Status)
	}
	open := func(id string) *schemas.ReviewEvent {
		return &schemas.ReviewEvent{Envelope: env(id, at.Add(2*time.Hour)), Opened: &schemas.ReviewOpened{PolicyVersion: "p2", Reasons: []schemas.Reason{{Code: "retake_received"}}}}
	}
	if _, changed := Fold(next, open(schemas.ReviewOpenedEventID("ses_1", 0))); changed {
		t.Error("the first round's opening, replayed, reopened the case")
	}
	reopened, changed := Fold(next, open(schemas.ReviewOpenedEventID("ses_1", 1)))
	if !changed || reopened.Status != schemas.StatusReview || reopened.Review.Retake != nil || reopened.Review.PolicyVersion != "p2" ||
		!reopened.Review.OpenedAt.Equal(at.Add(2*time.Hour)) || reopened.Review.Actions[len(reopened.Review.Actions)-1].Kind != schemas.ReviewActionReopened {
		t.Fatalf("reopened: %v %+v", changed, reopened.Review)
	}
	// A view is an audit record: nothing changes.
	if _, changed := Fold(reopened, &schemas.ReviewEvent{Envelope: env("evt_v", at.Add(3*time.Hour)), Viewed: &schemas.ReviewViewed{ReviewerID: "ana", What: "case"}}); changed {
		t.Error("a view changed the session")
	}
}
