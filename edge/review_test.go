package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/processors/session"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
	"github.com/idstream/idstream/stream"
)

const (
	keyAna = "rk_acme_ana"
	keyBao = "rk_acme_bao"
	keyCuc = "rk_beta_cuc"
)

// reviewEnv is an edge whose tenants acme (reviewers ana, bao) and beta (cuc) have reviewers,
// with the session group's fold of review events (and the decision group's reviewed
// decision) standing in behind the publisher.
func reviewEnv(t *testing.T) *env {
	e := newEnv(t)
	acme, _ := e.srv.cfg.Tenants.Get("acme")
	acme.Reviewers = []tenant.Reviewer{{ID: "ana", KeyHashes: []string{tenant.HashKey(keyAna)}}, {ID: "bao", KeyHashes: []string{tenant.HashKey(keyBao)}}}
	beta, _ := e.srv.cfg.Tenants.Get("beta")
	beta.Reviewers = []tenant.Reviewer{{ID: "cuc", KeyHashes: []string{tenant.HashKey(keyCuc)}}}
	e.pub.then = func(o stream.Output) {
		if o.Topic != schemas.TopicReviews {
			return
		}
		var ev schemas.ReviewEvent
		if err := json.Unmarshal(o.Value, &ev); err != nil {
			t.Errorf("review event: %v", err)
			return
		}
		st := e.state(ev.Envelope.SessionID)
		next, _ := session.Fold(st, &ev)
		if d := next.Review.Decided; d != nil && next.Decision == nil { // the decision group
			next = cloneForTest(next)
			next.Status = d.Outcome
			next.Decision = &schemas.DecisionResult{DecisionID: "dec_x", Outcome: d.Outcome, DecidedBy: schemas.DecidedByReviewer, ReviewerID: &d.ReviewerID, DecidedAt: d.DecidedAt}
		}
		e.sessions.put(next)
	}
	return e
}

func cloneForTest(st *schemas.SessionState) *schemas.SessionState { c := *st; return &c }

// inReview puts a session of tenant in review, as the policy would.
func (e *env) inReview(tenantID string, opened time.Time) string {
	id := randomID("ses_")
	st := &schemas.SessionState{
		Envelope: schemas.Envelope{SessionID: id, TenantID: tenantID}, Status: schemas.StatusProcessing, Flow: "id_card",
		Steps: []string{"document_front", "document_back", "selfie"}, CreatedAt: opened.Add(-time.Minute), ExpiresAt: opened.Add(29 * time.Minute),
	}
	next, _ := session.Fold(st, &schemas.ReviewEvent{
		Envelope: schemas.Envelope{SessionID: id, TenantID: tenantID, OccurredAt: opened},
		Opened:   &schemas.ReviewOpened{PolicyVersion: "p1", Reasons: []schemas.Reason{{Code: "liveness_grey_band", Message: "Check liveness.passive is fail (score 0.700)."}}},
	})
	e.sessions.put(next)
	return id
}

// caseWithSelfie puts a session of acme in review whose selfie capture cap_1 holds a JPEG
// picture (in the blob store) and the blobs more.
func (e *env) caseWithSelfie(t *testing.T, more ...schemas.BlobRef) string {
	t.Helper()
	id := e.inReview("acme", e.clock.Now().Add(-time.Minute))
	obj, err := e.blobs.Put(context.Background(), "acme/"+id+"/cap_1/image", jpegBytes(t), "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	st := cloneForTest(e.state(id))
	st.Captures = []schemas.StepCapture{{Step: "selfie", CaptureID: "cap_1", Status: schemas.CaptureAccepted,
		Blobs: append([]schemas.BlobRef{{Name: "image", URI: obj.URI, MediaType: "image/jpeg"}}, more...)}}
	e.sessions.put(st)
	return id
}

func TestReviewQueueAndClaims(t *testing.T) {
	e := reviewEnv(t)
	now := e.clock.Now()
	older := e.inReview("acme", now.Add(-2*time.Hour))
	newer := e.inReview("acme", now.Add(-time.Hour))
	foreign := e.inReview("beta", now.Add(-3*time.Hour))
	e.openSession(keyAcme, "id_card") // not in review

	// Only reviewers: an API key, an admin key, an sdk_token are refused.
	expectProblem(t, e.do("GET", "/v1/review/cases", keyAcme, "", nil), 403, CodeForbidden)
	expectProblem(t, e.do("GET", "/v1/review/cases", keyAcmeAdmin, "", nil), 403, CodeForbidden)
	expectProblem(t, e.do("GET", "/v1/review/cases", "rk_nobody", "", nil), 401, CodeUnauthorized)

	r := e.do("GET", "/v1/review/cases", keyAna, "", nil)
	var q struct {
		Cases []ReviewCase `json:"cases"`
		Total int          `json:"total"`
	}
	if err := json.Unmarshal(r.body, &q); err != nil || r.status != 200 {
		t.Fatalf("queue: %d %s", r.status, r.body)
	}
	if q.Total != 2 || q.Cases[0].SessionID != older || q.Cases[1].SessionID != newer || q.Cases[0].AgeSeconds != 7200 ||
		q.Cases[0].Reasons[0].Code != "liveness_grey_band" || q.Cases[0].ClaimedBy != nil {
		t.Fatalf("queue (oldest first, own tenant only): %s", r.body)
	}

	// A claim is the claimer's; another reviewer is refused, and may not decide.
	r = e.do("POST", "/v1/review/cases/"+older+"/claim", keyAna, "", nil)
	if r.status != 200 || r.json(t)["claimed_by"] != "ana" {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	expectProblem(t, e.do("POST", "/v1/review/cases/"+older+"/claim", keyBao, "", nil), 409, CodeCaseClaimed)
	expectProblem(t, e.doJSON("POST", "/v1/review/cases/"+older+"/decision", keyBao, map[string]any{"outcome": "verified", "reason_code": "ok"}), 409, CodeCaseClaimed)
	expectProblem(t, e.doJSON("POST", "/v1/review/cases/"+newer+"/decision", keyBao, map[string]any{"outcome": "verified", "reason_code": "ok"}), 409, CodeCaseNotClaimed)
	expectProblem(t, e.do("POST", "/v1/review/cases/"+foreign+"/claim", keyAna, "", nil), 404, CodeCaseNotFound)
	if r := e.do("GET", "/v1/review/cases?claimed=unclaimed", keyBao, "", nil); len(r.json(t)["cases"].([]any)) != 1 {
		t.Errorf("unclaimed: %s", r.body)
	}
	if r := e.do("GET", "/v1/review/cases?claimed=mine", keyAna, "", nil); len(r.json(t)["cases"].([]any)) != 1 {
		t.Errorf("mine: %s", r.body)
	}

	// The claim lapses after ReviewClaimTTL: bao may take the case.
	e.clock.Advance(ReviewClaimTTL + time.Second)
	if r := e.do("POST", "/v1/review/cases/"+older+"/claim", keyBao, "", nil); r.status != 200 || r.json(t)["claimed_by"] != "bao" {
		t.Fatalf("claim after the lapse: %d %s", r.status, r.body)
	}
	// Bad decisions are refused before anything is produced.
	for _, body := range []map[string]any{{"outcome": "maybe", "reason_code": "x"}, {"outcome": "verified", "reason_code": "Has Spaces"}, {"outcome": "verified"}} {
		expectProblem(t, e.doJSON("POST", "/v1/review/cases/"+older+"/decision", keyBao, body), 422, CodeInvalidRequest)
	}
	r = e.doJSON("POST", "/v1/review/cases/"+older+"/decision", keyBao, map[string]any{"outcome": "rejected", "reason_code": "mask_seen", "note": "a mask at the chin"})
	if r.status != 200 || r.json(t)["status"] != "rejected" || r.json(t)["decided_by"] != "reviewer" {
		t.Fatalf("decision: %d %s", r.status, r.body)
	}
	expectProblem(t, e.do("POST", "/v1/review/cases/"+older+"/claim", keyAna, "", nil), 409, CodeCaseDecided)

	// The case's evidence and history.
	r = e.do("GET", "/v1/review/cases/"+older, keyAna, "", nil)
	var d ReviewCaseDetail
	if err := json.Unmarshal(r.body, &d); err != nil || r.status != 200 {
		t.Fatalf("case: %d %s", r.status, r.body)
	}
	var kinds []string
	for _, a := range d.History {
		kinds = append(kinds, a.Kind)
	}
	// bao's claim and decisions on ana's case were refused by the edge before anything was
	// produced: the history holds what the session group ordered.
	if want := []string{"opened", "claimed", "claimed", "decided"}; !equalStrings(kinds, want) {
		t.Errorf("history %v, want %v", kinds, want)
	}
	if d.Session.SessionID != older || d.Session.Flow != "id_card" || d.Session.Decision == nil || !d.Decided { // the full view
		t.Errorf("evidence: %+v", d)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Error("case evidence may be cached")
	}
	if got := e.do("GET", "/v1/ekyc/sessions/"+newer, keyAcme, "", nil).json(t)["status"]; got != "processing" {
		t.Errorf("a session in review shows %v to the integrator, want processing", got)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReleaseCase(t *testing.T) {
	e := reviewEnv(t)
	id := e.inReview("acme", e.clock.Now().Add(-time.Minute))
	expectProblem(t, e.do("POST", "/v1/review/cases/"+id+"/release", keyAna, "", nil), 409, CodeCaseNotClaimed)
	if r := e.do("POST", "/v1/review/cases/"+id+"/claim", keyAna, "", nil); r.status != http.StatusOK {
		t.Fatal(r.status)
	}
	if r := e.do("POST", "/v1/review/cases/"+id+"/release", keyAna, "", nil); r.status != http.StatusNoContent {
		t.Fatalf("release: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/review/cases/"+id+"/claim", keyBao, "", nil); r.status != http.StatusOK {
		t.Fatalf("claim after a release: %d %s", r.status, r.body)
	}
}

// TestRefusedClaimIsAConflict: the edge's view showed the case free, but the session group,
// which orders the claims, had granted ana's first: bao is told 409 case_claimed, never 200.
func TestRefusedClaimIsAConflict(t *testing.T) {
	e := reviewEnv(t)
	id := e.inReview("acme", e.clock.Now().Add(-time.Minute))
	fold := e.pub.then
	e.pub.then = func(o stream.Output) {
		st := e.state(id)
		if st.Review.ClaimedBy == nil { // ana's claim, ordered before bao's
			ana, until := "ana", e.clock.Now().Add(ReviewClaimTTL)
			next, _ := session.Fold(st, &schemas.ReviewEvent{Envelope: schemas.Envelope{EventID: "evt_ana", SessionID: id, OccurredAt: e.clock.Now()},
				Claimed: &schemas.ReviewClaimed{ReviewerID: ana, Until: until}})
			e.sessions.put(next)
		}
		fold(o)
	}
	expectProblem(t, e.do("POST", "/v1/review/cases/"+id+"/claim", keyBao, "", nil), 409, CodeCaseClaimed)
	if st := e.state(id); *st.Review.ClaimedBy != "ana" {
		t.Fatalf("claimed by %v", *st.Review.ClaimedBy)
	}
}

func TestReviewAccess(t *testing.T) {
	e := reviewEnv(t)
	id := e.inReview("beta", e.clock.Now().Add(-time.Minute))
	s := e.openSession(keyAcme, "id_card")
	expectProblem(t, e.do("GET", "/v1/review/cases", s.SDKToken, "", nil), 403, CodeForbidden)
	expectProblem(t, e.do("GET", "/v1/review/cases/"+id, keyAna, "", nil), 404, CodeCaseNotFound) // another tenant's
	expectProblem(t, e.do("GET", "/v1/review/cases/ses_nope", keyAna, "", nil), 404, CodeCaseNotFound)
	if r := e.do("GET", "/v1/review/cases/"+id, keyCuc, "", nil); r.status != 200 {
		t.Errorf("beta's reviewer on beta's case: %d", r.status)
	}
	expectProblem(t, e.doJSON("POST", "/v1/admin/blocklist", keyAna, map[string]any{"id_number": "001099012345"}), 403, CodeForbidden)
	for _, q := range []string{"claimed=maybe", "limit=0", "limit=501", "limit=x"} {
		expectProblem(t, e.do("GET", "/v1/review/cases?"+q, keyAna, "", nil), 422, CodeInvalidRequest)
	}
}

func TestCaseImagesBehindSignedURLs(t *testing.T) {
	e := reviewEnv(t)
	id := e.caseWithSelfie(t, schemas.BlobRef{Name: "video", URI: "x", MediaType: "video/webm"})

	var d ReviewCaseDetail
	if err := json.Unmarshal(e.do("GET", "/v1/review/cases/"+id, keyAna, "", nil).body, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Images) != 1 || d.Images[0].Step != "selfie" || d.Images[0].MediaType != "image/jpeg" {
		t.Fatalf("images %+v", d.Images)
	}
	u, _ := url.Parse(d.Images[0].URL)
	if u.Host != "" {
		t.Errorf("image URL %s is not a path of the edge's own origin", d.Images[0].URL)
	}
	r := e.do("GET", u.Path, "", "", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "image/jpeg" || !bytes.Equal(r.body, jpegBytes(t)) || r.header.Get("Cache-Control") != "private, no-store" ||
		r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Content-Security-Policy") != "default-src 'none'; sandbox" {
		t.Fatalf("image: %d %s", r.status, r.header)
	}
	expectProblem(t, e.do("GET", u.Path+"x", "", "", nil), 401, CodeUnauthorized)
	// Only a case's images: not its video, not another tenant's capture, not with another
	// kind of token, not for a reviewer who is gone.
	exp := strconv.FormatInt(e.clock.Now().Add(time.Minute).Unix(), 10)
	for name, tok := range map[string]string{
		"video":          e.srv.signToken(tokenImage, id, "acme", "cap_1", "video", "ana", exp),
		"other tenant":   e.srv.signToken(tokenImage, id, "beta", "cap_1", "image", "cuc", exp),
		"other capture":  e.srv.signToken(tokenImage, id, "acme", "cap_2", "image", "ana", exp),
		"sdk token kind": e.srv.signToken(tokenSDK, id, "acme", exp, "x", "ana", exp),
		"gone reviewer":  e.srv.signToken(tokenImage, id, "acme", "cap_1", "image", "dao", exp),
	} {
		if r := e.do("GET", "/v1/review/images/"+tok, "", "", nil); r.status != 404 && r.status != 401 {
			t.Errorf("%s: %d, want 404 or 401", name, r.status)
		}
	}
	e.clock.Advance(ReviewImageTTL)
	expectProblem(t, e.do("GET", u.Path, "", "", nil), 410, CodeLinkExpired)

	// An erased session shows no image, even through a fresh link.
	if err := json.Unmarshal(e.do("GET", "/v1/review/cases/"+id, keyAna, "", nil).body, &d); err != nil {
		t.Fatal(err)
	}
	u, _ = url.Parse(d.Images[0].URL)
	e.sessions.mu.Lock()
	delete(e.sessions.m, id)
	e.sessions.mu.Unlock()
	expectProblem(t, e.do("GET", u.Path, "", "", nil), 404, CodeNotFound)
}

type fixedBacklog struct {
	n      int
	oldest time.Time
}

func (f fixedBacklog) ReviewBacklog() (int, time.Time) { return f.n, f.oldest }

func TestReviewBacklogMetrics(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		b         fixedBacklog
		cases, ag float64
	}{{fixedBacklog{3, now.Add(-90 * time.Second)}, 3, 90}, {fixedBacklog{}, 0, 0}} {
		reg := prometheus.NewRegistry()
		if err := registerReviewBacklog(reg, tc.b, func() time.Time { return now }); err != nil {
			t.Fatal(err)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			got[mf.GetName()] = mf.GetMetric()[0].GetGauge().GetValue()
		}
		if got["idstream_review_cases"] != tc.cases || got["idstream_review_oldest_case_age_seconds"] != tc.ag {
			t.Errorf("metrics %v, want cases %v age %v", got, tc.cases, tc.ag)
		}
	}
}

// TestRetakeCase: a reviewer holding a case sends one step back to the person: the session
// is capturing that step again with a later expiry, the integrator sees the request in Data
// Get and gets a fresh capture link, and the case waits for the person.
func TestRetakeCase(t *testing.T) {
	e := reviewEnv(t)
	id := e.inReview("acme", e.clock.Now().Add(-time.Hour))
	st := cloneForTest(e.state(id))
	for _, step := range st.Steps {
		st.Captures = append(st.Captures, schemas.StepCapture{Step: step, CaptureID: "cap_" + step, Status: schemas.CaptureAccepted})
	}
	e.sessions.put(st)
	path := "/v1/review/cases/" + id + "/retake"
	retake := map[string]any{"step": "selfie", "reason_code": "face_covered", "note": "a cap over the eyes"}

	expectProblem(t, e.doJSON("POST", path, keyAna, retake), 409, CodeCaseNotClaimed)
	if r := e.do("POST", "/v1/review/cases/"+id+"/claim", keyAna, "", nil); r.status != 200 {
		t.Fatal(r.status)
	}
	expectProblem(t, e.doJSON("POST", path, keyBao, retake), 409, CodeCaseClaimed)
	for _, body := range []map[string]any{{"step": "passport", "reason_code": "x"}, {"step": "selfie", "reason_code": "Not A Code"}, {"step": "selfie"}} {
		expectProblem(t, e.doJSON("POST", path, keyAna, body), 422, CodeInvalidRequest)
	}
	r := e.doJSON("POST", path, keyAna, retake)
	want := readmodel.Timestamp(e.clock.Now().Add(ReviewRetakeWindow))
	if r.status != 200 || r.json(t)["status"] != "capturing" || r.json(t)["step"] != "selfie" || r.json(t)["expires_at"] != want {
		t.Fatalf("retake: %d %s (want expiry %s)", r.status, r.body, want)
	}

	// The integrator's view: capturing, the step sent back, why; not the reviewer's note.
	r = e.do("GET", "/v1/ekyc/sessions/"+id, keyAcme, "", nil)
	got := r.json(t)
	if got["status"] != "capturing" || got["steps"].(map[string]any)["selfie"].(map[string]any)["status"] != "retake" ||
		got["retake"].(map[string]any)["reason_code"] != "face_covered" || bytes.Contains(r.body, []byte("a cap over")) {
		t.Fatalf("Data Get after the retake: %s", r.body)
	}
	// The case waits for the person: out of the queue, every action refused with why.
	if r := e.do("GET", "/v1/review/cases", keyAna, "", nil); r.json(t)["total"].(float64) != 0 {
		t.Errorf("a case with the person is in the queue: %s", r.body)
	}
	expectProblem(t, e.do("POST", "/v1/review/cases/"+id+"/claim", keyBao, "", nil), 409, CodeCaseAwaitingRetake)
	var d ReviewCaseDetail
	if err := json.Unmarshal(e.do("GET", "/v1/review/cases/"+id, keyAna, "", nil).body, &d); err != nil || d.AwaitingRetake == nil || *d.AwaitingRetake != "selfie" {
		t.Errorf("the case does not say it waits for the selfie: %+v", d.ReviewCase)
	}

	// A fresh link for the person, valid past the first token's expiry.
	e.clock.Advance(2 * time.Hour) // Session Init's token (30 minutes) has lapsed
	r = e.do("POST", "/v1/ekyc/sessions/"+id+"/sdk-token", keyAcme, "", nil)
	var tok SDKTokenResponse
	if err := json.Unmarshal(r.body, &tok); err != nil || r.status != 201 || tok.ExpiresAt != want || !strings.Contains(tok.CaptureURL, "/v1/capture/"+id) {
		t.Fatalf("sdk-token: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/ekyc/sessions/"+id, tok.SDKToken, "", nil); r.status != 200 || r.json(t)["status"] != "capturing" {
		t.Errorf("the fresh token: %d %s", r.status, r.body)
	}
	expectProblem(t, e.do("POST", "/v1/ekyc/sessions/"+id+"/sdk-token", tok.SDKToken, "", nil), 401, CodeUnauthorized) // a token renews no token
	expectProblem(t, e.do("POST", "/v1/ekyc/sessions/"+id+"/sdk-token", keyBeta, "", nil), 404, CodeSessionNotFound)
	e.clock.Advance(ReviewRetakeWindow)
	expectProblem(t, e.do("POST", "/v1/ekyc/sessions/"+id+"/sdk-token", keyAcme, "", nil), 410, CodeSessionExpired)
}

// TestRetakeLimit: after schemas.MaxReviewRetakes retakes the reviewer must decide.
func TestRetakeLimit(t *testing.T) {
	e := reviewEnv(t)
	id := e.inReview("acme", e.clock.Now().Add(-time.Hour))
	st := cloneForTest(e.state(id))
	st.Captures = []schemas.StepCapture{{Step: "selfie", CaptureID: "cap_s", Status: schemas.CaptureAccepted}}
	rv := *st.Review
	rv.Retakes = schemas.MaxReviewRetakes
	st.Review = &rv
	e.sessions.put(st)
	if r := e.do("POST", "/v1/review/cases/"+id+"/claim", keyAna, "", nil); r.status != 200 {
		t.Fatal(r.status)
	}
	expectProblem(t, e.doJSON("POST", "/v1/review/cases/"+id+"/retake", keyAna, map[string]any{"step": "selfie", "reason_code": "face_covered"}), 409, CodeRetakeLimit)
}

// TestViewsAreRecorded: every view of a case's personal data (the case, each picture) is a
// review event naming the reviewer; a view that cannot be recorded is not served.
func TestViewsAreRecorded(t *testing.T) {
	e := reviewEnv(t)
	id := e.caseWithSelfie(t)
	var d ReviewCaseDetail
	if err := json.Unmarshal(e.do("GET", "/v1/review/cases/"+id, keyBao, "", nil).body, &d); err != nil || len(d.Images) != 1 {
		t.Fatalf("case: %v %+v", err, d.Images)
	}
	if r := e.do("GET", d.Images[0].URL, "", "", nil); r.status != 200 {
		t.Fatalf("image: %d", r.status)
	}
	var views []string
	for _, o := range e.pub.on(schemas.TopicReviews) {
		var ev schemas.ReviewEvent
		if json.Unmarshal(o.Value, &ev) == nil && ev.Viewed != nil && ev.Envelope.SessionID == id {
			views = append(views, ev.Viewed.ReviewerID+" "+ev.Viewed.What)
		}
	}
	if !equalStrings(views, []string{"bao case", "bao image:selfie"}) {
		t.Errorf("views recorded %q", views)
	}
	e.pub.mu.Lock()
	e.pub.fail = errors.New("broker down")
	e.pub.mu.Unlock()
	if r := e.do("GET", "/v1/review/cases/"+id, keyBao, "", nil); r.status != 503 || bytes.Contains(r.body, []byte("images")) {
		t.Errorf("a case served while its view could not be recorded: %d %s", r.status, r.body)
	}
	if r := e.do("GET", d.Images[0].URL, "", "", nil); r.status != 503 {
		t.Errorf("a picture served while its view could not be recorded: %d", r.status)
	}
}

func TestRenewSDKTokenOfADecidedSession(t *testing.T) {
	e := newEnv(t)
	s := e.openSession(keyAcme, "id_card")
	if r := e.do("POST", "/v1/ekyc/sessions/"+s.SessionID+"/sdk-token", keyAcme, "", nil); r.status != 201 {
		t.Fatalf("an open session: %d %s", r.status, r.body)
	}
	// A view a moment behind the retake still shows the session in review: the edge waits.
	st := cloneForTest(e.state(s.SessionID))
	st.Status = schemas.StatusReview
	e.sessions.put(st)
	go func() {
		time.Sleep(100 * time.Millisecond)
		next := cloneForTest(st)
		next.Status = schemas.StatusCapturing
		e.sessions.put(next)
	}()
	if r := e.do("POST", "/v1/ekyc/sessions/"+s.SessionID+"/sdk-token", keyAcme, "", nil); r.status != 201 {
		t.Fatalf("a session the view shows capturing a moment later: %d %s", r.status, r.body)
	}
	st = cloneForTest(e.state(s.SessionID))
	st.Status = schemas.StatusVerified
	e.sessions.put(st)
	expectProblem(t, e.do("POST", "/v1/ekyc/sessions/"+s.SessionID+"/sdk-token", keyAcme, "", nil), 409, CodeSessionClosed)
}

// TestCasePortraits: besides the captures, a case shows the face the document reader cut
// from the document and the chip's portrait, each behind its own signed URL.
func TestCasePortraits(t *testing.T) {
	e := reviewEnv(t)
	id := e.caseWithSelfie(t)
	put := func(key string) schemas.BlobRef {
		obj, err := e.blobs.Put(context.Background(), "acme/"+id+"/"+key, jpegBytes(t), "image/jpeg")
		if err != nil {
			t.Fatal(err)
		}
		return schemas.BlobRef{Name: key, URI: obj.URI, MediaType: "image/jpeg"}
	}
	crop, dg2 := put("face_crop"), put("dg2_face")
	st := cloneForTest(e.state(id))
	st.Documents = []schemas.DocumentRead{{Step: "document_front", CaptureID: "cap_f", FaceCrop: &crop}}
	st.Chip = &schemas.ChipVerified{CaptureID: "cap_n", FaceImage: &dg2}
	e.sessions.put(st)
	var d ReviewCaseDetail
	if err := json.Unmarshal(e.do("GET", "/v1/review/cases/"+id, keyAna, "", nil).body, &d); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, im := range d.Images {
		got = append(got, im.Kind+":"+im.Step+"/"+im.Name)
		if r := e.do("GET", im.URL, "", "", nil); r.status != 200 || !bytes.Equal(r.body, jpegBytes(t)) {
			t.Errorf("%s/%s: %d", im.Step, im.Name, r.status)
		}
	}
	if want := []string{"capture:selfie/image", "document_face:document_front/face_crop", "chip_portrait:nfc/dg2_face"}; !equalStrings(got, want) {
		t.Errorf("pictures %v, want %v", got, want)
	}
	var views []string
	for _, o := range e.pub.on(schemas.TopicReviews) {
		var ev schemas.ReviewEvent
		if json.Unmarshal(o.Value, &ev) == nil && ev.Viewed != nil && strings.Contains(ev.Viewed.What, ":") {
			views = append(views, ev.Viewed.What)
		}
	}
	if want := []string{"image:selfie", "document_face:document_front", "chip_portrait:nfc"}; !equalStrings(views, want) {
		t.Errorf("views recorded %v, want %v: which picture was seen", views, want)
	}
}
