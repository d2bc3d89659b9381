package edge

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
)

// The review API: a tenant's reviewers (tenant.Reviewer, each with keys of their own) list
// the sessions the policy sent to review, claim one, read its evidence and decide it. Every
// action is a schemas.ReviewEvent on ekyc.reviews.v1; the session group, the one writer of
// the session state, orders them (a claim is granted there, not here) and the decision
// group turns a reviewer's decision into the session's one decision. A handler produces its
// event, then waits for the session view to show what the session group made of it.

// ReviewClaimTTL is how long a claim holds unless renewed (claiming again).
const ReviewClaimTTL = 15 * time.Minute

// ReviewRetakeWindow is how long the person has to take a step again that a reviewer sent
// back: the session's expiry moves to the request's time plus this window (never earlier).
// A day, because the integrator must first reach the person (the retake webhook), who then
// opens the capture page again with a fresh sdk_token.
const ReviewRetakeWindow = 24 * time.Hour

// reviewWait bounds how long an action waits for the session group's answer before the
// edge answers 202 (the action is recorded and will be folded).
const reviewWait = 5 * time.Second

// Review problem codes.
const (
	CodeCaseNotFound       = "case_not_found"
	CodeCaseClaimed        = "case_claimed"
	CodeCaseNotClaimed     = "case_not_claimed"
	CodeCaseDecided        = "case_decided"
	CodeLinkExpired        = "link_expired"
	CodeRetakeLimit        = "retake_limit"
	CodeCaseAwaitingRetake = "case_awaiting_retake"
)

// ReviewCase is one case of the queue.
type ReviewCase struct {
	SessionID      string           `json:"session_id"`
	Flow           string           `json:"flow"`
	OpenedAt       string           `json:"opened_at"`
	AgeSeconds     int64            `json:"age_seconds"`
	PolicyVersion  string           `json:"policy_version"`
	Reasons        []schemas.Reason `json:"reasons"`
	ClaimedBy      *string          `json:"claimed_by"`
	ClaimExpiresAt *string          `json:"claim_expires_at"`
	Decided        bool             `json:"decided"`
	// AwaitingRetake is the step a reviewer sent back to the person, until the case returns
	// to the queue (the person took it again) or the session ends.
	AwaitingRetake *string `json:"awaiting_retake"`
}

// ReviewAction is one entry of a case's history.
type ReviewAction struct {
	Kind       string  `json:"kind"`
	ReviewerID *string `json:"reviewer_id"`
	At         string  `json:"at"`
	Detail     *string `json:"detail"`
}

// ReviewCaseDetail is a case with its evidence: the session as Data Get shows it to the
// integrator (every check with its score and threshold, the extracted data), the case's
// history and the reviewer's decision (with its note) once there is one.
type ReviewCaseDetail struct {
	ReviewCase
	Session  readmodel.SessionView `json:"session"`
	History  []ReviewAction        `json:"history"`
	Decision *ReviewerDecision     `json:"decision"`
	Images   []ReviewImage         `json:"images"`
	// RetakeSteps are the steps a retake request may name: required steps the session
	// captured.
	RetakeSteps []string `json:"retake_steps"`
	// Sources are the data each source read, side by side: the printed fields of each
	// document step (OCR), each machine readable zone, and the chip.
	Sources []ReviewSource `json:"sources"`
}

// ReviewSource is what one source read: "ocr:<step>", "mrz:<step>", "chip", "chip_mrz".
type ReviewSource struct {
	Source string            `json:"source"`
	Fields map[string]string `json:"fields"`
}

// ReviewerDecision is a reviewer's decision of a case.
type ReviewerDecision struct {
	ReviewerID string  `json:"reviewer_id"`
	Outcome    string  `json:"outcome"`
	ReasonCode string  `json:"reason_code"`
	Note       *string `json:"note"`
	DecidedAt  string  `json:"decided_at"`
}

// ReviewBacklog is optionally implemented by a Sessions view: how many sessions are in
// review and when the oldest was opened (readmodel.States), exported as metrics.
type ReviewBacklog interface {
	ReviewBacklog() (int, time.Time)
}

// registerReviewBacklog exports the review backlog: idstream_review_cases (sessions in
// review, all tenants) and idstream_review_oldest_case_age_seconds (0 when none), both from
// one read of the backlog at scrape time.
func registerReviewBacklog(reg prometheus.Registerer, b ReviewBacklog, now func() time.Time) error {
	return reg.Register(&reviewBacklogCollector{
		backlog: b, now: now,
		cases:  prometheus.NewDesc("idstream_review_cases", "Sessions in human review, waiting for a reviewer's decision.", nil, nil),
		oldest: prometheus.NewDesc("idstream_review_oldest_case_age_seconds", "Age of the oldest session in review (0 when none).", nil, nil),
	})
}

type reviewBacklogCollector struct {
	backlog       ReviewBacklog
	now           func() time.Time
	cases, oldest *prometheus.Desc
}

func (r *reviewBacklogCollector) Describe(ch chan<- *prometheus.Desc) { ch <- r.cases; ch <- r.oldest }

func (r *reviewBacklogCollector) Collect(ch chan<- prometheus.Metric) {
	n, oldest := r.backlog.ReviewBacklog()
	age := 0.0
	if !oldest.IsZero() {
		age = r.now().Sub(oldest).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(r.cases, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(r.oldest, prometheus.GaugeValue, age)
}

// ReviewIndex is optionally implemented by a Sessions view: the tenant's sessions in review
// without a scan of every session (readmodel.States keeps such an index).
type ReviewIndex interface {
	InReview(tenantID string) []*schemas.SessionState
}

// reviewer is the caller of the review API.
type reviewer struct {
	tenant *tenant.Tenant
	id     string
}

// authenticateReviewer resolves a reviewer key. Another valid credential (API key, admin
// key, sdk_token) → 403; anything else → 401.
func (s *Server) authenticateReviewer(c *fiber.Ctx) (reviewer, error) {
	cred := bearer(c)
	if cred == "" {
		return reviewer{}, errUnauthorized()
	}
	if t, r, ok := s.cfg.Tenants.ByReviewerKey(cred); ok {
		if err := s.rateLimit(t); err != nil {
			return reviewer{}, err
		}
		return reviewer{tenant: t, id: r.ID}, nil
	}
	_, isAPIKey := s.cfg.Tenants.ByAPIKey(cred)
	_, isAdmin := s.cfg.Tenants.ByAdminKey(cred)
	_, _, _, isSDK := s.verifySDKToken(cred)
	if isAPIKey || isAdmin || isSDK {
		return reviewer{}, problem(fiber.StatusForbidden, CodeForbidden, "this endpoint requires a reviewer key")
	}
	return reviewer{}, errUnauthorized()
}

// reviewCase loads the case named in the path: a session of the reviewer's tenant in review.
func (s *Server) reviewCase(c *fiber.Ctx, r reviewer) (*schemas.SessionState, error) {
	id := c.Params("session_id")
	if !validID(id, "ses_") {
		return nil, errCaseNotFound()
	}
	st, found, err := s.cfg.Sessions.Get(c.UserContext(), id)
	if err != nil {
		s.log.Error("edge: session view", "request_id", requestID(c), "err", err)
		return nil, errUnavailable()
	}
	if !found || st == nil || st.Envelope.TenantID != r.tenant.ID || st.Review == nil {
		return nil, errCaseNotFound()
	}
	return st, nil
}

func errCaseNotFound() *apiError {
	return problem(fiber.StatusNotFound, CodeCaseNotFound, "no such case in review for this tenant")
}

// caseOf is the queue entry of a session in review.
func (s *Server) caseOf(st *schemas.SessionState) ReviewCase {
	rv := st.Review
	rc := ReviewCase{
		SessionID: st.Envelope.SessionID, Flow: st.Flow, OpenedAt: readmodel.Timestamp(rv.OpenedAt),
		AgeSeconds: int64(s.now().Sub(rv.OpenedAt) / time.Second), PolicyVersion: rv.PolicyVersion,
		Reasons: rv.Reasons, Decided: rv.Decided != nil,
	}
	if rc.Reasons == nil {
		rc.Reasons = []schemas.Reason{}
	}
	if rt := awaitingRetake(st); rt != nil {
		rc.AwaitingRetake = &rt.Step
	}
	if rv.ClaimedBy != nil && rv.ClaimExpiresAt != nil && s.now().Before(*rv.ClaimExpiresAt) {
		at := readmodel.Timestamp(*rv.ClaimExpiresAt)
		rc.ClaimedBy, rc.ClaimExpiresAt = rv.ClaimedBy, &at
	}
	return rc
}

// listCases answers GET /v1/review/cases: the tenant's open cases, oldest first. Filters:
// flow, claimed (any | unclaimed | mine), limit (1–500, default 100).
func (s *Server) listCases(c *fiber.Ctx) error {
	r, err := s.authenticateReviewer(c)
	if err != nil {
		return err
	}
	flowName, claimed := c.Query("flow"), c.Query("claimed", "any")
	if claimed != "any" && claimed != "unclaimed" && claimed != "mine" {
		return invalidRequest("claimed must be any, unclaimed or mine")
	}
	limit := 100
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return invalidRequest("limit must be an integer from 1 to 500")
		}
		limit = n
	}
	var cases []ReviewCase
	for _, st := range s.inReview(r.tenant.ID) {
		if st.Review == nil || st.Review.Decided != nil || (flowName != "" && st.Flow != flowName) {
			continue
		}
		rc := s.caseOf(st)
		switch {
		case claimed == "unclaimed" && rc.ClaimedBy != nil,
			claimed == "mine" && (rc.ClaimedBy == nil || *rc.ClaimedBy != r.id):
			continue
		}
		cases = append(cases, rc)
	}
	slices.SortFunc(cases, func(a, b ReviewCase) int {
		if a.OpenedAt != b.OpenedAt {
			return strings.Compare(a.OpenedAt, b.OpenedAt)
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	total := len(cases)
	if len(cases) > limit {
		cases = cases[:limit]
	}
	if cases == nil {
		cases = []ReviewCase{}
	}
	return c.JSON(fiber.Map{"cases": cases, "total": total})
}

// inReview returns the tenant's sessions in review: from the view's index when it keeps one,
// else by a scan of every session.
func (s *Server) inReview(tenantID string) []*schemas.SessionState {
	if idx, ok := s.cfg.Sessions.(ReviewIndex); ok {
		return idx.InReview(tenantID)
	}
	var out []*schemas.SessionState
	s.cfg.Sessions.Range(func(st *schemas.SessionState) bool {
		if st != nil && st.Envelope.TenantID == tenantID && st.Status == schemas.StatusReview {
			out = append(out, st)
		}
		return true
	})
	return out
}

// getCase answers GET /v1/review/cases/{id}: the case, the session's evidence, the history.
// Every view is recorded on the review topic with the reviewer's id (recordView): the
// session's personal data is shown.
func (s *Server) getCase(c *fiber.Ctx) error {
	r, err := s.authenticateReviewer(c)
	if err != nil {
		return err
	}
	st, err := s.reviewCase(c, r)
	if err != nil {
		return err
	}
	if err := s.recordView(c, st.Envelope.SessionID, r.tenant.ID, r.id, "case"); err != nil {
		return err
	}
	d := ReviewCaseDetail{ReviewCase: s.caseOf(st), Session: readmodel.DataGetBody(st, s.now(), true), History: []ReviewAction{}}
	for _, a := range st.Review.Actions {
		d.History = append(d.History, ReviewAction{Kind: a.Kind, ReviewerID: a.ReviewerID, At: readmodel.Timestamp(a.At), Detail: a.Detail})
	}
	d.Images = s.caseImages(st, r)
	d.Sources = caseSources(st)
	d.RetakeSteps = retakeSteps(st)
	if rd := st.Review.Decided; rd != nil {
		d.Decision = &ReviewerDecision{ReviewerID: rd.ReviewerID, Outcome: rd.Outcome, ReasonCode: rd.ReasonCode, Note: rd.Note, DecidedAt: readmodel.Timestamp(rd.DecidedAt)}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(d)
}

// awaitingRetake is the retake a case waits on: a reviewer sent a step back and the session
// is capturing it again, or processing it before the case is reopened. Nil otherwise.
func awaitingRetake(st *schemas.SessionState) *schemas.ReviewRetake {
	if st.Review == nil || st.Review.Retake == nil || (st.Status != schemas.StatusCapturing && st.Status != schemas.StatusProcessing) {
		return nil
	}
	return st.Review.Retake
}

// retakeSteps lists the steps a reviewer may send back to the person: the session's
// required steps it captured (the capture page asks for required steps only).
func retakeSteps(st *schemas.SessionState) []string {
	out := []string{}
	for _, step := range st.Steps {
		if slices.ContainsFunc(st.Captures, func(cp schemas.StepCapture) bool { return cp.Step == step }) {
			out = append(out, step)
		}
	}
	return out
}

// caseSources lists what each source of the session read.
func caseSources(st *schemas.SessionState) []ReviewSource {
	out := []ReviewSource{}
	fields := func(fs []schemas.Field) map[string]string {
		m := make(map[string]string, len(fs))
		for _, f := range fs {
			m[f.Name] = f.Value
		}
		return m
	}
	for _, d := range st.Documents {
		if len(d.Fields) > 0 {
			out = append(out, ReviewSource{Source: "ocr:" + d.Step, Fields: fields(d.Fields)})
		}
		if d.MRZ != nil && len(d.MRZ.Fields) > 0 {
			out = append(out, ReviewSource{Source: "mrz:" + d.Step, Fields: d.MRZ.Fields})
		}
	}
	if ch := st.Chip; ch != nil {
		if len(ch.Fields) > 0 {
			out = append(out, ReviewSource{Source: "chip", Fields: fields(ch.Fields)})
		}
		if ch.MRZ != nil && len(ch.MRZ.Fields) > 0 {
			out = append(out, ReviewSource{Source: "chip_mrz", Fields: ch.MRZ.Fields})
		}
	}
	return out
}

// claimCase answers POST /v1/review/cases/{id}/claim: the case is the caller's for
// ReviewClaimTTL (claiming it again renews it); 409 case_claimed while another reviewer
// holds it, case_decided once decided.
func (s *Server) claimCase(c *fiber.Ctx) error {
	r, err := s.authenticateReviewer(c)
	if err != nil {
		return err
	}
	st, err := s.actionableCase(c, r, false)
	if err != nil {
		return err
	}
	env := s.envelope(st.Envelope.SessionID, r.tenant.ID)
	until := env.OccurredAt.Add(ReviewClaimTTL)
	after, err := s.reviewAction(c, schemas.ReviewEvent{Envelope: env, Claimed: &schemas.ReviewClaimed{ReviewerID: r.id, Until: until}})
	if err != nil || after == nil {
		return err
	}
	return c.JSON(s.caseOf(after))
}

// releaseCase answers POST /v1/review/cases/{id}/release: 204 once the caller's claim is
// given back; 409 case_not_claimed when the caller holds none.
func (s *Server) releaseCase(c *fiber.Ctx) error {
	r, err := s.authenticateReviewer(c)
	if err != nil {
		return err
	}
	st, err := s.actionableCase(c, r, true)
	if err != nil {
		return err
	}
	env := s.envelope(st.Envelope.SessionID, r.tenant.ID)
	after, err := s.reviewAction(c, schemas.ReviewEvent{Envelope: env, Released: &schemas.ReviewReleased{ReviewerID: r.id}})
	if err != nil || after == nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// reviewReason is the part of a reviewer's decision or retake request that says why.
type reviewReason struct {
	ReasonCode string  `json:"reason_code"`
	Note       *string `json:"note"`
}

// reviewDecision is the body of POST /v1/review/cases/{id}/decision.
type reviewDecision struct {
	Outcome string `json:"outcome"`
	reviewReason
}

// readReviewAction authenticates the reviewer (before the body is read), then reads the
// JSON body into req and checks the reason it holds (why).
func (s *Server) readReviewAction(c *fiber.Ctx, req any, why *reviewReason) (reviewer, error) {
	r, err := s.authenticateReviewer(c)
	if err != nil {
		return reviewer{}, err
	}
	if err := decodeJSONBody(c, DefaultMaxJSONBytes, req); err != nil {
		return reviewer{}, err
	}
	if !reasonCodePattern.MatchString(why.ReasonCode) {
		return reviewer{}, invalidRequest("reason_code must be 1 to 64 characters of [a-z0-9_]")
	}
	return r, checkText("note", why.Note, 2000)
}

// decideCase answers POST /v1/review/cases/{id}/decision with the caller holding the
// claim: 200 with the session's final status once the decision group decided it, 202 while
// the decision is on its way.
func (s *Server) decideCase(c *fiber.Ctx) error {
	var req reviewDecision
	r, err := s.readReviewAction(c, &req, &req.reviewReason)
	if err != nil {
		return err
	}
	if req.Outcome != schemas.StatusVerified && req.Outcome != schemas.StatusRejected {
		return invalidRequest("outcome must be verified or rejected")
	}
	st, err := s.actionableCase(c, r, true)
	if err != nil {
		return err
	}
	env := s.envelope(st.Envelope.SessionID, r.tenant.ID)
	ev := schemas.ReviewEvent{Envelope: env, Decided: &schemas.ReviewDecided{ReviewerID: r.id, Outcome: req.Outcome, ReasonCode: req.ReasonCode, Note: req.Note}}
	after, err := s.reviewAction(c, ev)
	if err != nil || after == nil {
		return err
	}
	// The decision group decides the session from the reviewed snapshot: wait for it.
	ctx, cancel := context.WithTimeout(c.UserContext(), reviewWait)
	defer cancel()
	final, err := s.cfg.Sessions.Wait(ctx, st.Envelope.SessionID, func(st *schemas.SessionState) bool {
		return st == nil || st.Decision != nil
	})
	if err != nil || final == nil || final.Decision == nil {
		return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"session_id": st.Envelope.SessionID, "status": schemas.StatusProcessing})
	}
	return c.JSON(fiber.Map{"session_id": st.Envelope.SessionID, "status": final.Status, "decided_by": final.Decision.DecidedBy})
}

var reasonCodePattern = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// reviewRetake is the body of POST /v1/review/cases/{id}/retake.
type reviewRetake struct {
	Step string `json:"step"`
	reviewReason
}

// retakeCase answers POST /v1/review/cases/{id}/retake with the caller holding the claim:
// the person is asked to take one captured step again. The session goes back to capturing
// that step until now + ReviewRetakeWindow (or its later expiry), the claim is released,
// the integrator gets an ekyc.session.retake_requested webhook, and the case returns to the
// queue once the step is taken again. 200 {session_id, status: capturing, step,
// expires_at}; 422 for a step that is not a required step it captured; 409 retake_limit after
// schemas.MaxReviewRetakes retakes.
func (s *Server) retakeCase(c *fiber.Ctx) error {
	var req reviewRetake
	r, err := s.readReviewAction(c, &req, &req.reviewReason)
	if err != nil {
		return err
	}
	st, err := s.actionableCase(c, r, true)
	if err != nil {
		return err
	}
	if !slices.Contains(retakeSteps(st), req.Step) {
		return invalidRequest("step must be a required step the session captured")
	}
	if st.Review.Retakes >= schemas.MaxReviewRetakes {
		return errRetakeLimit()
	}
	env := s.envelope(st.Envelope.SessionID, r.tenant.ID)
	expires := env.OccurredAt.Add(ReviewRetakeWindow)
	ev := schemas.ReviewEvent{Envelope: env, Retake: &schemas.ReviewRetakeRequested{
		ReviewerID: r.id, Step: req.Step, ReasonCode: req.ReasonCode, Note: req.Note, ExpiresAt: expires,
	}}
	after, err := s.reviewAction(c, ev)
	if err != nil || after == nil {
		return err
	}
	return c.JSON(fiber.Map{"session_id": st.Envelope.SessionID, "status": readmodel.EffectiveStatus(after, s.now()), "step": req.Step, "expires_at": readmodel.Timestamp(after.ExpiresAt)})
}

func errRetakeLimit() *apiError {
	return problemf(fiber.StatusConflict, CodeRetakeLimit, "the person was asked to retake steps %d times already: decide the case", schemas.MaxReviewRetakes)
}

// recordView writes the audit record of a reviewer's view of a session's personal data (a
// schemas.ReviewViewed on ekyc.reviews.v1, which lands in ClickHouse's review_actions)
// before the data is served: a view that cannot be recorded is not served (503).
func (s *Server) recordView(c *fiber.Ctx, sessionID, tenantID, reviewerID, what string) error {
	ev := schemas.ReviewEvent{Envelope: s.envelope(sessionID, tenantID), Viewed: &schemas.ReviewViewed{ReviewerID: reviewerID, What: what}}
	out, err := s.output(schemas.TopicReviews, sessionID, ev)
	if err != nil {
		return err
	}
	return s.produce(c, out)
}

// actionableCase loads the case of the path for r, refused as caseOpen says.
func (s *Server) actionableCase(c *fiber.Ctx, r reviewer, mustHold bool) (*schemas.SessionState, error) {
	st, err := s.reviewCase(c, r)
	if err != nil {
		return nil, err
	}
	return st, s.caseOpen(st, r, mustHold)
}

// caseOpen refuses an action on a case that cannot take it: decided or closed (409
// case_decided), waiting for the person to take a step again (409 case_awaiting_retake),
// held by another reviewer (409 case_claimed), or, when mustHold, not held by r
// (409 case_not_claimed).
func (s *Server) caseOpen(st *schemas.SessionState, r reviewer, mustHold bool) error {
	rv := st.Review
	switch {
	case st.Status == schemas.StatusReview && rv.Decided == nil: // open: see below
	case awaitingRetake(st) != nil:
		return problemf(fiber.StatusConflict, CodeCaseAwaitingRetake, "the person is taking %s again: the case returns to the queue once they have", rv.Retake.Step)
	default:
		return problem(fiber.StatusConflict, CodeCaseDecided, "the case is decided or closed")
	}
	held := rv.ClaimedBy != nil && rv.ClaimExpiresAt != nil && s.now().Before(*rv.ClaimExpiresAt)
	switch {
	case held && *rv.ClaimedBy != r.id:
		return problemf(fiber.StatusConflict, CodeCaseClaimed, "the case is claimed by %s until %s", *rv.ClaimedBy, readmodel.Timestamp(*rv.ClaimExpiresAt))
	case mustHold && !held:
		return errNotClaimed()
	}
	return nil
}

func errNotClaimed() *apiError {
	return problem(fiber.StatusConflict, CodeCaseNotClaimed, "claim the case first (POST .../claim)")
}

// reviewAction produces ev and waits until the session view shows the session group's
// answer to it: the action of ev's event in the case's history. It returns the state when
// the action was granted; a refused action is answered 409 with the refusal's code; a
// session erased meanwhile 404; one no longer in review (decided, cancelled: the action is
// dropped) 409 case_decided. When the wait ends first it answers 202 itself (nil state):
// the action is recorded and will be ordered.
func (s *Server) reviewAction(c *fiber.Ctx, ev schemas.ReviewEvent) (*schemas.SessionState, error) {
	out, err := s.output(schemas.TopicReviews, ev.Envelope.SessionID, ev)
	if err != nil {
		return nil, err
	}
	if err := s.produce(c, out); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), reviewWait)
	defer cancel()
	var action *schemas.ReviewAction
	st, err := s.cfg.Sessions.Wait(ctx, ev.Envelope.SessionID, func(st *schemas.SessionState) bool {
		if st == nil || st.Review == nil {
			return true
		}
		if i := slices.IndexFunc(st.Review.Actions, func(a schemas.ReviewAction) bool { return a.EventID == ev.Envelope.EventID }); i >= 0 {
			action = &st.Review.Actions[i]
			return true
		}
		return st.Status != schemas.StatusReview // decided or cancelled: the action is dropped
	})
	switch {
	case err != nil:
		return nil, c.Status(fiber.StatusAccepted).JSON(fiber.Map{"session_id": ev.Envelope.SessionID, "status": "recorded"})
	case st == nil || st.Review == nil:
		return nil, errCaseNotFound()
	case action == nil:
		return nil, problem(fiber.StatusConflict, CodeCaseDecided, "the case is decided")
	case action.Kind == schemas.ReviewActionRefused:
		return nil, refusal(action.Detail)
	}
	return st, nil
}

// refusal is the problem of an action the session group refused, from the code its detail
// starts with (schemas.ReviewRefused*).
func refusal(detail *string) error {
	var code string
	if detail != nil {
		code, _, _ = strings.Cut(*detail, ":")
	}
	switch code {
	case schemas.ReviewRefusedClaimed:
		return problem(fiber.StatusConflict, CodeCaseClaimed, "another reviewer claimed the case first")
	case schemas.ReviewRefusedDecided:
		return problem(fiber.StatusConflict, CodeCaseDecided, "the case is decided")
	case schemas.ReviewRefusedOutcome:
		return invalidRequest("outcome must be verified or rejected")
	case schemas.ReviewRefusedStep:
		return invalidRequest("step must be a required step the session captured")
	case schemas.ReviewRefusedRetakes:
		return errRetakeLimit()
	}
	return errNotClaimed()
}
