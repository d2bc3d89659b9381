package edge

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idstream/idstream/internal/tenant"
	"github.com/idstream/idstream/readmodel"
	"github.com/idstream/idstream/schemas"
)

// ConsentPurposeEKYC is the consent purpose Session Init checks when a tenant requires consent.
const ConsentPurposeEKYC = "ekyc_identity_verification"

// idempotencyWindow is how long an Idempotency-Key returns the same session.
const idempotencyWindow = 24 * time.Hour

// sessionInitRequest is the Session Init body. Its JSON form (unset fields omitted) is what
// the idempotency hash covers, so key order and whitespace do not matter.
type sessionInitRequest struct {
	Flow          string  `json:"flow"`
	ReferenceID   *string `json:"reference_id,omitempty"`
	TrackingID    *string `json:"tracking_id,omitempty"`
	WebhookURL    *string `json:"webhook_url,omitempty"`
	Locale        *string `json:"locale,omitempty"`
	DataRetention *string `json:"data_retention,omitempty"`
}

// SessionInitResponse is the 201 body of Session Init.
type SessionInitResponse struct {
	SessionID string   `json:"session_id"`
	ExpiresIn int64    `json:"expires_in"`
	ExpiresAt string   `json:"expires_at"`
	Flow      string   `json:"flow"`
	Steps     []string `json:"steps"`
	SDKToken  string   `json:"sdk_token"`
	Nonce     string   `json:"nonce"`
	// CaptureURL is the hosted capture page of the session, its sdk_token in the address:
	// send the person there (or open it in a web view) when there is no app of your own.
	CaptureURL string `json:"capture_url"`
}

func (s *Server) createSession(c *fiber.Ctx) error {
	p, err := s.authenticate(c, false)
	if err != nil {
		return err
	}
	var req sessionInitRequest
	if err := decodeJSONBody(c, DefaultMaxJSONBytes, &req); err != nil {
		return err
	}
	if err := s.validateInit(p.tenant, &req); err != nil {
		return err
	}
	fl, ok := s.cfg.Flows.Get(req.Flow)
	if !ok || !p.tenant.AllowsFlow(req.Flow) {
		return problem(fiber.StatusUnprocessableEntity, CodeInvalidFlow, "unknown flow or flow not allowed for this tenant")
	}
	if err := s.checkConsent(c.UserContext(), p.tenant, req.TrackingID); err != nil {
		return err
	}

	now := s.now().UTC().Truncate(time.Millisecond)
	sessionID := randomID("ses_")
	var reqHash *string
	if key := c.Get("Idempotency-Key"); key != "" {
		if len(key) > 255 || !printableASCII(key) {
			return invalidRequest("Idempotency-Key must be 1 to 255 printable ASCII characters")
		}
		canonical, err := json.Marshal(req)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(canonical)
		h := hex.EncodeToString(sum[:])
		reqHash = &h
		sessionID = s.idempotentSessionID(p.tenant.ID, key)
		prev, found, err := s.cfg.Sessions.Get(c.UserContext(), sessionID)
		if err != nil {
			s.log.Error("edge: session view", "request_id", requestID(c), "err", err)
			return errUnavailable()
		}
		if found {
			if prev.RequestSHA256 == nil || *prev.RequestSHA256 != h || !now.Before(prev.CreatedAt.Add(idempotencyWindow)) {
				return problem(fiber.StatusConflict, CodeIdempotencyKeyReused, "this Idempotency-Key was used with another request or more than 24 hours ago")
			}
			return c.Status(fiber.StatusCreated).JSON(s.initResponse(c, prev, p.tenant.ID))
		}
	}

	if err := s.shedSession(); err != nil {
		return err
	}
	ttl := time.Duration(p.tenant.SessionTTLSeconds) * time.Second
	if ttl <= 0 {
		ttl = tenant.DefaultSessionTTLSeconds * time.Second
	}
	opened := &schemas.SessionOpened{
		Flow:          fl.Name,
		Steps:         fl.Steps,
		ReferenceID:   req.ReferenceID,
		TrackingID:    req.TrackingID,
		WebhookURL:    req.WebhookURL,
		Locale:        valueOr(req.Locale, "vi"),
		DataRetention: valueOr(req.DataRetention, p.tenant.DataRetention),
		CreatedAt:     now,
		ExpiresAt:     now.Add(ttl),
		Nonce:         s.sessionNonce(sessionID),
		RequestSHA256: reqHash,
	}
	ev := schemas.SessionEvent{Envelope: s.envelope(sessionID, p.tenant.ID), Opened: opened}
	out, err := s.output(schemas.TopicSessions, sessionID, ev)
	if err != nil {
		return err
	}
	if err := s.produce(c, out); err != nil {
		return err
	}
	if s.cfg.Admission != nil {
		s.cfg.Admission.Admitted(len(fl.Steps))
	}
	st := openedState(ev)
	if rec, ok := s.cfg.Sessions.(SessionRecorder); ok {
		rec.Opened(st)
	}
	return c.Status(fiber.StatusCreated).JSON(s.initResponse(c, st, p.tenant.ID))
}

// openedState is the state the session group folds from a SessionOpened.
func openedState(ev schemas.SessionEvent) *schemas.SessionState {
	o := ev.Opened
	return &schemas.SessionState{
		Envelope: ev.Envelope, Version: 1, Status: schemas.StatusOpen,
		Flow: o.Flow, Steps: o.Steps, ReferenceID: o.ReferenceID, TrackingID: o.TrackingID,
		WebhookURL: o.WebhookURL, Locale: o.Locale, DataRetention: o.DataRetention,
		Nonce: o.Nonce, CreatedAt: o.CreatedAt, ExpiresAt: o.ExpiresAt, UpdatedAt: o.CreatedAt,
		RequestSHA256: o.RequestSHA256,
	}
}

func (s *Server) initResponse(c *fiber.Ctx, st *schemas.SessionState, tenantID string) SessionInitResponse {
	steps := st.Steps
	if steps == nil {
		steps = []string{}
	}
	token := s.sdkToken(st.Envelope.SessionID, tenantID, st.ExpiresAt)
	return SessionInitResponse{
		SessionID:  st.Envelope.SessionID,
		ExpiresIn:  int64(st.ExpiresAt.Sub(st.CreatedAt) / time.Second),
		ExpiresAt:  readmodel.Timestamp(st.ExpiresAt),
		Flow:       st.Flow,
		Steps:      steps,
		SDKToken:   token,
		Nonce:      base64.StdEncoding.EncodeToString(s.sessionNonce(st.Envelope.SessionID)),
		CaptureURL: s.captureURL(c, st.Envelope.SessionID, token),
	}
}

func (s *Server) validateInit(t *tenant.Tenant, req *sessionInitRequest) error {
	if req.Flow == "" {
		return invalidRequest("flow is required")
	}
	if err := checkText("reference_id", req.ReferenceID, 128); err != nil {
		return err
	}
	if err := checkText("tracking_id", req.TrackingID, 128); err != nil {
		return err
	}
	if req.Locale != nil && *req.Locale != "vi" && *req.Locale != "en" {
		return invalidRequest("locale must be vi or en")
	}
	if r := req.DataRetention; r != nil && *r != tenant.RetentionService && *r != tenant.RetentionIntegrator {
		return invalidRequest("data_retention must be service or integrator")
	}
	if req.WebhookURL != nil {
		if err := checkWebhookURL(*req.WebhookURL, t.AllowPrivateWebhooks); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) checkConsent(ctx context.Context, t *tenant.Tenant, trackingID *string) error {
	if !t.RequireConsent {
		return nil
	}
	refused := problem(fiber.StatusUnprocessableEntity, CodeConsentRequired, "no granted consent for identity verification on this tracking_id")
	if trackingID == nil || s.cfg.ConsentChecker == nil {
		return refused
	}
	ok, err := s.cfg.ConsentChecker.Granted(ctx, t.ID, *trackingID, ConsentPurposeEKYC)
	if err != nil {
		s.log.Error("edge: consent check failed", "tenant_id", t.ID, "err", err)
		return errUnavailable()
	}
	if !ok {
		return refused
	}
	return nil
}

// loadSession returns the state of the session named in the path, as visible to p: an
// unknown id, another tenant's session or another session than the sdk_token's → 404.
func (s *Server) loadSession(c *fiber.Ctx, p principal) (*schemas.SessionState, error) {
	id := c.Params("session_id")
	if !validID(id, "ses_") || (p.isSDK() && id != p.sdkSessID) {
		return nil, errSessionNotFound()
	}
	st, found, err := s.cfg.Sessions.Get(c.UserContext(), id)
	if err != nil {
		s.log.Error("edge: session view", "request_id", requestID(c), "err", err)
		return nil, errUnavailable()
	}
	if (!found || st == nil) && p.isSDK() && s.justOpened(p) && !s.erased(id) {
		if st, err = s.awaitOpened(c, id); err != nil {
			return nil, err
		}
		found = true
	}
	if !found || st == nil || st.Envelope.TenantID != p.tenant.ID {
		return nil, errSessionNotFound()
	}
	return st, nil
}

// Waiting for the state of a session the caller's sdk_token proves was opened: how long a
// request waits, how long after Session Init the session may be missing from the view, and
// the Retry-After of the 503 when the wait ends.
const (
	openedStateWait   = 5 * time.Second
	openedStateWindow = 10 * time.Minute
	openedStateRetry  = 2
)

// erased reports whether the view knows the session was erased.
func (s *Server) erased(id string) bool {
	e, ok := s.cfg.Sessions.(ErasedSessions)
	return ok && e.Erased(id)
}

// justOpened reports whether p's sdk_token was issued by Session Init within
// openedStateWindow (its expiry less the tenant's session TTL).
func (s *Server) justOpened(p principal) bool {
	ttl := time.Duration(p.tenant.SessionTTLSeconds) * time.Second
	if ttl <= 0 {
		ttl = tenant.DefaultSessionTTLSeconds * time.Second
	}
	return s.now().Before(p.sdkExpiry.Add(-ttl).Add(openedStateWindow))
}

// awaitOpened waits for the state of a session that an sdk_token proves was opened but the
// view does not hold: Session Init answers only once the SessionOpened is acknowledged, so
// the state is on its way — another edge replica opened it, or this edge restarted before
// the session group folded it (the group may be restarting too). A 404 would tell the
// person's app that the session is gone; after openedStateWait it gets 503 with Retry-After
// instead. Found by idstream chaos: an upload right after a restart of dev got 404.
func (s *Server) awaitOpened(c *fiber.Ctx, id string) (*schemas.SessionState, error) {
	ctx, cancel := context.WithTimeout(c.UserContext(), openedStateWait)
	defer cancel()
	st, err := s.cfg.Sessions.Wait(ctx, id, func(st *schemas.SessionState) bool { return st != nil })
	if err != nil || st == nil {
		e := errUnavailable()
		e.retryAfter = openedStateRetry
		return nil, e
	}
	return st, nil
}

func (s *Server) getSession(c *fiber.Ctx) error {
	p, err := s.authenticate(c, true)
	if err != nil {
		return err
	}
	st, err := s.loadSession(c, p)
	if err != nil {
		return err
	}
	return c.JSON(readmodel.DataGetBody(st, s.now(), !p.isSDK()))
}

// SDKTokenResponse answers POST /v1/ekyc/sessions/{id}/sdk-token.
type SDKTokenResponse struct {
	SessionID  string `json:"session_id"`
	SDKToken   string `json:"sdk_token"`
	ExpiresAt  string `json:"expires_at"`
	Nonce      string `json:"nonce"`
	CaptureURL string `json:"capture_url"`
}

// renewSDKToken answers POST /v1/ekyc/sessions/{id}/sdk-token (API key): a fresh sdk_token
// and capture_url for a session the person can still capture (open or capturing, not
// expired), valid until the session's expiry as it is now. The integrator asks for one
// when the first token is lost or lapsed, notably after a reviewer's retake request
// (webhook ekyc.session.retake_requested), which moves the session's expiry on: the token
// of Session Init expires with the session's first expiry. 409 session_closed for a session
// with nothing to capture (processing, decided, cancelled; one in review is given a few
// seconds to show a retake first), 410 session_expired for one expired.
func (s *Server) renewSDKToken(c *fiber.Ctx) error {
	p, err := s.authenticate(c, false)
	if err != nil {
		return err
	}
	st, err := s.loadSession(c, p)
	if err != nil {
		return err
	}
	if st.Status == schemas.StatusReview {
		// Only a session in review can be sent back to the person, and the retake webhook
		// and this view follow the same snapshots: a view a moment behind still shows the
		// session in review. Give it that moment.
		ctx, cancel := context.WithTimeout(c.UserContext(), reviewWait)
		defer cancel()
		if later, err := s.cfg.Sessions.Wait(ctx, st.Envelope.SessionID, func(st *schemas.SessionState) bool {
			return st == nil || readmodel.EffectiveStatus(st, s.now()) != schemas.StatusProcessing
		}); err == nil {
			if later == nil {
				return errSessionNotFound()
			}
			st = later
		}
	}
	switch status := readmodel.EffectiveStatus(st, s.now()); status {
	case schemas.StatusOpen, schemas.StatusCapturing:
	case schemas.StatusExpired:
		return problem(fiber.StatusGone, CodeSessionExpired, "the session has expired")
	default:
		return problemf(fiber.StatusConflict, CodeSessionClosed, "the session is %s: there is nothing left to capture", status)
	}
	// The token, nonce and link Session Init gives, for the session's expiry as it is now.
	init := s.initResponse(c, st, p.tenant.ID)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusCreated).JSON(SDKTokenResponse{
		SessionID: init.SessionID, SDKToken: init.SDKToken, ExpiresAt: init.ExpiresAt, Nonce: init.Nonce, CaptureURL: init.CaptureURL,
	})
}

// deleteSession erases a session: SessionErased is produced (the session group tombstones
// the state), then the session's blobs are deleted. A repeated DELETE answers 204 until the
// tombstone reaches the view, then 404 session_not_found; either way it deletes any blob
// left under the caller's own "<tenant>/<session>/" prefix.
func (s *Server) deleteSession(c *fiber.Ctx) error {
	p, err := s.authenticate(c, false)
	if err != nil {
		return err
	}
	id := c.Params("session_id")
	st, err := s.loadSession(c, p)
	if err != nil {
		if ae, ok := toAPIError(err); ok && ae.code == CodeSessionNotFound && validID(id, "ses_") {
			s.deleteBlobs(c, p.tenant.ID, id)
		}
		return err
	}
	ev := schemas.SessionEvent{
		Envelope: s.envelope(st.Envelope.SessionID, p.tenant.ID),
		Erased:   &schemas.SessionErased{Reason: "erasure_requested"},
	}
	out, err := s.output(schemas.TopicSessions, st.Envelope.SessionID, ev)
	if err != nil {
		return err
	}
	if err := s.produce(c, out); err != nil {
		return err
	}
	if err := s.deleteBlobs(c, p.tenant.ID, st.Envelope.SessionID); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) deleteBlobs(c *fiber.Ctx, tenantID, sessionID string) error {
	if err := s.cfg.Blobs.DeletePrefix(c.UserContext(), tenantID+"/"+sessionID+"/"); err != nil {
		s.log.Error("edge: delete session blobs", "request_id", requestID(c), "session_id", sessionID, "err", err)
		return errUnavailable()
	}
	return nil
}

func valueOr(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
